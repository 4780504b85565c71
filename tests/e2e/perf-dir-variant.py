#!/usr/bin/env python3
"""Make hostile or broken variants of a perf.data directory's header file.

  perf-dir-variant.py dir-version FILE N   set HEADER_DIR_FORMAT's version
  perf-dir-variant.py bad-size FILE        a data.N file (FILE): its second
                                           record's size is made 4, smaller
                                           than a record header; prints the
                                           byte offset of that record

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


def main(argv):
    if len(argv) == 3 and argv[0] == "dir-version":
        dir_version(argv[1], int(argv[2]))
    elif len(argv) == 2 and argv[0] == "bad-size":
        bad_size(argv[1])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
