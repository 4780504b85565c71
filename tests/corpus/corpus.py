#!/usr/bin/env python3
"""The tire-kicking corpus: real programs, recorded as a user would, unwound
by eu-stacktrace and by perf script (the independent oracle), compared
sample by sample, names demangled by each (ours by default, as perf).

Each workload is built or found, recorded with

  perf record -e cpu-clock -F 999 --call-graph dwarf,16384 -- PROGRAM

then unwound by `eu-stacktrace -f json` and by `perf script --no-inline
-F comm,pid,tid,time,ip,sym,symoff,dso --ns` (both timed, with
their peak RSS).  Samples are matched by (tid, time).  One table row per
program:

  samples        samples in the recording (perf script's)
  complete       samples unwound to the outermost frame (_start, clone3):
                 ours / perf's
  identical      of the samples perf unwound completely, those whose user
                 frames (file offset, file, symbol) equal ours
  extends        of the samples perf did not unwind completely, those where
                 ours holds all of perf's frames and more
  named          for the program's own file: frames perf names that ours
                 names the same
  exhausted      of our samples that are not complete, the share that says
                 "stack copy exhausted"
  time           our time / perf script's
  RSS            our peak RSS, MiB (perf script's)

perf script prints call-chain addresses as file offsets (pc - map start +
map offset); ours are ELF addresses, turned into file offsets through the
file's program headers.  Each workload states what it must show; the
result is TAP (one line per workload) followed by the table.
"""

import argparse
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location(
    "cps", os.path.join(HERE, "..", "e2e", "compare-perf-script.py"))
cps = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cps)

PERF_FIELDS = "comm,pid,tid,time,ip,sym,symoff,dso"
STACK = 16384
MAGICK_CORE = "/usr/lib/x86_64-linux-gnu/libMagickCore-6.Q16.so.6.0.0"


def log(msg):
    for line in str(msg).splitlines() or [""]:
        print("# " + line, flush=True)


def run(cmd, **kw):
    """Runs CMD; returns (seconds, peak RSS in KiB, returncode).  The RSS
    comes from GNU time: a child forked from this (large) Python process
    would count Python's pages in its own peak."""
    fd, rss_file = tempfile.mkstemp(prefix="eu-stacktrace-corpus-rss.")
    os.close(fd)
    t0 = time.monotonic()
    rc = subprocess.call(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, **kw)
    seconds = time.monotonic() - t0
    try:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        rss = 0
    os.unlink(rss_file)
    return seconds, rss, rc


# --- ELF addresses to file offsets -----------------------------------------

_phdrs = {}
_entries = {}


def load_segments(path):
    if path in _phdrs:
        return _phdrs[path]
    segs = None
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1:
                _entries[path], = struct.unpack_from("<Q", head, 24)
                phoff, = struct.unpack_from("<Q", head, 32)
                phentsize, phnum = struct.unpack_from("<HH", head, 54)
                f.seek(phoff)
                table = f.read(phentsize * phnum)
                segs = []
                for i in range(phnum):
                    (p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _,
                     _) = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
                    if p_type == 1:
                        segs.append((p_vaddr, p_offset, p_filesz, p_flags & 1))
    except OSError:
        pass
    _phdrs[path] = segs
    return segs


def file_offset(module, addr):
    segs = load_segments(module) if module.startswith("/") else None
    if not segs:
        return addr
    best = None
    for vaddr, offset, filesz, x in segs:
        if vaddr <= addr < vaddr + filesz and (best is None or x):
            best = addr - vaddr + offset
    return best if best is not None else addr


ANON = re.compile(r"^(//anon|\[anon.*\]|\[unknown\]|/tmp/perf-\d+\.map|"
                  r"/tmp/jit-\d+\.dump|\[heap\]|)$")


def normalize_anon(samples):
    """Anonymous memory (JIT code) is "//anon" to us and "[unknown]" or
    the JIT map's name to perf; names for it are another part of the
    issue: here only the address counts."""
    for s in samples:
        for f in s.frames:
            if ANON.match(f.module):
                f.module = "[anon]"


