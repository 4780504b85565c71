#!/usr/bin/env python3
"""Checks the names eu-stacktrace gives to frames no ELF symbol table names.

  check-names.py jit --perf-script TXT --ours JSONL --name NAME --tap-start N
      JIT frames: for every sample where perf script names a frame from a JIT
      map (/tmp/perf-PID.map, or the jitted-PID-N.so files perf inject --jit
      makes from a jitdump), ours must give the same name at the same depth.
      Prints 2 TAP lines: enough such samples to judge, and >= 95% agree.

  check-names.py jit-only --ours JSONL --name NAME --tap-start N --map FILE
      No perf to compare with (a container's map perf cannot read): every
      frame ours names from JIT code must carry a name of FILE (the map the
      process wrote, as a perf map), and JIT frames must be named in >= 95%
      of the samples whose leaf is in FILE's code outside every mapped file
      (V8's built-ins in node's .text are named from node's symbols).
      2 TAP lines.

  check-names.py go --ours JSONL --name NAME --tap-start N --module PATH
                    --oracle-nm NM_OUTPUT
      Go frames in PATH (a binary without .symtab) against the symbol table
      of the same program built with one (`nm -S` of it; same code layout):
      >= 95% of its frames named the same, and no frame past Go's outermost
      functions.  3 TAP lines.
"""

import argparse
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "compare_perf_script", os.path.join(HERE, "compare-perf-script.py"))
cps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cps)

JIT_DSO = re.compile(r"(^|/)(perf-\d+\.map|jitted-\d+-\d+\.so)$")
GO_OUTERMOST = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
                "runtime.systemstack", "runtime.mcall", "runtime.morestack"}
MIN_SAMPLES = 50


class Tap:
    def __init__(self, start, name):
        self.n = start
        self.name = name
        self.failed = False

    def line(self, ok, text):
        print("%s %d - %s: %s" % ("ok" if ok else "not ok", self.n, self.name, text))
        self.n += 1
        self.failed |= not ok


def check_jit(args, tap):
    perf = cps.parse_perf_script(args.perf_script)
    ours = {(s.tid, s.time): s for s in cps.parse_ours(args.ours)}
    judged = agreed = 0
    shown = 0
    for p in perf:
        jit = [(i, f.symbol) for i, f in enumerate(p.frames)
               if f.symbol is not None and JIT_DSO.search(f.module)]
        if not jit:
            continue
        o = ours.get((p.tid, p.time))
        judged += 1
        if o is not None and all(i < len(o.frames) and o.frames[i].symbol == name
                                 for i, name in jit):
            agreed += 1
        elif shown < 5:
            shown += 1
            print("# %s: perf names %s; ours %s" % (
                p.describe(), [n for _, n in jit][:3],
                [f.symbol for f in o.frames[:jit[-1][0] + 1]] if o else "no sample"))
    tap.line(judged >= MIN_SAMPLES,
             "perf names JIT frames in %d samples (at least %d to judge)"
             % (judged, MIN_SAMPLES))
    share = agreed / judged if judged else 0.0
    tap.line(judged > 0 and share >= 0.95,
             "the same JIT names at the same depth in %d of %d samples (%.1f%%, >= 95%%)"
             % (agreed, judged, 100 * share))


def read_perf_map(path):
    ranges = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                try:
                    start, size = int(parts[0], 16), int(parts[1], 16)
                except ValueError:
                    continue
                ranges.append((start, start + size, parts[2]))
    return ranges


def in_file(frame):
    """True when FRAME is in a file the process mapped, not JIT code."""
    m = frame.module
    return m.startswith("/") and not m.startswith(("//anon", "/memfd:"))


def check_jit_only(args, tap):
    ranges = read_perf_map(args.map)
    names = {r[2] for r in ranges}
    ours = cps.parse_ours(args.ours)
    judged = named = foreign = 0
    for s in ours:
        if not s.frames:
            continue
        leaf = s.frames[0].addr
        # V8 lists its embedded built-ins in the map too ("Builtin:X"), but
        # they are code in node's own file, named from its symbol table
        # ("Builtins_X") as perf script names them: not JIT code.  Their
        # share of the samples is not the profiler's doing (the start-up's
        # fixed CPU time against a hot loop that runs for wall time: more
        # of them on a loaded machine), so they are not judged here.
        if in_file(s.frames[0]):
            continue
        if any(a <= leaf < b for a, b, _ in ranges):
            judged += 1
            if s.frames[0].symbol in names:
                named += 1
        foreign += sum(1 for f in s.frames
                       if f.module in ("//anon", "[jit]") and f.symbol is not None
                       and f.symbol not in names)
    share = named / judged if judged else 0.0
    tap.line(judged >= MIN_SAMPLES and share >= 0.95,
             "JIT leaf frames named in %d of %d samples (%.1f%%, >= 95%%, at least %d)"
             % (named, judged, 100 * share, MIN_SAMPLES))
    tap.line(foreign == 0, "%d JIT frames carry a name the process's map does not have"
             % foreign)


def read_nm(path):
    syms = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and parts[2] in "tT":
                syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def nm_lookup(syms, starts, addr):
    import bisect
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < syms[i][0] + max(syms[i][1], 1):
        return syms[i][2]
    return None


def check_go(args, tap):
    syms = read_nm(args.oracle_nm)
    starts = [s[0] for s in syms]
    ours = cps.parse_ours(args.ours)
    frames = same = past = 0
    shown = 0
    for s in ours:
        for i, f in enumerate(s.frames):
            if f.module != args.module:
                continue
            frames += 1
            want = nm_lookup(syms, starts, f.addr)
            # The linker adds ".abi0" to the ELF symbols of assembly
            # functions; Go's own tables (and tracebacks, pprof) do not.
            abi0 = lambda n: n[:-5] if n is not None and n.endswith(".abi0") else n
            if want is not None and abi0(f.symbol) == abi0(want):
                same += 1
            elif shown < 5:
                shown += 1
                print("# %s frame %d at %#x: oracle %s, ours %s"
                      % (s.describe(), i, f.addr, want, f.symbol))
            if (f.symbol or "").replace(".abi0", "") in GO_OUTERMOST and i + 1 < len(s.frames):
                past += 1
    tap.line(frames >= 10 * MIN_SAMPLES, "%d frames in %s (at least %d to judge)"
             % (frames, os.path.basename(args.module), 10 * MIN_SAMPLES))
    share = same / frames if frames else 0.0
    tap.line(frames > 0 and share >= 0.95,
             "named as the symbol table names them in %d of %d frames (%.1f%%, >= 95%%)"
             % (same, frames, 100 * share))
    tap.line(past == 0, "%d samples go on past a Go outermost frame" % past)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("jit", "jit-only", "go"))
    ap.add_argument("--perf-script")
    ap.add_argument("--ours", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--tap-start", type=int, default=1)
    ap.add_argument("--map")
    ap.add_argument("--module")
    ap.add_argument("--oracle-nm")
    args = ap.parse_args(argv)
    tap = Tap(args.tap_start, args.name)
    {"jit": check_jit, "jit-only": check_jit_only, "go": check_go}[args.mode](args, tap)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
