#!/usr/bin/env python3
"""check-frames.py JSONL SCENARIO [KIND:NAME|host] [min-samples]: every frame of
the test program and its library resolves to the container's version
(ctr_* functions, main), none to the host's (host_*).  Prints a table row.
CTR_PREFIX: where the program and library live (default /opt/ctrtest/)."""
import json, os, sys
prefix = os.environ.get("CTR_PREFIX", "/opt/ctrtest/")
path, scenario = sys.argv[1], sys.argv[2]
want = sys.argv[3] if len(sys.argv) > 3 else None
need = int(sys.argv[4]) if len(sys.argv) > 4 else 20
samples = frames = good = wrong = 0
labels = set()
for line in open(path):
    s = json.loads(line)
    if s.get("comm") != "ctrprog":
        continue
    samples += 1
    c = s.get("container")
    labels.add(f"{c['kind']}:{c['name']}" if c else "host")
    for f in s["frames"]:
        mod = f.get("module") or ""
        sym = f.get("symbol")
        if prefix not in mod and mod != "":
            continue
        if mod == "" and sym is None and f is not s["frames"][-1]:
            pass
        frames += 1
        if sym and (sym.startswith("ctr_") or sym.removesuffix("@plt") in ("main", "ctrwork", "_start")):
            good += 1
        elif sym and sym.startswith("host_"):
            wrong += 1
print(f"# TABLE {scenario:<34} samples {samples:5d}  frames resolved {good:6d}/{frames:<6d} wrong {wrong} labels {','.join(sorted(labels))}")
ok = samples >= need and frames > 0 and good == frames and wrong == 0
if want is not None and labels != {want}:
    ok = False
sys.exit(0 if ok else 1)