def complete(frames):
    """Unwound to the outermost frame: _start or clone3 by name, or, in a
    stripped program (Debian's xz, sqlite3, git have no .symtab), the
    unnamed code at the ELF entry point, which is _start."""
    if cps.complete(frames):
        return True
    if not frames or frames[-1].symbol is not None:
        return False
    f = frames[-1]
    if not load_segments(f.module) or f.module not in _entries:
        return False
    entry = file_offset(f.module, _entries[f.module])
    return 0 <= f.addr - entry < 0x30


def ours_in_file_offsets(samples):
    for s in samples:
        for f in s.frames:
            f.addr = file_offset(f.module, f.addr)


# --- one workload ----------------------------------------------------------

class Workload:
    def __init__(self, name, cmd, build=None, complete_min=None, names_min=None,
                 own=None, exhausted_min=None, cwd=None):
        self.name = name
        self.cmd = cmd                # list, may use {tmp}
        self.build = build            # shell command, may use {tmp} {src}
        self.complete_min = complete_min    # ours complete, % of samples
        self.names_min = names_min    # % of own-file frames named as perf
        self.own = own                # the program's own file (for names)
        self.exhausted_min = exhausted_min  # % of incomplete: exhausted
        self.cwd = cwd


def fmt(s, args):
    return s.format(**args)


def evaluate(w, perf, ours):
    by_key = {}
    for s in ours:
        by_key.setdefault((s.tid, s.time), []).append(s)
    pairs = []
    for p in perf:
        q = by_key.get((p.tid, p.time))
        if q:
            pairs.append((p, q.pop(0)))
    r = {"samples": len(perf), "matched": len(pairs)}
    ours_done = [o for p, o in pairs if complete(o.frames) and o.stop == "end"]
    perf_done = [p for p, o in pairs if complete(p.frames)]
    r["ours_complete"] = len(ours_done)
    r["perf_complete"] = len(perf_done)
    r["identical"] = sum(1 for p, o in pairs if complete(p.frames)
                         and cps.chains_equal(o.frames, p.frames))
    partial = [(p, o) for p, o in pairs if not complete(p.frames)]
    r["perf_partial"] = len(partial)
    r["extends"] = sum(1 for p, o in partial if len(o.frames) > len(p.frames)
                       and cps.chains_equal(o.frames[:len(p.frames)], p.frames))
    named = total = 0
    if w.own:
        for p, o in pairs:
            if len(o.frames) < len(p.frames) or not cps.chains_equal(
                    [cps.Frame(f.addr, f.module, None, None) for f in o.frames[:len(p.frames)]],
                    [cps.Frame(f.addr, f.module, None, None) for f in p.frames]):
                # Compare names only where both have the same frames.
                frames = [(fp, fo) for fp, fo in zip(p.frames, o.frames)
                          if fp.addr == fo.addr and fp.module == fo.module]
            else:
                frames = list(zip(p.frames, o.frames))
            for fp, fo in frames:
                if fp.module == w.own and fp.symbol is not None:
                    total += 1
                    # A same-address alias (identical code folded, u32
                    # and u64 Display in Rust) is the same function.
                    named += fo.symbol == fp.symbol or (
                        fo.symbol is not None and fo.offset == fp.offset)
    r["named"], r["named_of"] = named, total
    stops = {}
    for p, o in pairs:
        if not (complete(o.frames) and o.stop == "end"):
            stops[o.stop] = stops.get(o.stop, 0) + 1
    r["stops"] = stops
    r["incomplete"] = sum(stops.values())
    return r


