#!/usr/bin/env python3
"""Compares eu-stacktrace's unwinding of epilogue.sh's stops with gdb's
backtraces (epilogue-gdb.py's JSON lines).  Prints one line per kind of
stop: "KIND STOPS EQUAL", then up to 3 differences as "# ..." lines.

Kinds: "epilogue" (pc in work, from the pops to the tail call's jmp),
"plt" (pc in the PLT), "lazy" (ld.so's lazy-binding trampoline and the
first instructions of _dl_fixup, which it calls).  Our names, up to main, must be gdb's.  gdb's
fallback unwinder does not know the words the lazy path pushes (after the
push of the index, in PLT0): there it shows "??" frames between the stub
and work; they are dropped, and an unnamed frame 0 (PLT0 has no symbol)
is "??" on both sides."""
import json
import sys


def main(stops_path, ours_path):
    stops = [json.loads(line) for line in open(stops_path)]
    ours = [json.loads(line) for line in open(ours_path)]
    if len(stops) != len(ours):
        print("# %d stops but %d samples in ours" % (len(stops), len(ours)))
        return 1
    counts = {"epilogue": [0, 0], "plt": [0, 0], "lazy": [0, 0]}
    shown = 0
    for s, o in zip(stops, ours):
        kind = "lazy" if s.get("lazy") else "plt" if s["in_plt"] else "epilogue"
        if not s["reached_main"]:
            print("# gdb did not reach main at %#x: %s" % (s["pc"], " ".join(s["bt"])))
            counts[kind][0] += 1
            continue
        want = s["bt"][:1] + [n for n in s["bt"][1:] if n != "??"]
        got = []
        for f in o["frames"]:
            got.append(f.get("symbol") or "??")
            if got[-1] == "main":
                break
        counts[kind][0] += 1
        if got == want and o.get("stop") == "end":
            counts[kind][1] += 1
        elif shown < 3:
            shown += 1
            print("# at %#x gdb: %s" % (s["pc"], " ".join(want)))
            print("#   ours: %s (stop: %s)" % (" ".join(got), o.get("stop")))
    for kind, (n, equal) in counts.items():
        print("%s %d %d" % (kind, n, equal))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
