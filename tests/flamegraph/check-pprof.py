#!/usr/bin/env python3
"""Reads an eu-stacktrace -f pprof file with `go tool pprof -top` and
`-traces`, and compares what pprof says with the folded output of the same
recording (both with or both without --inline).

    check-pprof.py --folded F --pprof P --go GO --tap-start N

prints one TAP line per check:
  reads   go tool pprof reads the file: sample types samples/count and
          cpu/nanoseconds, the program's file as mapping[0]
  top     -top: every function's flat and cum samples equal folded's (flat:
          innermost frame; cum: anywhere in the stack), so the top
          functions and their order agree; -top has one line per function,
          whether it was inlined or not
  traces  -traces: each sample's stack, with its comm label, and its count,
          equal folded's lines (the pid and tid labels are there too); samples
          without frames count in -top's total, but -traces leaves them out
"""

import argparse
import os
import re
import subprocess
import sys

from folded import Tap, diff_counts, escape, inclusive, leaf, read_folded, total


def pprof(go, args, path, home):
    env = dict(os.environ)
    # No network, no symbolization (the profile carries its function names),
    # nothing written under the user's HOME.
    env.update({"PPROF_BINARY_PATH": "/nonexistent", "GOTOOLCHAIN": "local",
                "GOFLAGS": "", "GO111MODULE": "off"})
    if home:
        env.update({"HOME": home, "PPROF_TMPDIR": home, "GOCACHE": os.path.join(home, "go")})
    r = subprocess.run([go, "tool", "pprof"] + args + [path], env=env, timeout=120,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return r.returncode, r.stdout, r.stderr


def name_of(text):
    """A pprof function name as folded writes it: pprof marks the functions
    inlined at a location "NAME (inline)", folded "NAME_[i]"; -top marks a
    function inlined in some places only "NAME (partial-inline)"."""
    if text.endswith(" (partial-inline)"):
        return escape(text[:-len(" (partial-inline)")])
    if text.endswith(" (inline)"):
        return escape(text[:-len(" (inline)")]) + "_[i]"
    return escape(text)


def plain(name):
    return name[:-len("_[i]")] if name.endswith("_[i]") else name


def parse_top(text):
    """{name: (flat, cum)} and the header lines of pprof -top."""
    rows, header, in_rows = {}, [], False
    for line in text.splitlines():
        if in_rows:
            m = re.match(r"\s*(\d+)\s+\S+%\s+\S+%\s+(\d+)\s+\S+%\s+(.*)$", line)
            if m:
                # -top has one node per function, inlined somewhere or not.
                name = plain(name_of(m.group(3)))
                flat, cum = rows.get(name, (0, 0))
                rows[name] = (flat + int(m.group(1)), max(cum, int(m.group(2))))
        elif re.match(r"\s*flat\s+flat%", line):
            in_rows = True
        else:
            header.append(line)
    return rows, header


def parse_traces(text):
    """{(comm, outermost, ..., innermost): count} of pprof -traces, and the
    label names seen."""
    stacks, labels = {}, set()
    for block in re.split(r"^-+\+-+$", text, flags=re.M)[1:]:
        comm, frames, count = "[unknown]", [], None
        for line in block.splitlines():
            m = re.match(r"^\s*(\w+):\s+(.*)$", line)
            if m and count is None:
                labels.add(m.group(1))
                if m.group(1) == "comm":
                    comm = m.group(2).strip()
                continue
            m = re.match(r"^\s+(\d+)\s{3}(.*)$", line)
            if m and count is None:
                count = int(m.group(1))
                frames.append(name_of(m.group(2)))
            elif line.strip() and count is not None:
                frames.append(name_of(line.strip()))
        if count is None:
            continue
        key = (escape(comm),) + tuple(reversed(frames))
        stacks[key] = stacks.get(key, 0) + count
    return stacks, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folded", required=True)
    ap.add_argument("--pprof", required=True)
    ap.add_argument("--go", default="go")
    ap.add_argument("--home", help="HOME for go (default: the caller's)")
    ap.add_argument("--tap-start", type=int, default=1)
    ap.add_argument("--program", help="the path of the sampled program")
    args = ap.parse_args()
    tap = Tap(args.tap_start)
    stacks = read_folded(args.folded)
    n = total(stacks)

    # reads
    rc, raw, err = pprof(args.go, ["-raw"], args.pprof, args.home)
    problems = [] if rc == 0 else ["exit status %d" % rc] + err.splitlines()[-10:]
    if rc == 0:
        for want in ("samples/count", "cpu/nanoseconds"):
            if want not in raw:
                problems.append("no sample type %s in -raw" % want)
        mappings = raw.split("Mappings", 1)[-1].splitlines()[1:2]
        if args.program and not (mappings and args.program in mappings[0]):
            problems.append("mapping[0] is %s, not %s" % (mappings, args.program))
    tap.check(not problems, "go tool pprof reads the profile: sample types samples/count and "
              "cpu/nanoseconds, the program as mapping[0]", problems)

    # top
    rc, out, err = pprof(args.go, ["-top", "-sample_index=samples", "-nodecount=1000000",
                                   "-nodefraction=0", "-edgefraction=0"], args.pprof, args.home)
    problems = [] if rc == 0 else ["exit status %d" % rc] + err.splitlines()[-10:]
    rows, header = parse_top(out)
    flat = {k: v[0] for k, v in rows.items() if v[0] > 0}
    cum = {k: v[1] for k, v in rows.items()}
    plain_stacks = {}
    for key, count in stacks.items():
        key = tuple(plain(name) for name in key)
        plain_stacks[key] = plain_stacks.get(key, 0) + count
    problems += ["flat " + p for p in diff_counts(flat, leaf(plain_stacks))]
    problems += ["cum " + p for p in diff_counts(cum, inclusive(plain_stacks, skip_comm=True))]
    if not any("of %d total" % n in h for h in header):
        problems.append("total is not %d: %s" % (n, " / ".join(header[-3:])))
    top5 = sorted(flat.items(), key=lambda kv: -kv[1])[:5]
    tap.check(rc == 0 and not problems and rows,
              "go tool pprof -top: flat and cum samples of %d functions equal folded's "
              "(top: %s)" % (len(rows), ", ".join("%s %d" % kv for kv in top5)), problems)

    # traces
    rc, out, err = pprof(args.go, ["-traces", "-sample_index=samples"], args.pprof, args.home)
    problems = [] if rc == 0 else ["exit status %d" % rc] + err.splitlines()[-10:]
    got, labels = parse_traces(out)
    for name in ("comm", "pid", "tid"):
        if name not in labels:
            problems.append("no %s label" % name)
    # pprof -traces leaves out the samples without frames (no user stack).
    framed = {k: v for k, v in stacks.items() if len(k) > 1}
    for key in sorted(set(got) | set(framed)):
        if got.get(key) != framed.get(key):
            problems.append("%s: %s, folded says %s" % (";".join(key), got.get(key),
                                                         stacks.get(key)))
    tap.check(rc == 0 and not problems,
              "go tool pprof -traces: the %d distinct stacks of %d samples, with their comm, "
              "equal folded's lines (%d samples without frames, which -traces leaves out)"
              % (len(framed), sum(framed.values()), n - sum(framed.values())), problems[:12])
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
