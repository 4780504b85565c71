#!/usr/bin/env python3
"""Checks eu-stacktrace -f svg files against the folded output of the same
recording: the samples under each function agree.

Every frame of the SVG is a <g class="f"> (or "m" for merged narrow frames)
with data-x (samples left of it), data-s (its samples), data-d (its depth)
and a <title> "NAME\\n[MODULE\\n]N samples, P%".  The tree is rebuilt from
the spans: a frame's parent is the frame one level up whose span holds it.

    check-svg.py --folded F --svg-exact A.svg --svg-default B.svg \\
                 --svg-reverse C.svg --tap-start N

prints one TAP line per check:
  exact     (--minwidth 0): the samples under each function equal folded's
  default   (--minwidth 0.1): the root holds every sample, each level's
            frames fit in their parent, and each function drawn has at most
            folded's samples (merged frames hold the rest)
  reverse   (--reverse --minwidth 0): the samples under each function equal
            folded's, and the first level under each process is the
            innermost frames with folded's leaf counts
"""

import argparse
import bisect
import sys
import xml.etree.ElementTree as ET

from folded import Tap, diff_counts, escape, inclusive, leaf, read_folded, total

SVG = "{http://www.w3.org/2000/svg}"


class Frame:
    def __init__(self, g):
        self.x = int(g.get("data-x"))
        self.s = int(g.get("data-s"))
        self.d = int(g.get("data-d"))
        self.merged = g.get("class") == "m"
        lines = g.find(SVG + "title").text.split("\n")
        self.name = escape(lines[0])
        self.module = lines[1] if len(lines) > 2 else None
        if self.module and self.module.endswith(" (inlined)"):
            self.name += "_[i]"
        self.parent = None


def read_svg(path):
    root = ET.parse(path).getroot()
    frames = [Frame(g) for g in root.iter(SVG + "g") if g.get("class") in ("f", "m")]
    by_depth = {}
    for f in frames:
        by_depth.setdefault(f.d, []).append(f)
    for level in by_depth.values():
        level.sort(key=lambda f: f.x)
    problems = []
    for f in frames:
        if f.d == 0:
            continue
        level = by_depth.get(f.d - 1, [])
        i = bisect.bisect_right([p.x for p in level], f.x) - 1
        if i < 0 or not (level[i].x <= f.x and f.x + f.s <= level[i].x + level[i].s):
            problems.append("frame %s at depth %d, samples [%d, %d) has no parent"
                            % (f.name, f.d, f.x, f.x + f.s))
            continue
        f.parent = level[i]
    return frames, by_depth, problems


def svg_inclusive(frames):
    """{name: samples under it}, from the frames below the root."""
    out = {}
    for f in frames:
        if f.d == 0 or f.merged:
            continue
        a, nested = f.parent, False
        while a is not None and a.d > 0:
            nested |= a.name == f.name
            a = a.parent
        if not nested:
            out[f.name] = out.get(f.name, 0) + f.s
    return out


def merged_default(frames):
    return [f for f in frames if f.merged]


def structure_problems(frames, by_depth, expected_total):
    problems = []
    roots = by_depth.get(0, [])
    if len(roots) != 1 or roots[0].s != expected_total:
        problems.append("root frames %s, expected one with %d samples"
                        % ([(r.name, r.s) for r in roots], expected_total))
    children = {}
    for f in frames:
        if f.parent is not None:
            children.setdefault(id(f.parent), []).append(f)
    for f in frames:
        kids = sorted(children.get(id(f), []), key=lambda k: k.x)
        if sum(k.s for k in kids) > f.s:
            problems.append("children of %s hold more samples than it" % f.name)
        for a, b in zip(kids, kids[1:]):
            if a.x + a.s > b.x:
                problems.append("%s and %s overlap" % (a.name, b.name))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folded", required=True)
    ap.add_argument("--svg-exact", required=True)
    ap.add_argument("--svg-default", required=True)
    ap.add_argument("--svg-reverse", required=True)
    ap.add_argument("--tap-start", type=int, default=1)
    args = ap.parse_args()
    tap = Tap(args.tap_start)

    stacks = read_folded(args.folded)
    want = inclusive(stacks)
    n = total(stacks)

    # exact
    frames, by_depth, problems = read_svg(args.svg_exact)
    problems += structure_problems(frames, by_depth, n)
    got = svg_inclusive(frames)
    problems += diff_counts(got, want)
    merged = [f for f in frames if f.merged]
    if merged:
        problems.append("%d merged frames with --minwidth 0" % len(merged))
    tap.check(not problems,
              "svg --minwidth 0: the samples under each of %d functions and processes equal "
              "the folded output's (%d samples)" % (len(want), n), problems)

    # default
    frames, by_depth, problems = read_svg(args.svg_default)
    problems += structure_problems(frames, by_depth, n)
    got = svg_inclusive(frames)
    for name, count in got.items():
        if name not in want or count > want[name]:
            problems.append("%s: %d samples, folded says %s" % (name, count, want.get(name)))
    tap.check(not problems,
              "svg default --minwidth: the root holds all %d samples, frames nest, and the %d "
              "functions drawn (in %d frames, %d merged) have at most folded's samples"
              % (n, len(got), len(frames), len(merged_default(frames))), problems[:10])

    # reverse
    frames, by_depth, problems = read_svg(args.svg_reverse)
    problems += structure_problems(frames, by_depth, n)
    problems += diff_counts(svg_inclusive(frames), want)
    first = {}
    for f in by_depth.get(2, []):
        first[f.name] = first.get(f.name, 0) + f.s
    problems += ["first level: " + p for p in diff_counts(first, leaf(stacks))]
    tap.check(not problems,
              "svg --reverse: the same samples under each function, and the level under each "
              "process is the innermost frames with folded's leaf counts", problems)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
