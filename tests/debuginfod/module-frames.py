#!/usr/bin/env python3
"""The frames of one module in eu-stacktrace's JSON Lines output.

  module-frames.py FILE.jsonl MODULE

prints one line of counts, for the tests to compare:

  samples=N frames=F symbolized=S addressed=A

N: all samples in FILE; F: frames whose module is MODULE; S: those with
a symbol; A: those with an address (every frame must have one).  Frames in
PLT stubs are left out: they are named NAME@plt from the relocations, which
even a stripped file keeps, so they tell nothing about its symbol table.
"""
import json
import sys


def main():
    path, module = sys.argv[1], sys.argv[2]
    samples = frames = symbolized = addressed = 0
    with open(path) as f:
        for line in f:
            s = json.loads(line)
            samples += 1
            for fr in s.get("frames", []):
                if fr.get("module") != module:
                    continue
                if (fr.get("symbol") or "").endswith("@plt"):
                    continue
                frames += 1
                symbolized += fr.get("symbol") is not None
                addressed += bool(fr.get("address"))
    print(f"samples={samples} frames={frames} symbolized={symbolized} addressed={addressed}")


if __name__ == "__main__":
    main()