def show_differences(perf, ours, most=3):
    """The first MOST samples whose chains differ, those perf unwound to
    the end and ours did not first (what "complete in fewer samples than
    perf" counts)."""
    by_key = {(s.tid, s.time): s for s in ours}
    differ = []
    for p in perf:
        o = by_key.get((p.tid, p.time))
        if o is not None and not cps.chains_equal(o.frames, p.frames):
            differ.append((p, o))
    differ.sort(key=lambda po: not (complete(po[0].frames) and not (
        complete(po[1].frames) and po[1].stop == "end")))
    for p, o in differ:
        log("  %s: perf, then ours (stop: %s)" % (p.describe(), o.stop))
        for f in p.frames:
            log("    perf %s" % f)
        for f in o.frames:
            log("    ours %s" % f)
        most -= 1
        if most == 0:
            return


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eu-stacktrace", required=True)
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="eu-stacktrace-corpus.")
    sec = str(args.seconds)
    fa = {"tmp": tmp, "src": HERE, "sec": sec}
    workloads = [
        Workload("C, GNU ld", ["{tmp}/work-bfd", sec],
                 build="gcc -O2 -g -fuse-ld=bfd -o {tmp}/work-bfd {src}/work.c -lm",
                 complete_min=99, own="{tmp}/work-bfd", names_min=99),
        Workload("C, clang+lld", ["{tmp}/work-lld", sec],
                 build="clang -O2 -g -fuse-ld=lld -o {tmp}/work-lld {src}/work.c -lm",
                 complete_min=99, own="{tmp}/work-lld", names_min=99),
        Workload("Rust (cargo)", ["{tmp}/rust/release/corpus-rust-work", sec],
                 build="cargo build -q --offline --release --manifest-path "
                       "{src}/rust-work/Cargo.toml --target-dir {tmp}/rust",
                 # 1% of samples once stopped after two frames in core::fmt
                 # (pad_integral, write_str), as perf's do: sampled at the
                 # tail call's jmp after the epilogue's pops, where LLVM's
                 # CFI still puts the caller's %rbp in a slot below sp, out
                 # of the stack copy.  Read from the popped register now
                 # (epilogue.c, tests/e2e/epilogue.sh).
                 complete_min=99, own="{tmp}/rust/release/corpus-rust-work",
                 names_min=99),
        Workload("Lua, clang+lld", ["{tmp}/lua-lld", "{src}/work.lua", sec],
                 build="clang -O2 -g -fuse-ld=lld -o {tmp}/lua-lld {src}/lua-host.c "
                       "/usr/lib/x86_64-linux-gnu/liblua5.4.a -lm -ldl",
                 complete_min=99, own="{tmp}/lua-lld", names_min=99),
        Workload("ImageMagick", ["/usr/bin/convert", "-seed", "7", "-size", "1600x1200",
                                 "plasma:fractal", "-blur", "0x8", "-resize", "70%",
                                 "-swirl", "60", "-sharpen", "0x2", "null:"],
                 own=MAGICK_CORE, names_min=99, exhausted_min=90),
        Workload("node", ["/usr/bin/node", "{src}/work.js", sec],
                 own="/usr/bin/node", names_min=95),
        Workload("python3", ["/usr/bin/python3", "{src}/work.py", sec],
                 own="/usr/bin/python3.11", names_min=99),
        Workload("clang++ -O2", ["/usr/bin/clang++", "-O2", "-std=c++17", "-c",
                                 "{src}/work.cc", "-o", "{tmp}/work.o"],
                 exhausted_min=90),
        Workload("xz -6", ["/bin/sh", "-c", "head -c 12000000 {tmp}/text | xz -6 -T1 > /dev/null"],
                 build="for i in $(seq 1 200000); do echo \"line $i of the corpus $((i * 7919 % 1000))\"; done > {tmp}/text"),
        Workload("sqlite3", ["/usr/bin/sqlite3", ":memory:", ".read {src}/work.sql"]),
        Workload("git log -p", ["/usr/bin/git", "-C", os.path.join(HERE, "..", ".."),
                                "log", "-p", "-n", "400", "--stat"]),
    ]
    workloads = [w for w in workloads if not args.only or w.name in args.only]
    print("1..%d" % len(workloads), flush=True)
    rows = []
    failed = False
    env = dict(os.environ)
    env.pop("DEBUGINFOD_URLS", None)
    for n, w in enumerate(workloads, 1):
        problems = []
        if w.build:
            t, _, rc = run(["/bin/sh", "-c", fmt(w.build, fa)], env=env)
            if rc != 0:
                print("not ok %d - %s: cannot build (%s)" % (n, w.name, fmt(w.build, fa)))
                failed = True
                continue
        data = os.path.join(tmp, "w%d.data" % n)
        cmd = [fmt(c, fa) for c in w.cmd]
        _, _, rc = run([args.perf, "record", "-q", "-e", "cpu-clock", "-F", "999",
                        "--call-graph", "dwarf,%d" % STACK, "-o", data, "--"] + cmd,
                       stdout=subprocess.DEVNULL, env=env)
        if rc != 0:
            print("not ok %d - %s: perf record %s failed (%d)" % (n, w.name, " ".join(cmd), rc))
            failed = True
            continue
        ours_json = data + ".json"
        stats = data + ".stats"
        with open(stats, "w") as err:
            t_ours, rss_ours, rc1 = run([args.eu_stacktrace, "-i", data, "-f", "json", "-s",
                                         "-o", ours_json], stderr=err, env=env)
        perf_txt = data + ".perf"
        with open(perf_txt, "w") as out:
            t_perf, rss_perf, rc2 = run([args.perf, "script", "-i", data, "--no-inline",
                                         "--ns", "-F", PERF_FIELDS],
                                        stdout=out, stderr=subprocess.DEVNULL, env=env)
        if rc1 != 0 or rc2 != 0:
            print("not ok %d - %s: eu-stacktrace exit %d, perf script exit %d"
                  % (n, w.name, rc1, rc2))
            failed = True
            continue
        perf = cps.parse_perf_script(perf_txt)
        ours = cps.parse_ours(ours_json)
        ours_in_file_offsets(ours)
        normalize_anon(perf)
        normalize_anon(ours)
        w.own = fmt(w.own, fa) if w.own else None
        r = evaluate(w, perf, ours)
        r["name"], r["t"], r["rss"], r["rss_perf"] = w.name, t_ours / t_perf, rss_ours, rss_perf
        rows.append(r)
        if r["matched"] != r["samples"] or r["samples"] == 0:
            problems.append("%d of perf's %d samples in ours" % (r["matched"], r["samples"]))
        if r["ours_complete"] < r["perf_complete"]:
            problems.append("complete in fewer samples than perf")
        if w.complete_min is not None and pct(r["ours_complete"], r["samples"]) < w.complete_min:
            problems.append("complete in %.1f%% < %d%%"
                            % (pct(r["ours_complete"], r["samples"]), w.complete_min))
        if w.names_min is not None and (r["named_of"] == 0 or
                                        pct(r["named"], r["named_of"]) < w.names_min):
            problems.append("own frames named as perf in %.1f%% of %d < %d%%"
                            % (pct(r["named"], r["named_of"]), r["named_of"], w.names_min))
        exh = r["stops"].get("stack copy exhausted", 0)
        if w.exhausted_min is not None and (r["incomplete"] == 0 or
                                            pct(exh, r["incomplete"]) < w.exhausted_min):
            problems.append("truncation said as \"stack copy exhausted\" in %.1f%% of %d < %d%%"
                            % (pct(exh, r["incomplete"]), r["incomplete"], w.exhausted_min))
        log("%s: %s; stops of incomplete samples: %s" % (w.name, " ".join(cmd), ", ".join(
            "%s %d" % kv for kv in sorted(r["stops"].items(), key=str)) or "none"))
        with open(stats) as f:
            for line in f:
                if line.startswith("  ") and "% of samples" in line:
                    log("  stack copy " + line.strip())
        if problems:
            failed = True
            print("not ok %d - %s: %s" % (n, w.name, "; ".join(problems)), flush=True)
            show_differences(perf, ours)
        else:
            print("ok %d - %s" % (n, w.name), flush=True)

    head = ("%-14s %8s %15s %16s %15s %15s %10s %6s %12s"
            % ("program", "samples", "complete", "identical", "extends", "named",
               "exhausted", "time", "RSS MiB"))
    log("(complete: ours/perf; identical: of perf's complete; extends: of perf's "
        "incomplete; named: the program's own frames perf names, same-address aliases "
        "count; exhausted: of ours not complete; time: ours/perf script; RSS: ours "
        "(perf script's))")
    log(head)
    log("-" * len(head))
    for r in rows:
        exh = r["stops"].get("stack copy exhausted", 0)
        log("%-14s %8d %7d/%-7d %9d %5.1f%% %8d %5.1f%% %15s %9s %5.2fx %5.0f (%4.0f)" % (
            r["name"][:14], r["samples"], r["ours_complete"], r["perf_complete"],
            r["identical"], pct(r["identical"], r["perf_complete"]),
            r["extends"], pct(r["extends"], r["perf_partial"]),
            ("%d/%d %.1f%%" % (r["named"], r["named_of"], pct(r["named"], r["named_of"])))
            if r["named_of"] else "-",
            ("%.0f%%" % pct(exh, r["incomplete"])) if r["incomplete"] else "-",
            r["t"], r["rss"] / 1024.0, r["rss_perf"] / 1024.0))
    if args.keep or failed:
        log("kept %s" % tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
