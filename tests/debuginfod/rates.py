#!/usr/bin/env python3
"""How many samples of a program unwind through main, and up to _start.

Reads eu-stacktrace's JSON Lines (--json) or perf script's text
(--perf-script), keeps the samples of the program's process (its comm),
and counts, by address so that it works whether or not the tool had a
symbol table for the program:

  main      samples with a frame of the program inside main
  complete  samples that reach main and end in the program's _start (for
            eu-stacktrace also with the unwind's stop reason "end")
  named     samples whose frames name main (--json only)

Addresses come from the symbol table of --symbols (the program's debug
file, `nm -S`).  The program must be a non-PIE executable, so that perf
script's addresses are the file's.  Prints one line:

  N samples, M reach main (x%), C complete to _start (y%), K name main

and with --min-complete / --max-main exits 1 when the rates are not met.
"""
import argparse
import json
import re
import subprocess
import sys


def symbol_ranges(path):
    out = subprocess.run(["nm", "-S", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    ranges = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] in ("main", "_start"):
            start, size = int(parts[0], 16), int(parts[1], 16)
            ranges[parts[3]] = (start, start + max(size, 1))
    for name in ("main", "_start"):
        if name not in ranges:
            sys.exit(f"rates.py: no {name} in {path}")
    return ranges


def inside(rng, addr):
    return rng[0] <= addr < rng[1]


def json_samples(path, comm, module):
    with open(path) as f:
        for line in f:
            s = json.loads(line)
            if s.get("comm") != comm:
                continue
            frames = []
            for i, fr in enumerate(s.get("frames", [])):
                if fr.get("module") != module or "elf_address" not in fr:
                    frames.append((None, fr.get("symbol")))
                    continue
                addr = int(fr["elf_address"], 16)
                # Callers are return addresses: the call is just before.
                frames.append((addr if i == 0 else addr - 1, fr.get("symbol")))
            yield frames, s.get("stop")


HEADER = re.compile(r"^\S")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def perf_samples(path, comm, module):
    block = None
    with open(path, errors="replace") as f:
        for line in f:
            if HEADER.match(line):
                if block is not None:
                    yield block, "end"
                block = [] if line.split()[0] == comm else None
            elif block is not None:
                m = FRAME.match(line)
                if m:
                    addr = int(m.group(1), 16)
                    if m.group(3) != module:
                        block.append((None, m.group(2)))
                    else:
                        block.append((addr if not block else addr - 1, m.group(2)))
    if block is not None:
        yield block, "end"


def main():
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--json")
    src.add_argument("--perf-script")
    ap.add_argument("--symbols", required=True, help="the program's debug file")
    ap.add_argument("--module", required=True, help="the program's path as recorded")
    ap.add_argument("--comm", required=True)
    ap.add_argument("--min-complete", type=float, help="percent")
    ap.add_argument("--max-main", type=float, help="percent")
    args = ap.parse_args()

    ranges = symbol_ranges(args.symbols)
    samples = (json_samples(args.json, args.comm, args.module) if args.json
               else perf_samples(args.perf_script, args.comm, args.module))
    n = reach = complete = named = 0
    for frames, stop in samples:
        n += 1
        addrs = [a for a, _ in frames]
        in_main = any(a is not None and inside(ranges["main"], a) for a in addrs)
        at_start = bool(addrs) and addrs[-1] is not None and inside(ranges["_start"], addrs[-1])
        reach += in_main
        complete += in_main and at_start and stop == "end"
        named += any(sym == "main" for _, sym in frames)
    pct = (lambda k: 100.0 * k / n if n else 0.0)
    line = (f"{n} samples, {reach} reach main ({pct(reach):.1f}%), "
            f"{complete} complete to _start ({pct(complete):.1f}%)")
    if args.json:
        line += f", {named} name main"
    print(line)
    ok = n > 0
    if args.min_complete is not None and pct(complete) < args.min_complete:
        ok = False
    if args.max_main is not None and pct(reach) > args.max_main:
        ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
