#!/usr/bin/env python3
"""Checks call chains in eu-stacktrace's JSON Lines output.

usage: check-chains.py OUTPUT.jsonl NAME MIN SPEC [SPEC...]

Each SPEC is LEAVES:CALLERS, e.g. "alpha_leaf:alpha_mid,alpha_top,worker".
A sample whose innermost frame is one of LEAVES ('|'-separated) passes when
the CALLERS appear among its outer frames in that order (other frames may
sit between them: inlining and recursion differ by compiler).  Prints TAP
diagnostics and one TAP line; exits 0.  At least 99% of at least MIN such
samples must pass.
"""
import json
import sys


def name(frame):
    sym = frame.get("symbol") or ""
    return sym.split("@")[0]


def has_in_order(names, callers):
    i = 0
    for n in names:
        if i < len(callers) and n == callers[i]:
            i += 1
    return i == len(callers)


def main():
    path, label, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3])
    specs = []
    for spec in sys.argv[4:]:
        leaves, callers = spec.split(":", 1)
        specs.append((set(leaves.split("|")), [c for c in callers.split(",") if c]))
    total = passed = 0
    failures = []
    with open(path) as f:
        for line in f:
            sample = json.loads(line)
            frames = sample["frames"]
            if not frames:
                continue
            leaf = name(frames[0])
            for leaves, callers in specs:
                if leaf not in leaves:
                    continue
                total += 1
                outer = [name(fr) for fr in frames[1:]]
                if has_in_order(outer, callers):
                    passed += 1
                elif len(failures) < 3:
                    failures.append((sample, callers))
                break
    rate = 100.0 * passed / total if total else 0.0
    print(f"# {label}: {passed} of {total} samples in "
          f"{', '.join('|'.join(sorted(l)) for l, _ in specs)} have the expected callers "
          f"({rate:.2f}%)")
    for sample, callers in failures:
        print(f"#   failed: {sample['comm']} {sample['tid']} stop={sample['stop']} expected "
              f"{' <- '.join(callers)}; got: "
              + " <- ".join(f"{name(fr) or '?'}" for fr in sample["frames"]))
    ok = total >= minimum and rate >= 99.0
    print(f"{'ok' if ok else 'not ok'} - {label}: expected callers in {rate:.2f}% of "
          f"{total} samples (need 99% of at least {minimum})")


if __name__ == "__main__":
    main()
