"""Folded stacks (eu-stacktrace -f folded) as the oracle of the flame graph
and pprof tests: per-function sample counts, computed the same way for every
format."""

import re


def read_folded(path):
    """{(comm, frame, ...): count} of a folded file."""
    stacks = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            text, count = line.rsplit(" ", 1)
            key = tuple(text.split(";"))
            stacks[key] = stacks.get(key, 0) + int(count)
    return stacks


def escape(name):
    """A frame name as -f folded writes it."""
    return name.replace(";", ":").replace("\n", ":")


def inclusive(stacks, skip_comm=False):
    """{name: samples whose stack contains name} (each sample counted once,
    however deep the recursion)."""
    out = {}
    for key, count in stacks.items():
        for name in set(key[1:] if skip_comm else key):
            out[name] = out.get(name, 0) + count
    return out


def leaf(stacks):
    """{name: samples whose innermost frame is name} (no frames: nothing)."""
    out = {}
    for key, count in stacks.items():
        if len(key) > 1:
            out[key[-1]] = out.get(key[-1], 0) + count
    return out


def matching_samples(stacks, pattern):
    """Samples with a frame (or comm) that the regular expression matches."""
    rx = re.compile(pattern)
    return sum(c for key, c in stacks.items() if any(rx.search(n) for n in key))


def total(stacks):
    return sum(stacks.values())


def diff_counts(ours, oracle, limit=10):
    """Lines describing how two {name: count} maps differ."""
    lines = []
    for name in sorted(set(ours) | set(oracle)):
        a, b = ours.get(name), oracle.get(name)
        if a != b:
            lines.append("%s: %s, folded says %s" % (name, a, b))
    if len(lines) > limit:
        lines = lines[:limit] + ["... and %d more" % (len(lines) - limit)]
    return lines


class Tap:
    """TAP lines numbered from START."""

    def __init__(self, start):
        self.n = start - 1
        self.failed = False

    def check(self, ok, text, diagnostics=()):
        self.n += 1
        self.failed |= not ok
        print("%sok %d - %s" % ("" if ok else "not ", self.n, text))
        for d in diagnostics:
            print("#   %s" % d)
        return ok
