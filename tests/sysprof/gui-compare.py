#!/usr/bin/env python3
"""Holds what Sysprof's GUI showed (its Descendants tree of [Everything],
copied with its own Ctrl+C by gui-drive.sh) against the tree libsysprof-4
builds of the same capture (sysprof-callgraph's folded lines).

  gui-compare.py GUI_TREE CALLGRAPH NAME...

Holds: every row of the library's tree (process rows and user functions,
to the "- - kernel - -" rows; recursion folded as the GUI folds it) is a
row of the GUI's, at the same place,
with the same total (the GUI's percentage, to its two decimals), and the
GUI has no other user rows; each NAME (the program's functions and
process rows) is on screen in the GUI's tree.
"""

import collections
import re
import sys

ROW = re.compile(r"^\[\s*([0-9.]+)%\] \[\s*([0-9.]+)%\]    ( *)(.*)$")


def gui_rows(path):
    """{path tuple: total %} of the user rows below [Everything]."""
    rows = {}
    stack = []
    with open(path) as f:
        for line in f:
            m = ROW.match(line.rstrip("\n"))
            if not m:
                continue
            depth = len(m.group(3)) // 2
            name = m.group(4)
            stack[depth:] = [name]
            if stack[0] != "[Everything]" or depth == 0:
                continue
            if "- - kernel - -" in stack:
                continue
            rows[tuple(stack[1:])] = float(m.group(2))
    return rows


class Node:
    def __init__(self, name, parent):
        self.name, self.parent = name, parent
        self.children = {}
        self.cumulative = 0


def lib_rows(path):
    """The library's tree as the GUI's Descendants view of [Everything]
    shows it: Sysprof 3.46's build_tree_cb (sysprof-callgraph-page.c)
    folds a function already on the path (recursion) into that ancestor."""
    root = Node(None, None)
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            size = int(count)
            total += size
            node = root
            for name in stack.split(";"):
                match = node.children.get(name)
                if match is None:
                    up = node
                    while up is not root and up.name != name:
                        up = up.parent
                    match = up if up is not root else None
                if match is None:
                    match = node.children[name] = Node(name, node)
                node = match
            while node is not root:
                node.cumulative += size
                node = node.parent
    rows = {}

    def walk(node, prefix):
        for name, child in node.children.items():
            rows[prefix + (name,)] = 100.0 * child.cumulative / max(total, 1)
            walk(child, prefix + (name,))
    walk(root, ())
    return rows, total


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    gui = gui_rows(argv[1])
    lib, total = lib_rows(argv[2])
    print("# GUI: %d user rows; library: %d rows, %d samples" % (len(gui), len(lib), total))
    ok = True
    missing = [k for k in lib if k not in gui]
    extra = [k for k in gui if k not in lib]
    for k in missing[:5]:
        print("not in the GUI: %s" % ";".join(k), file=sys.stderr)
    for k in extra[:5]:
        print("only in the GUI: %s" % ";".join(k), file=sys.stderr)
    if missing or extra:
        ok = False
    off = [(k, gui[k], lib[k]) for k in lib if k in gui and abs(gui[k] - lib[k]) > 0.0051]
    for k, g, l in off[:5]:
        print("total differs: %s: GUI %.2f%%, library %.4f%%" % (";".join(k), g, l),
              file=sys.stderr)
    if off:
        ok = False
    shown = {n for k in gui for n in k}
    for name in argv[3:]:
        if name not in shown:
            ok = False
            print("%s is not in the GUI's tree" % name, file=sys.stderr)
    print("# process rows in the GUI: %s" % sorted(k[0] for k in gui if len(k) == 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
