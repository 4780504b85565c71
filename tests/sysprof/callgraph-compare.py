#!/usr/bin/env python3
"""Holds the call tree Sysprof builds of a capture (sysprof-callgraph's
folded lines) against eu-stacktrace's own outputs of the same input.

  callgraph-compare.py CALLGRAPH FOLDED JSON

CALLGRAPH: "[NAME];f1;...;fn COUNT" lines of sysprof-callgraph.
FOLDED:    -f folded of the same input ("comm;f1;...;fn COUNT").
JSON:      -f json of the same input (pid and comm of each sample).

Holds:
  - the function stacks and their counts are equal (the process row and
    the comm left out): the same functions, as many samples each.  Names
    are compared without symbol versions and leading underscores (aliases
    of one address: clock_gettime@GLIBC_2.2.5 and __clock_gettime); where
    Sysprof's ELF resolver gives a name -f folded never uses (another
    alias: memcpy for memmove; "In file ..." for a size-less symbol such
    as ld.so's _start), or -f folded one Sysprof never uses, that frame
    matches any name at its depth: the program's own functions, named
    alike on both sides, must match exactly.  Those names, the samples
    paired through them and the pairs of names are printed;
  - every process row is the name of a pid's exec'd command: the samples
    under each row are as many as the samples of the pids whose last comm
    (the command they exec'd) is that name; no row is "[perf-exec]";
  - no "[Process N]" row (a pid without PROCESS frame), unless folded has
    no user frame for those samples either.

Exit status 0 when all hold; the differences on stderr otherwise.
"""

import collections
import json
import sys


def split_line(line):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    return stack, int(count)


def norm(name):
    """A name as both sides can be held against each other: no symbol
    version, no leading underscores; Sysprof's "In file /usr/bin/dash" is
    -f folded's "[dash]" (an address in a file without a symbol for it);
    a PLT entry keeps its "@plt", a name Sysprof never shows (it has no
    PLT symbols, so its side of such a frame is "In file ...")."""
    if name.startswith("In file "):
        return "[%s]" % name.rsplit("/", 1)[-1]
    if name.endswith("@plt"):
        return name.lstrip("_")
    return name.split("@", 1)[0].lstrip("_")


def compatible(t, f, known, known_tree):
    """Whether Sysprof's stack T and -f folded's stack F (lists of names)
    can be the same samples: of one depth, and at each depth the same
    name, or a name the other side never uses (an alias, "In file ...")."""
    return len(t) == len(f) and all(a == b or a not in known or b not in known_tree
                                    for a, b in zip(t, f))


def match(tree, folded, known, known_tree):
    """Pairs the samples of TREE and FOLDED (Counters of stacks): equal
    stacks first, then stacks that are compatible (see above), as many
    samples as can be paired.  That is a maximum flow: a greedy pairing
    can spend a stack on the wrong partner (Sysprof's "In file dash" on a
    PLT leaf taken by folded's strcmp leaf, whose own Sysprof twin is then
    left over), so the pairs are found by augmenting paths.  Returns the
    Counters of what stays unpaired, how many samples were paired through
    such a name, and the pairs of names."""
    tree = collections.Counter(tree)
    folded = collections.Counter(folded)
    common = tree & folded
    tree -= common
    folded -= common
    ts = sorted(tree)
    fs = sorted(folded)
    split_f = [f.split(";") for f in fs]
    edges = [[j for j, fn in enumerate(split_f)
              if compatible(t.split(";"), fn, known, known_tree)] for t in ts]
    flow = collections.Counter()          # (i, j) -> samples paired
    left_t = [tree[t] for t in ts]
    left_f = [folded[f] for f in fs]

    def augment(i, seen):
        """A path from tree stack I to a folded stack with samples left,
        through pairs that may be undone; returns its end or None."""
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if left_f[j] > 0:
                return [(i, j)]
            for k in range(len(ts)):
                if flow[(k, j)] > 0 and k != i:
                    rest = augment(k, seen)
                    if rest is not None:
                        return [(i, j), (k, j)] + rest
        return None

    for i in range(len(ts)):
        while left_t[i] > 0:
            path = augment(i, set())
            if path is None:
                break
            # path: (i, j0), (k1, j0), (k1, j1), ...: add the odd pairs,
            # undo the even ones, one sample along it.
            for n, edge in enumerate(path):
                flow[edge] += 1 if n % 2 == 0 else -1
            left_t[i] -= 1
            left_f[path[-1][1]] -= 1
    through = 0
    pairs = collections.Counter()
    for (i, j), n in flow.items():
        if n <= 0:
            continue
        tree[ts[i]] -= n
        folded[fs[j]] -= n
        through += n
        for a, b in zip(ts[i].split(";"), split_f[j]):
            if a != b:
                pairs[(a, b)] += n
    return +tree, +folded, through, pairs


