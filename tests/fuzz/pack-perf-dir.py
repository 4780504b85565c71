#!/usr/bin/env python3
"""Pack a perf.data directory (perf record --threads) into one input of
tests/fuzz/fuzz-perf-dir.c: one byte N-1 (N files), N little-endian u32
sizes, then the files: "data" first, then data.0, data.1, ... by number.

  pack-perf-dir.py DIR OUT
"""

import os
import struct
import sys


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    src, out = argv
    names = sorted((n for n in os.listdir(src) if n.startswith("data.")),
                   key=lambda n: int(n[5:]))
    files = ["data"] + names
    if len(files) > 8:
        raise SystemExit("%s: more than 8 files" % src)
    blobs = []
    for name in files:
        with open(os.path.join(src, name), "rb") as f:
            blobs.append(f.read())
    with open(out, "wb") as f:
        f.write(bytes([len(files) - 1]))
        for b in blobs:
            f.write(struct.pack("<I", len(b)))
        for b in blobs:
            f.write(b)


if __name__ == "__main__":
    main(sys.argv[1:])
