#!/usr/bin/env python3
"""Make hostile or broken variants of a perf.data directory's header file.

  perf-dir-variant.py dir-version FILE N   set HEADER_DIR_FORMAT's version
  perf-dir-variant.py bad-size FILE        a data.N file (FILE): its second
                                           record's size is made 4, smaller
                                           than a record header; prints the
                                           byte offset of that record
  perf-dir-variant.py killed FILE          the header file as a perf record
                                           that was killed leaves it: data
                                           size 0, no feature sections
  perf-dir-variant.py split DIR K          DIR's largest data.N split into K
                                           files, its records dealt out in
                                           turn (each file stays in order)
  perf-dir-variant.py maxrss CMD...        runs CMD, prints its peak RSS in
                                           KB; exits with its status

Only the standard library is used.
"""

import struct
import sys

HEADER_DIR_FORMAT = 24


def dir_version(path, version):
    with open(path, "r+b") as f:
        head = f.read(104)
        magic, size, attr_size = struct.unpack_from("<QQQ", head, 0)
        if magic != 0x32454C4946524550 or size != 104:
            raise SystemExit("%s: not a perf.data file header" % path)
        data_offset, data_size = struct.unpack_from("<QQ", head, 40)
        features = struct.unpack_from("<4Q", head, 72)
        bit = HEADER_DIR_FORMAT
        if not features[bit // 64] & (1 << (bit % 64)):
            raise SystemExit("%s: no HEADER_DIR_FORMAT feature" % path)
        index = sum(bin(features[b // 64] & (1 << (b % 64))).count("1")
                    for b in range(bit))
        f.seek(data_offset + data_size + 16 * index)
        sec_offset, sec_size = struct.unpack("<QQ", f.read(16))
        f.seek(sec_offset)
        f.write(struct.pack("<Q", version))


def bad_size(path):
    with open(path, "r+b") as f:
        first = f.read(8)
        _, _, size = struct.unpack("<IHH", first)
        f.seek(size + 6)
        f.write(struct.pack("<H", 4))
        print(size)


def killed(path):
    with open(path, "r+b") as f:
        head = f.read(104)
        data_offset, data_size = struct.unpack_from("<QQ", head, 40)
        f.seek(48)
        f.write(struct.pack("<Q", 0))
        f.truncate(data_offset + data_size)


def split(path, k):
    import os
    names = [n for n in os.listdir(path) if n.startswith("data.")]
    biggest = max(names, key=lambda n: os.path.getsize(os.path.join(path, n)))
    with open(os.path.join(path, biggest), "rb") as f:
        data = f.read()
    outs = [bytearray() for _ in range(k)]
    pos, i = 0, 0
    while pos + 8 <= len(data):
        size = struct.unpack_from("<H", data, pos + 6)[0]
        outs[i % k] += data[pos:pos + size]
        pos += size
        i += 1
    os.unlink(os.path.join(path, biggest))
    top = max(int(n[5:]) for n in names)
    for j, out in enumerate(outs):
        with open(os.path.join(path, "data.%d" % (top + 1 + j)), "wb") as f:
            f.write(out)


def maxrss(cmd):
    import resource
    import subprocess
    status = subprocess.call(cmd)
    print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(status)


def main(argv):
    if len(argv) == 3 and argv[0] == "dir-version":
        dir_version(argv[1], int(argv[2]))
    elif len(argv) == 2 and argv[0] == "bad-size":
        bad_size(argv[1])
    elif len(argv) == 2 and argv[0] == "killed":
        killed(argv[1])
    elif len(argv) == 3 and argv[0] == "split":
        split(argv[1], int(argv[2]))
    elif len(argv) >= 2 and argv[0] == "maxrss":
        maxrss(argv[1:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
