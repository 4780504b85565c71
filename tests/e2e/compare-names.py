#!/usr/bin/env python3
"""Compare the function names of every eu-stacktrace output format with
perf script's, exactly (demangled as perf shows them, with perf's symbol
versions such as "__libc_start_main@@GLIBC_2.34").

The oracle is the text of

  perf script -F comm,pid,tid,time,ip,sym,symoff,dso --no-inline --ns

(with --no-demangle, or -v for parameter lists, to match ours).  Only the
samples that perf unwound to the outermost frame (_start, clone3) count:
perf's names for the others are not an oracle.

  json, text   per sample (matched by tid and time): every user frame's
               name equals perf's, and for JSON also the address, module
               and offset (compare-perf-script.py's rule, without its
               stripping of "@VERSION");
  folded, svg, pprof
               aggregated: the multiset of (comm, outermost .. innermost
               names) stacks of perf's complete samples is found in ours;
               the rate is the share of those samples whose stack ours has.
               SVG stacks are rebuilt from the frames of a --minwidth 0
               flame graph; pprof's from `go tool pprof -traces`.
  raw          (--raw-of JSON --raw-perf-script P) the raw_symbol of each
               frame of a JSON output made with demangling equals the name
               of the --no-demangle oracle P: JSON keeps the mangled name
               beside the demangled one.  Where perf's two runs chose
               different aliases of one function (perf picks the longest
               name, and "<usize as Display>::fmt" is longer than "<u64 as
               Display>::fmt" only demangled), the frame counts when ours
               has the address, offset and demangled name of --perf-script
               and P's name starts at the same address: it is reported.
  pprof system_name
               (--pprof-raw F --raw-perf-script P) each function of the pprof
               profile, as `go tool pprof -raw` prints it, has the name and
               system_name that perf script and P give the same frame:
               the rate is the share of the frames of the profile's
               samples whose (name, system_name) is such a pair of perf's;
               and some functions of a C++ or Rust program have a mangled
               system_name.

Each check prints one TAP line and its rate.  Usage:

  compare-names.py --perf-script P --name N --tap-start K --min-rate R
                   [--json F] [--text F] [--folded F] [--svg F]
                   [--pprof F --go GO --home H] [--raw-of F --raw-perf-script P]
                   [--pprof-raw F --raw-perf-script P --go GO --home H]
"""

import argparse
import importlib.util
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "flamegraph"))


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


cps = load("compare_perf_script", os.path.join(HERE, "compare-perf-script.py"))
# Names exactly as printed: "@VERSION" suffixes are part of what we check.
cps.strip_version = lambda name: name
check_svg = load("check_svg", os.path.join(HERE, "..", "flamegraph", "check-svg.py"))
check_pprof = load("check_pprof", os.path.join(HERE, "..", "flamegraph", "check-pprof.py"))

TEXT_HEADER_RE = re.compile(r"^(?P<comm>.*?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+"
                            r"(?P<sec>\d+)\.(?P<frac>\d+)\s")
TEXT_FRAME_RE = re.compile(r"^\t\s*[0-9a-f]+ (?P<sym>.*) \((?P<dso>[^()]*)\)$")


def parse_text(path):
    """Our -f text: [(tid, time, [names innermost first])]."""
    out, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("\t("):
                continue
            if not line[0].isspace():
                m = TEXT_HEADER_RE.match(line)
                if not m:
                    raise ValueError("%s: not a sample header: %r" % (path, line))
                frac = (m.group("frac") + "000000000")[:9]
                cur = (int(m.group("tid")), int(m.group("sec")) * 10**9 + int(frac), [])
                out.append(cur)
                continue
            m = TEXT_FRAME_RE.match(line)
            if m is None or cur is None:
                continue      # "(unwind stopped: ...)" and the like
            sym = m.group("sym")
            so = cps.SYMOFF_RE.match(sym)
            if so:
                sym = so.group("name")
            cur[2].append(None if sym == "[unknown]" else sym)
    return out


def unknown_name(module):
    """A frame without a symbol in aggregated outputs: "[FILE]", as
    stackcollapse-perf.pl names perf script's "[unknown] (/path/FILE)"."""
    if module in (None, "", "[unknown]"):
        return "[unknown]"
    return "[%s]" % os.path.basename(module)


def perf_stack(p):
    """(comm, outermost .. innermost) of a perf sample, as folded names."""
    return (check_svg.escape(p.comm),) + tuple(
        check_svg.escape(f.symbol if f.symbol is not None else unknown_name(f.module))
        for f in reversed(p.frames))


def aggregated_rate(perf_complete, ours):
    want = Counter(perf_stack(p) for p in perf_complete)
    matched = sum(min(n, ours.get(k, 0)) for k, n in want.items())
    missing = [(k, n - ours.get(k, 0)) for k, n in want.items() if ours.get(k, 0) < n]
    missing.sort(key=lambda kv: -kv[1])
    return matched, missing