def normalize(stacks):
    out = collections.Counter()
    for funcs, c in stacks.items():
        out[";".join(norm(n) for n in funcs.split(";")) if funcs else ""] += c
    return out


def names_of(stacks):
    return {norm(n) for funcs in stacks for n in funcs.split(";") if funcs}


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    tree_stacks = collections.Counter()
    rows = collections.Counter()
    process_rows = collections.Counter()
    with open(argv[1]) as f:
        for line in f:
            stack, count = split_line(line)
            row, _, funcs = stack.partition(";")
            tree_stacks[funcs] += count
            rows[row] += count
            if row.startswith("[Process "):
                process_rows[funcs] += count
    folded_stacks = collections.Counter()
    with open(argv[2]) as f:
        for line in f:
            stack, count = split_line(line)
            _, _, funcs = stack.partition(";")
            folded_stacks[funcs] += count
    last = {}
    with open(argv[3]) as f:
        for line in f:
            s = json.loads(line)
            if s["pid"] not in last or s["time"] >= last[s["pid"]][0]:
                last[s["pid"]] = (s["time"], s["comm"])
    by_pid = collections.Counter()
    with open(argv[3]) as f:
        for line in f:
            s = json.loads(line)
            by_pid["[%s]" % last[s["pid"]][1]] += 1

    ok = True
    total = sum(tree_stacks.values())
    print("# Sysprof's tree: %d samples, %d stacks, rows %s"
          % (total, len(tree_stacks), dict(rows)))
    tree_n = normalize(tree_stacks)
    folded_n = normalize(folded_stacks)
    known = names_of(folded_n)
    print("# names only in Sysprof's tree: %s" % sorted(names_of(tree_n) - known))
    print("# names only in -f folded: %s" % sorted(names_of(folded_n) - names_of(tree_n)))
    extra, missing, through, pairs = match(tree_n, folded_n, known, names_of(tree_n))
    print("# samples paired through those names: %d of %d" % (through, total))
    for (a, b), c in pairs.most_common(8):
        print("#   Sysprof %s / -f folded %s: %d frames" % (a, b, c))
    if extra or missing:
        ok = False
        print("function stacks differ: %d samples only in -f folded, %d only in "
              "Sysprof's tree" % (sum(missing.values()), sum(extra.values())),
              file=sys.stderr)
        for name, c in list(missing.items())[:5]:
            print("  folded only (%d): %s" % (c, name), file=sys.stderr)
        for name, c in list(extra.items())[:5]:
            print("  Sysprof only (%d): %s" % (c, name), file=sys.stderr)
    if rows != by_pid:
        ok = False
        print("process rows differ: Sysprof %s, by exec'd command %s"
              % (dict(rows), dict(by_pid)), file=sys.stderr)
    if "[perf-exec]" in rows:
        ok = False
        print("a [perf-exec] row", file=sys.stderr)
    lacking = sum(c for funcs, c in process_rows.items() if funcs == "")
    if lacking and folded_stacks.get("", 0) < lacking:
        ok = False
        print("%d samples under [Process N] rows have no user frames" % lacking,
              file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
