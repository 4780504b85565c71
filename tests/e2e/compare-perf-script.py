#!/usr/bin/env python3
"""Compare eu-stacktrace's JSON Lines output with perf script's unwinding.

perf script is the independent oracle: for every sample that perf unwound to
the outermost frame (_start, or a thread's clone3), the user frames that
eu-stacktrace wrote for the same sample must equal perf's, frame by frame:

  - address: our elf_address (minus 1 for every frame after the first, as
    perf decrements the pc of caller frames) equals perf's ip;
  - module: our module path equals perf's dso;
  - symbol: our symbol equals perf's, both without an "@VERSION" suffix
    (perf's own "name@plt" PLT symbols are kept whole); when both know the
    symbol, the offsets must agree too.

A sample whose frames equal perf's complete chain but whose stop is not
"end" is reported, not counted: perf has no stop reason to compare with.

Two differences of perf's own are known and reported, not counted: perf
names the PLT header (PLT0) "_init+N", stretching crti.o's unsized _init
over it, where ours leaves it unnamed; and with --after-exec, in images
exec'd by a forked child perf may leave frames out (its frame-pointer
fallback in the dynamic loader) where ours has them all.

Samples are matched by (tid, time in ns).  Kernel frames are ignored on both
sides.  The perf side is the text of

  perf script -F comm,pid,tid,time,ip,sym,symoff,dso --no-inline --ns

The result is printed as TAP lines numbered from --tap-start, with the match
rate and the first mismatches as diagnostics.  The checks, in order:

  1. every sample of perf script is in our output (nothing dropped);
  2. at least --min-samples samples were compared;
  3. at least --min-rate percent of them match;
  4. with --in-order: ours writes the samples in perf script's order, which
     is time order (a recording's records are not: a perf.data's rounds,
     perf record --threads' files, one per CPU);
  5. (one line per --expect-complete SYMBOL[,SYMBOL...]) the samples whose
     innermost user frame perf names one of the SYMBOLs are complete in ours
     (unwound to _start or clone3, stop "end") and begin with all of perf's
     frames, also where perf stopped early.  This covers samples that perf
     does not unwind fully: perf 6.1 often stops early in a child after
     its exec (it keeps the mappings the child inherited at fork).

The exit status is 0 when every check passed, 1 otherwise.  Only the
standard library is used.
"""

import argparse
import json
import re
import sys
from collections import defaultdict, deque

# The frames a complete user chain ends with: a process's entry point, or
# the clone that started a thread.  perf shows "clone3" for threads on
# glibc 2.34+, "__clone"/"clone" on older ones.
OUTERMOST = {"_start", "clone3", "__clone3", "clone", "__clone"}

KERNEL_START = 1 << 63

HEADER_RE = re.compile(
    r"^(?P<comm>.*?)\s+(?:(?P<pid>-?\d+)/)?(?P<tid>-?\d+)\s+"
    r"(?P<sec>\d+)\.(?P<frac>\d+):\s*$")
FRAME_RE = re.compile(r"^\s+(?P<ip>[0-9a-f]+) (?P<sym>.*) \((?P<dso>.*)\)\s*$")
SYMOFF_RE = re.compile(r"^(?P<name>.*)\+0x(?P<off>[0-9a-f]+)$")


class Frame:
    __slots__ = ("addr", "module", "symbol", "offset")

    def __init__(self, addr, module, symbol, offset):
        self.addr = addr          # ELF-relative, decremented for callers
        self.module = module      # path, or "[unknown]"
        self.symbol = symbol      # without @VERSION, or None
        self.offset = offset      # int, or None

    def key(self):
        return (self.addr, self.module, self.symbol)

    def __str__(self):
        sym = self.symbol if self.symbol is not None else "[unknown]"
        if self.symbol is not None and self.offset is not None:
            sym += "+0x%x" % self.offset
        return "%16x %s (%s)" % (self.addr, sym, self.module)