def svg_stacks(path):
    frames, _by_depth, problems = check_svg.read_svg(path)
    if problems:
        raise ValueError("%s: %s" % (path, problems[0]))
    children = Counter()
    for f in frames:
        if f.parent is not None:
            children[id(f.parent)] += f.s
    stacks = Counter()
    for f in frames:
        if f.d == 0:
            continue
        own = f.s - children[id(f)]
        if own <= 0:
            continue
        path_names, a = [], f
        while a is not None and a.d > 0:
            path_names.append(a.name)
            a = a.parent
        stacks[tuple(reversed(path_names))] += own
    return stacks


# A location line of `go tool pprof -raw` (profile.Location's string):
# "NAME FILE:LINE[:COLUMN] s=START", then "(SYSTEM_NAME)" when it differs.
RAW_LINE_RE = re.compile(r"^(?P<name>.*) (?P<file>\S*):(?P<line>-?\d+)(?::-?\d+)? "
                         r"s=-?\d+(?:\((?P<sys>.*)\))?$")
RAW_LOC_RE = re.compile(r"^\s*(?P<id>\d+): 0x[0-9a-f]+ (?:M=\d+ )?(?:\[F\] )?(?P<rest>.*)$")


def pprof_raw(text):
    """(samples, locations) of `go tool pprof -raw`: samples as
    (count, [location ids]), locations as {id: [(name, system_name)]}
    (one per line of the location; inlined functions first)."""
    samples, locs, part, cur = [], {}, None, None
    for line in text.split("\n"):
        if line.startswith("Samples:"):
            part = "samples"
            continue
        if line.startswith("Locations"):
            part = "locations"
            continue
        if line.startswith("Mappings"):
            part = None
            continue
        if part == "samples" and ":" in line:
            values, _, ids = line.partition(":")
            try:
                count = int(values.split()[0])
                samples.append((count, [int(i) for i in ids.split()]))
            except (ValueError, IndexError):
                continue
        elif part == "locations":
            m = RAW_LOC_RE.match(line)
            rest = None
            if m:
                cur = int(m.group("id"))
                locs[cur] = []
                rest = m.group("rest")
            elif line.startswith("             ") and cur is not None:
                rest = line.strip()
            if rest is None or rest == "":
                continue
            fm = RAW_LINE_RE.match(rest)
            if fm:
                name = fm.group("name")
                locs[cur].append((name, fm.group("sys") if fm.group("sys") is not None
                                  else name))
    return samples, locs


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perf-script", required=True)
    ap.add_argument("--name", default="workload")
    ap.add_argument("--tap-start", type=int, default=1)
    ap.add_argument("--min-rate", type=float, default=99.5)
    ap.add_argument("--min-samples", type=int, default=500)
    ap.add_argument("--json")
    ap.add_argument("--text")
    ap.add_argument("--folded")
    ap.add_argument("--svg")
    ap.add_argument("--pprof")
    ap.add_argument("--go", default="go")
    ap.add_argument("--home")
    ap.add_argument("--raw-of")
    ap.add_argument("--pprof-raw")
    ap.add_argument("--raw-perf-script")
    ap.add_argument("--what", default="", help="words added to each TAP line")
    args = ap.parse_args(argv)

    n = [args.tap_start]
    failed = [False]

    def diag(msg):
        for line in str(msg).split("\n"):
            print("# " + line)

    def tap(ok, desc):
        print("%s %d - %s: %s" % ("ok" if ok else "not ok", n[0], args.name, desc))
        n[0] += 1
        failed[0] |= not ok

    def verdict(fmt, matched, total, shown):
        rate = 100.0 * matched / total if total else 0.0
        diag("%s: %s%s: %d of %d complete samples have perf's names (%.2f%%)"
             % (args.name, fmt, args.what, matched, total, rate))
        for s in shown[:3]:
            diag("  " + s)
        tap(total >= args.min_samples and rate >= args.min_rate,
            "%s%s frame names equal perf script's in %.2f%% of %d complete samples "
            "(need %.1f%% of at least %d)" % (fmt, args.what, rate, total, args.min_rate,
                                             args.min_samples))

    perf = cps.parse_perf_script(args.perf_script)
    complete = [p for p in perf if cps.complete(p.frames)]
    by_key = {(p.tid, p.time): p for p in complete}

    def per_sample(fmt, ours, names_of, equal):
        matched, total, shown = 0, 0, []
        for o in ours:
            p = by_key.get(names_of(o)[0])
            if p is None:
                continue
            total += 1
            if equal(o, p):
                matched += 1
            elif len(shown) < 3:
                shown.append("%s: perf %s | ours %s" % (
                    p.describe(), [f.symbol for f in p.frames][:8], names_of(o)[1][:8]))
        verdict(fmt, matched, total, shown)

    if args.json:
        ours = cps.parse_ours(args.json)
        per_sample("json", ours, lambda o: ((o.tid, o.time), [f.symbol for f in o.frames]),
                   lambda o, p: cps.chains_equal(o.frames, p.frames))
    if args.raw_of:
        import json
        raw_perf = {(p.tid, p.time): p for p in cps.parse_perf_script(args.raw_perf_script)}
        ours = []
        with open(args.raw_of, encoding="utf-8") as f:
            for line in f:
                obj = json.loads(line)
                names = [fr.get("raw_symbol") for fr in obj["frames"]
                         if not cps.is_kernel(int(fr["address"], 16), fr.get("module") or "")]
                ours.append(((int(obj["tid"]), int(obj["time"])), names))
        ours_json = {(o.tid, o.time): o for o in cps.parse_ours(args.raw_of)}
        aliases = Counter()

        def raw_equal(o, p):
            rp = raw_perf.get(o[0])
            oj = ours_json.get(o[0])
            if rp is None or oj is None or len(rp.frames) != len(o[1]) \
               or not cps.chains_equal(oj.frames, p.frames):
                return False
            for name, fr, fd in zip(o[1], rp.frames, p.frames):
                if name == fr.symbol:
                    continue
                # Another alias: same address and offset, so the same start.
                if fr.addr == fd.addr and fr.offset == fd.offset and fr.offset is not None:
                    aliases["%s / perf --no-demangle %s" % (name, fr.symbol)] += 1
                    continue
                return False
            return True
        per_sample("json raw_symbol", ours, lambda o: o, raw_equal)
        for k, c in aliases.most_common(3):
            diag("  another alias of one function in %d frames: %s" % (c, k))
    if args.text:
        ours = parse_text(args.text)
        per_sample("text", ours, lambda o: ((o[0], o[1]), o[2]),
                   lambda o, p: o[2] == [f.symbol for f in p.frames])

    def aggregated(fmt, stacks):
        matched, missing = aggregated_rate(complete, stacks)
        verdict(fmt, matched, len(complete),
                ["perf's stack not in ours (%d): %s" % (c, ";".join(k)[:400])
                 for k, c in missing])

    if args.folded:
        aggregated("folded", check_svg.read_folded(args.folded))
    if args.svg:
        aggregated("svg", svg_stacks(args.svg))
    if args.pprof:
        rc, out, err = check_pprof.pprof(args.go, ["-traces", "-sample_index=samples"], args.pprof, args.home)
        if rc != 0:
            diag("go tool pprof -traces failed (%d): %s" % (rc, err[:400]))
            tap(False, "pprof frame names: go tool pprof -traces failed")
        else:
            stacks, _labels = check_pprof.parse_traces(out)
            aggregated("pprof", stacks)
    if args.pprof_raw:
        # perf's (name, --no-demangle name) of each frame of its complete
        # samples: the pairs a function's name and system_name must be.
        raw_perf = {(p.tid, p.time): p for p in cps.parse_perf_script(args.raw_perf_script)}
        pairs = set()
        for p in complete:
            rp = raw_perf.get((p.tid, p.time))
            if rp is None or len(rp.frames) != len(p.frames):
                continue
            for fd, fr in zip(p.frames, rp.frames):
                if fd.symbol is not None and fr.symbol is not None:
                    pairs.add((fd.symbol, fr.symbol))
        rc, out, err = check_pprof.pprof(args.go, ["-raw"], args.pprof_raw, args.home)
        if rc != 0:
            diag("go tool pprof -raw failed (%d): %s" % (rc, err[:400]))
            tap(False, "pprof system_name: go tool pprof -raw failed")
        else:
            samples, locs = pprof_raw(out)
            perf_names = {d for d, _ in pairs}
            matched = total = 0
            wrong = Counter()
            for count, ids in samples:
                for i in ids:
                    for fn in locs.get(i, []):
                        if fn[0] not in perf_names:
                            continue   # a frame perf's complete samples never name
                        total += count
                        if fn in pairs:
                            matched += count
                        else:
                            wrong["%s / system_name %s / perf --no-demangle %s" % (
                                fn[0], fn[1], sorted(r for d, r in pairs if d == fn[0])[:2])] += count
            mangled = {fn for fl in locs.values() for fn in fl if fn[0] != fn[1]}
            rate = 100.0 * matched / total if total else 0.0
            diag("%s: pprof system_name: %d of %d frames of the profile's samples have perf's "
                 "(name, --no-demangle name) (%.2f%%); %d functions with a system_name of "
                 "their own, e.g. %s" % (args.name, matched, total, rate, len(mangled),
                                         sorted(mangled)[:1]))
            for k, c in wrong.most_common(3):
                diag("  %d frames: %s" % (c, k))
            tap(total >= args.min_samples and rate >= args.min_rate and len(mangled) > 0,
                "pprof function name and system_name are perf script's and perf script "
                "--no-demangle's in %.2f%% of %d frames (need %.1f%%, and mangled "
                "system_names)" % (rate, total, args.min_rate))
    return 1 if failed[0] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