class Sample:
    __slots__ = ("comm", "pid", "tid", "time", "frames", "stop", "kernel")

    def __init__(self, comm, pid, tid, time):
        self.comm = comm
        self.pid = pid
        self.tid = tid
        self.time = time
        self.frames = []   # user frames, innermost first
        self.stop = None
        self.kernel = 0    # number of kernel frames seen

    def describe(self):
        return "%s %s/%d time %d.%09d" % (
            self.comm, self.pid if self.pid is not None else "?",
            self.tid, self.time // 10**9, self.time % 10**9)


def strip_version(name):
    """"__libc_start_main@@GLIBC_2.34" -> "__libc_start_main".  perf names
    the PLT entries it synthesizes "memcpy@plt" (or "@plt" when the entry
    has no symbol, as for IRELATIVE): that suffix is part of the name."""
    if name is None or name.endswith("@plt"):
        return name
    at = name.find("@")
    return name[:at] if at > 0 else name


def is_kernel(addr, module):
    return (addr >= KERNEL_START or module.startswith("[kernel.")
            or module.startswith("[guest.kernel."))


def complete(frames):
    return bool(frames) and frames[-1].symbol in OUTERMOST


def parse_perf_script(path):
    samples = []
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if not line[0].isspace():
                m = HEADER_RE.match(line)
                if not m:
                    raise ValueError("%s:%d: not a sample header: %r"
                                     % (path, lineno, line))
                frac = (m.group("frac") + "000000000")[:9]
                cur = Sample(m.group("comm").strip(),
                             int(m.group("pid")) if m.group("pid") else None,
                             int(m.group("tid")),
                             int(m.group("sec")) * 10**9 + int(frac))
                samples.append(cur)
                continue
            m = FRAME_RE.match(line)
            if not m or cur is None:
                raise ValueError("%s:%d: not a callchain entry: %r"
                                 % (path, lineno, line))
            addr = int(m.group("ip"), 16)
            dso = m.group("dso")
            if is_kernel(addr, dso):
                cur.kernel += 1
                continue
            sym, off = m.group("sym"), None
            if sym == "[unknown]":
                sym = None
            else:
                so = SYMOFF_RE.match(sym)
                if so:
                    sym, off = so.group("name"), int(so.group("off"), 16)
            cur.frames.append(Frame(addr, dso, strip_version(sym), off))
    return samples


def parse_hex(value, what, lineno):
    if value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return int(value, 16)
    raise ValueError("line %d: %s is neither a hex string nor null: %r"
                     % (lineno, what, value))


RAW_CALLERS = False


def sym_of(fr):
    return fr.get("symbol")


def parse_ours(path):
    samples = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise ValueError("%s:%d: not JSON: %s" % (path, lineno, e))
            for field in ("tid", "time", "frames"):
                if field not in obj:
                    raise ValueError("%s:%d: no %r field" % (path, lineno, field))
            s = Sample(obj.get("comm", "?"), obj.get("pid"), int(obj["tid"]),
                       int(obj["time"]))
            s.stop = obj.get("stop")
            first_user = True
            for fr in obj["frames"]:
                raw = parse_hex(fr.get("address"), "address", lineno)
                module = fr.get("module")
                if raw is not None and is_kernel(raw, module or ""):
                    s.kernel += 1
                    continue
                elf = parse_hex(fr.get("elf_address"), "elf_address", lineno)
                addr = elf if elf is not None else raw
                if addr is None:
                    raise ValueError("%s:%d: frame without address" % (path, lineno))
                # perf decrements the pc of every frame but the sampled one,
                # except in a kernel-made (frame-pointer) chain, which it
                # shows as it is; we symbolize callers at pc - 1 either way.
                offset = fr.get("offset") if sym_of(fr) else None
                if not first_user:
                    if RAW_CALLERS:
                        offset = offset + 1 if offset is not None else None
                    else:
                        addr -= 1
                first_user = False
                sym = fr.get("symbol")
                s.frames.append(Frame(addr, module if module else "[unknown]",
                                      strip_version(sym) if sym else None, offset))
            samples.append(s)
    return samples


def stretched_init(ours, perf):
    """perf's symbols__fixup_end stretches an unsized symbol up to the next
    one, across sections: the _init of crti.o (no size) swallows the PLT
    header after it (PLT0, the lazy-binding stub), which perf then calls
    "_init+0x26".  Ours stops an unsized symbol at its section's end and
    leaves PLT0 unnamed.  Same address and module, ours without a name,
    perf's "_init": the same frame."""
    return (perf.symbol == "_init" and ours.symbol is None
            and ours.addr == perf.addr and ours.module == perf.module)


def frames_equal(a, b):
    """a is ours, b is perf's."""
    if stretched_init(a, b):
        return True
    if a.key() != b.key():
        return False
    if a.symbol is not None and a.offset is not None and b.offset is not None:
        return a.offset == b.offset
    return True


def chains_equal(ours, perf):
    return (len(ours) == len(perf)
            and all(frames_equal(o, p) for o, p in zip(ours, perf)))


def skipped_by_perf(ours, perf):
    """perf's chain is ours with frames left out: the same innermost and
    outermost frames, and every frame of perf's in ours, in order."""
    if len(perf) < 2 or len(ours) <= len(perf):
        return False
    if not (frames_equal(ours[0], perf[0]) and frames_equal(ours[-1], perf[-1])):
        return False
    i = 0
    for o in ours:
        if i < len(perf) and frames_equal(o, perf[i]):
            i += 1
    return i == len(perf)


def show_chains(out, label, perf_sample, ours_sample):
    """Print both chains; runs of equal frames away from a difference are
    folded so that a 40-frame chain stays readable."""
    pf, of = perf_sample.frames, ours_sample.frames
    out("%s: sample %s, %d user frames in perf, %d in ours (stop: %s)" % (
        label, perf_sample.describe(), len(pf), len(of), ours_sample.stop))
    n = max(len(pf), len(of))
    same = [i < len(pf) and i < len(of) and frames_equal(of[i], pf[i])
            for i in range(n)]
    near = set()
    for i in range(n):
        if not same[i]:
            near.update(range(i - 2, i + 3))
    shown = set(range(2)) | set(range(n - 2, n)) | near
    folded = 0
    for i in range(n):
        if i not in shown:
            folded += 1
            continue
        if folded:
            out("        ... %d equal frames" % folded)
            folded = 0
        if same[i]:
            out("  #%-3d =    %s" % (i, pf[i]))
        else:
            out("  #%-3d perf %s" % (i, pf[i] if i < len(pf) else "-"))
            out("    != ours %s" % (of[i] if i < len(of) else "-"))


def check_order(diag, tap, args, perf, ours):
    """One TAP line: the samples both sides have come in the same order.
    perf script sorts by time; samples of equal time may come in either
    order, so each run of equal times is compared as a set."""
    perf_keys = [(p.time, p.tid) for p in perf]
    both = set(perf_keys)
    ours_keys = [(o.time, o.tid) for o in ours if (o.time, o.tid) in both]
    backwards = sum(1 for a, b in zip(ours_keys, ours_keys[1:]) if b[0] < a[0])

    def runs(keys):
        out = []
        for k in keys:
            if out and out[-1][0] == k[0]:
                out[-1][1].append(k[1])
            else:
                out.append((k[0], [k[1]]))
        return [(t, sorted(tids)) for t, tids in out]

    a, b = runs(perf_keys), runs(ours_keys)
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if first is None and len(a) != len(b):
        first = min(len(a), len(b))
    diag("%s: %d samples in both; ours goes back in time %d times" % (
        args.name, len(ours_keys), backwards))
    if first is not None:
        for i in range(first, min(first + args.show, max(len(a), len(b)))):
            diag("  #%d perf %s / ours %s" % (
                i, a[i] if i < len(a) else "-", b[i] if i < len(b) else "-"))
    tap(first is None and backwards == 0 and len(ours_keys) > 0,
        "ours has the samples in perf script's order (%d samples%s)" % (
            len(ours_keys), "" if first is None else
            ", first difference at run %d of equal times" % first))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--perf-script", required=True,
                    help="text of perf script -F comm,pid,tid,time,ip,sym,"
                         "symoff,dso --no-inline --ns")
    ap.add_argument("--ours", required=True,
                    help="eu-stacktrace -f json output (JSON Lines)")
    ap.add_argument("--name", default="workload", help="name in TAP lines")
    ap.add_argument("--tap-start", type=int, default=1,
                    help="number of the first TAP line printed")
    ap.add_argument("--raw-callers", action="store_true",
                    help="perf script shows the callers' addresses undecremented "
                         "(perf record -g: the kernel's frame-pointer chain)")
    ap.add_argument("--min-samples", type=int, default=500,
                    help="fewest complete samples that make a verdict")
    ap.add_argument("--min-rate", type=float, default=99.5,
                    help="lowest acceptable match rate, in percent")
    ap.add_argument("--rate-as-diagnostics", action="store_true",
                    help="checks 2 and 3 (enough complete samples, the rate) "
                         "are printed as diagnostics, not TAP lines: for a "
                         "workload where perf completes too few chains, and "
                         "too unevenly, to judge by")
    ap.add_argument("--show", type=int, default=5,
                    help="mismatches to print in full")
    ap.add_argument("--after-exec", default="", metavar="COMM[,COMM...]",
                    help="commands that are images exec'd by a forked child: "
                         "where perf's complete chain in their samples is ours "
                         "with frames left out (see below), the sample counts "
                         "as equal and is reported")
    ap.add_argument("--expect-complete", action="append", default=[],
                    metavar="SYMBOL[,SYMBOL...]",
                    help="samples whose innermost frame is one of these must "
                         "be complete in ours, even where perf's are not")
    ap.add_argument("--in-order", action="store_true",
                    help="also check that ours writes the samples in perf "
                         "script's order (one more TAP line)")
    ap.add_argument("--expect-min", type=int, default=200,
                    help="fewest samples each --expect-complete needs")
    ap.add_argument("--expect-rate", type=float, default=None,
                    help="lowest acceptable rate of each --expect-complete, "
                         "in percent [--min-rate]")
    args = ap.parse_args(argv)
    global RAW_CALLERS
    RAW_CALLERS = args.raw_callers
    if args.expect_rate is None:
        args.expect_rate = args.min_rate

    n = [args.tap_start]
    failed = [False]

    def diag(msg=""):
        for line in str(msg).split("\n"):
            print("# " + line if line else "#")

    def tap(ok, desc):
        print("%s %d - %s: %s" % ("ok" if ok else "not ok", n[0], args.name, desc))
        n[0] += 1
        if not ok:
            failed[0] = True

    n_checks = ((1 if args.rate_as_diagnostics else 3) + args.in_order
                + len(args.expect_complete))
    try:
        perf = parse_perf_script(args.perf_script)
        ours = parse_ours(args.ours)
    except (OSError, ValueError) as e:
        diag("cannot read the inputs: %s" % e)
        for i in range(n_checks):
            tap(False, "inputs could not be read")
        return 1

    by_key = defaultdict(deque)
    for s in ours:
        by_key[(s.tid, s.time)].append(s)

    pairs = []
    missing = []
    for p in perf:
        q = by_key.get((p.tid, p.time))
        if q:
            pairs.append((p, q.popleft()))
        else:
            missing.append(p)
    extra = sum(len(q) for q in by_key.values())

    diag("%s: %d samples in perf script, %d in ours, %d of perf's missing "
         "from ours, %d of ours not in perf's" % (
             args.name, len(perf), len(ours), len(missing), extra))
    for p in missing[:args.show]:
        diag("  missing: %s (%d user frames in perf)" % (p.describe(), len(p.frames)))
    tap(not missing and len(perf) > 0,
        "every sample of perf script is in ours (%d of %d)"
        % (len(perf) - len(missing), len(perf)))

    # A kernel-made chain is what it is, complete or not: every sample.
    compared = [(p, o) for p, o in pairs if complete(p.frames) or args.raw_callers]
    mismatches = [(p, o) for p, o in compared if not chains_equal(o.frames, p.frames)]
    # In an image exec'd by a forked child, perf 6.1 keeps the mappings the
    # child inherited at fork, and in the dynamic loader's start-up (mmap,
    # munmap, mprotect under dl_main) it falls back to the frame-pointer
    # chain: dl_main keeps rbp as a frame pointer, so perf goes from the
    # system call straight to dl_main's caller and leaves out the frames in
    # between (_dl_unload_cache, dl_main; _dl_start), still ending at _start.
    # There perf is no full oracle; ours must contain all of its frames in
    # order, from the same first to the same last, and end the chain.
    after_exec = set(filter(None, args.after_exec.split(",")))
    skipped = [(p, o) for p, o in mismatches
               if p.comm in after_exec and o.stop == "end"
               and skipped_by_perf(o.frames, p.frames)]
    if skipped:
        mismatches = [m for m in mismatches if m not in skipped]
        diag("%s: %d samples of exec'd images (%s) where perf's chain leaves "
             "out frames of ours (perf's frame-pointer fallback), counted as "
             "equal:" % (args.name, len(skipped), ", ".join(sorted(after_exec))))
        for p, o in skipped[:2]:
            show_chains(diag, "perf left out frames", p, o)
    # perf has no stop reason to compare with: a chain equal to perf's
    # complete one that does not say stop "end" is shown, not counted.
    # (Seen: a thread sampled on its first instruction after clone3, and
    # ld.so's own _start, whose CFI does not end the chain.)
    odd_stop = [(p, o) for p, o in compared
                if o.stop != "end" and chains_equal(o.frames, p.frames)]
    matched = len(compared) - len(mismatches)
    rate = 100.0 * matched / len(compared) if compared else 0.0
    ours_complete = sum(1 for p, o in pairs if complete(o.frames) and o.stop == "end")
    perf_complete_only = sum(1 for p, o in compared
                             if not (complete(o.frames) and o.stop == "end"))
    ours_complete_only = sum(1 for p, o in pairs if not complete(p.frames)
                             and complete(o.frames) and o.stop == "end")
    diag("%s: perf unwound %d of %d matched samples to the outermost frame; "
         "ours %d (%d complete only in perf's, %d only in ours)" % (
             args.name, len(compared), len(pairs), ours_complete,
             perf_complete_only, ours_complete_only))
    diag("%s: match rate %.2f%% (%d of %d complete samples equal perf's "
         "user frames)" % (args.name, rate, matched, len(compared)))

    # What the mismatches have in common helps to read them.
    if mismatches:
        kinds = defaultdict(int)
        for p, o in mismatches:
            if len(o.frames) != len(p.frames):
                kinds["frame count %s" % ("shorter" if len(o.frames) < len(p.frames)
                                           else "longer")] += 1
            for fo, fp in zip(o.frames, p.frames):
                if not frames_equal(fo, fp):
                    what = ("address" if fo.addr != fp.addr else
                            "module" if fo.module != fp.module else
                            "symbol (perf's synthesized PLT symbol)"
                            if (fp.symbol or "").endswith("@plt") else
                            "symbol" if fo.symbol != fp.symbol else "offset")
                    kinds["first difference in %s" % what] += 1
                    break
        diag("%s: mismatches: %s" % (args.name, ", ".join(
            "%s %d" % kv for kv in sorted(kinds.items()))))
        for p, o in mismatches[:args.show]:
            show_chains(diag, "mismatch", p, o)

    if odd_stop:
        reasons = defaultdict(int)
        for p, o in odd_stop:
            reasons[o.stop] += 1
        diag("%s: %d samples with frames equal to perf's complete chain do "
             "not say stop \"end\": %s" % (args.name, len(odd_stop), ", ".join(
                 "%r %d" % kv for kv in sorted(reasons.items(), key=str))))
        for p, o in odd_stop[:2]:
            show_chains(diag, "stop is not \"end\"", p, o)

    if args.rate_as_diagnostics:
        diag("%s: not judged: %d complete samples compared, user frames equal "
             "perf script's in %.2f%% of them" % (args.name, len(compared), rate))
    else:
        tap(len(compared) >= args.min_samples,
            "at least %d complete samples compared (%d)" % (args.min_samples, len(compared)))
        tap(bool(compared) and rate >= args.min_rate,
            "user frames equal perf script's in %.2f%% of %d complete samples "
            "(need %.1f%%)" % (rate, len(compared), args.min_rate))

    if args.in_order:
        check_order(diag, tap, args, perf, ours)

    for spec in args.expect_complete:
        symbols = set(spec.split(","))
        cases = [(p, o) for p, o in pairs
                 if p.frames and p.frames[0].symbol in symbols]
        good, bad = [], []
        for p, o in cases:
            ok = (complete(o.frames) and o.stop == "end"
                  and len(o.frames) >= len(p.frames)
                  and chains_equal(o.frames[:len(p.frames)], p.frames))
            (good if ok else bad).append((p, o))
        perf_short = sum(1 for p, o in cases if not complete(p.frames))
        r = 100.0 * len(good) / len(cases) if cases else 0.0
        diag("%s: %d samples whose innermost frame is %s; perf unwound %d "
             "of them to the outermost frame; ours unwound %.2f%% there "
             "through perf's frames" % (
                 args.name, len(cases), " or ".join(sorted(symbols)),
                 len(cases) - perf_short, r))
        for p, o in bad[:args.show]:
            show_chains(diag, "not complete in ours or not extending perf's", p, o)
        tap(len(cases) >= args.expect_min and r >= args.expect_rate,
            "samples in %s reach the outermost frame through perf's frames "
            "in %.2f%% of %d, %d of which perf could not unwind "
            "(need %.1f%% of at least %d)" % (
                "/".join(sorted(symbols)), r, len(cases), perf_short,
                args.expect_rate, args.expect_min))

    return 1 if failed[0] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
