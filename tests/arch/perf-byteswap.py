#!/usr/bin/env python3
"""Rewrite a little-endian perf.data (file or pipe mode) as perf on a
big-endian machine (s390x, ppc64) would have written it: every integer in
big-endian order, perf_event_attr's bitfield bytes bit-reversed (a
big-endian compiler fills each byte from its top bit), byte arrays (file
names, build-ids, the user stack copy, raw data) as they are.  Standard
library only; written apart from src/core/input/perf-swap.c, from perf's
layouts (linux/perf_event.h, tools/perf/util/header.c), so that the two
check each other.

  perf-byteswap.py IN OUT

Feature sections other than build-ids, hostname, arch, CPU description
and sample times are left out (their bits cleared), and so are pipe-mode
records of perf's own that carry none of those: eu-stacktrace reads none
of them.  zstd-compressed records (perf record -z) are refused."""

import struct
import sys

S = {n: 1 << i for i, n in enumerate(
    "IP TID TIME ADDR READ CALLCHAIN ID CPU PERIOD STREAM_ID RAW BRANCH_STACK "
    "REGS_USER STACK_USER WEIGHT DATA_SRC IDENTIFIER".split())}
S["IDENTIFIER"] = 1 << 16
FMT_TOTAL_TIME_ENABLED, FMT_TOTAL_TIME_RUNNING, FMT_ID, FMT_GROUP, FMT_LOST = 1, 2, 4, 8, 16
BRANCH_HW_INDEX = 1 << 17
KEPT_FEATURES = {2, 3, 6, 8, 21}   # build-id, hostname, arch, cpudesc, sample time


class Buf:
    """A bytearray whose integers are swapped in place."""

    def __init__(self, data):
        self.b = bytearray(data)

    def get(self, fmt, off):
        return struct.unpack_from("<" + fmt, self.b, off)[0]

    def swap(self, fmt, off, n=1):
        size = struct.calcsize(fmt)
        for i in range(n):
            o = off + i * size
            v = struct.unpack_from("<" + fmt, self.b, o)[0]
            struct.pack_into(">" + fmt, self.b, o, v)
        return off + n * size


def swap_attr(buf, off, size):
    fields = [(0, "I"), (4, "I"), (8, "Q"), (16, "Q"), (24, "Q"), (32, "Q"), (48, "I"),
              (52, "I"), (56, "Q"), (64, "Q"), (72, "Q"), (80, "Q"), (88, "I"), (92, "i"),
              (96, "Q"), (104, "I"), (108, "H"), (110, "H"), (112, "I"), (116, "I"),
              (120, "Q"), (128, "Q")]
    for o, f in fields:
        if o + struct.calcsize(f) <= size:
            buf.swap(f, off + o)
    for i in range(40, 48):
        if i < size:
            buf.b[off + i] = int("{:08b}".format(buf.b[off + i])[::-1], 2)


def attr_info(buf, off, size):
    a = {"sample_type": buf.get("Q", off + 24), "read_format": buf.get("Q", off + 32),
         "flags": buf.get("Q", off + 40)}
    a["branch_sample_type"] = buf.get("Q", off + 72) if size >= 80 else 0
    a["regs_user"] = buf.get("Q", off + 80) if size >= 88 else 0
    a["sample_id_all"] = bool(a["flags"] & (1 << 18))
    return a


class Swapper:
    def __init__(self):
        self.attrs = []
        self.by_id = {}

    def add_attr(self, a, ids):
        self.attrs.append(a)
        for i in ids:
            self.by_id[i] = a

    def attr_for(self, buf, off, rtype, size):
        """Read before the record is swapped (perf's evlist__event2evsel)."""
        if len(self.attrs) == 1:
            return self.attrs[0]
        first = self.attrs[0]
        t = first["sample_type"]
        if rtype == 9:
            if t & S["IDENTIFIER"]:
                pos = 0
            elif t & S["ID"]:
                pos = sum(1 for k in ("IP", "TID", "TIME", "ADDR") if t & S[k])
            else:
                return first
            return self.by_id.get(buf.get("Q", off + 8 + 8 * pos), first)
        if first["sample_id_all"] and t & S["IDENTIFIER"]:
            return self.by_id.get(buf.get("Q", off + size - 8), first)
        return first

    def swap_trailer(self, buf, a, end):
        t = a["sample_type"]
        n = 8 * sum(1 for k in ("TID", "TIME", "ID", "STREAM_ID", "CPU", "IDENTIFIER") if t & S[k])
        o = end - n
        if t & S["TID"]:
            o = buf.swap("I", o, 2)
        for k in ("TIME", "ID", "STREAM_ID"):
            if t & S[k]:
                o = buf.swap("Q", o)
        if t & S["CPU"]:
            o = buf.swap("I", o, 2)
        if t & S["IDENTIFIER"]:
            o = buf.swap("Q", o)
        return n

    def swap_sample(self, buf, a, o):
        t = a["sample_type"]
        for k in ("IDENTIFIER", "IP"):
            if t & S[k]:
                o = buf.swap("Q", o)
        if t & S["TID"]:
            o = buf.swap("I", o, 2)
        for k in ("TIME", "ADDR", "ID", "STREAM_ID"):
            if t & S[k]:
                o = buf.swap("Q", o)
        if t & S["CPU"]:
            o = buf.swap("I", o, 2)
        if t & S["PERIOD"]:
            o = buf.swap("Q", o)
        if t & S["READ"]:
            rf = a["read_format"]
            per = 1 + bool(rf & FMT_ID) + bool(rf & FMT_LOST)
            times = bool(rf & FMT_TOTAL_TIME_ENABLED) + bool(rf & FMT_TOTAL_TIME_RUNNING)
            if rf & FMT_GROUP:
                nr = buf.get("Q", o)
                o = buf.swap("Q", o, 1 + times + nr * per)
            else:
                o = buf.swap("Q", o, per + times)
        if t & S["CALLCHAIN"]:
            nr = buf.get("Q", o)
            o = buf.swap("Q", o, 1 + nr)
        if t & S["RAW"]:
            raw = buf.get("I", o)
            o = buf.swap("I", o) + raw
        if t & S["BRANCH_STACK"]:
            nr = buf.get("Q", o)
            hw = bool(a["branch_sample_type"] & BRANCH_HW_INDEX)
            o = buf.swap("Q", o, 1 + hw + 3 * nr)
        if t & S["REGS_USER"]:
            abi = buf.get("Q", o)
            o = buf.swap("Q", o)
            if abi:
                o = buf.swap("Q", o, bin(a["regs_user"]).count("1"))
        if t & S["STACK_USER"]:
            n = buf.get("Q", o)
            o = buf.swap("Q", o)
            if n:
                o = buf.swap("Q", o + n)   # the stack bytes stay; dyn_size swaps

    def swap_record(self, buf, off, drop=True):
        """Swaps the record at OFF; returns its size, or None to drop it
        (only when DROP: a pipe's records of perf's own that say nothing
        eu-stacktrace reads)."""
        rtype, misc, size = struct.unpack_from("<IHH", buf.b, off)
        if rtype == 81:
            sys.exit("perf-byteswap.py: zstd-compressed records are not supported")
        body = off + 8
        if rtype >= 64:
            if rtype == 64:    # HEADER_ATTR
                asize = buf.get("I", body + 4) or 64
                a = attr_info(buf, body, asize)
                ids = [buf.get("Q", body + asize + 8 * i) for i in range((size - 8 - asize) // 8)]
                self.add_attr(a, ids)
                swap_attr(buf, body, asize)
                buf.swap("Q", body + asize, len(ids))
            elif rtype == 67:  # HEADER_BUILD_ID
                buf.swap("I", body)
            elif rtype == 80:  # HEADER_FEATURE
                feat = buf.get("Q", body)
                if feat not in KEPT_FEATURES and feat != 32 and drop:
                    return None
                swap_feature(buf, feat, body + 8, size - 16)
                buf.swap("Q", body)
            elif rtype == 69:  # ID_INDEX: nr, then {id, idx, cpu, tid} entries
                buf.swap("Q", body, 1 + 4 * buf.get("Q", body))
            elif rtype != 68 and drop:  # FINISHED_ROUND has no body
                return None
            buf.swap("I", off)
            buf.swap("H", off + 4, 2)
            return size
        a = self.attr_for(buf, off, rtype, size)
        if rtype == 9:
            self.swap_sample(buf, a, body)
        else:
            end = off + size
            if a["sample_id_all"]:
                end -= self.swap_trailer(buf, a, end)
            if rtype in (1, 10):           # MMAP, MMAP2
                o = buf.swap("I", body, 2)
                o = buf.swap("Q", o, 3)
                if rtype == 10:
                    if misc & (1 << 14):   # build-id in place of dev/inode
                        o += 24
                    else:
                        o = buf.swap("I", o, 2)
                        o = buf.swap("Q", o, 2)
                    buf.swap("I", o, 2)    # prot, flags
            elif rtype == 3:               # COMM
                buf.swap("I", body, 2)
            elif rtype in (4, 7):          # EXIT, FORK
                buf.swap("Q", buf.swap("I", body, 4))
            elif rtype == 2:               # LOST
                buf.swap("Q", body, 2)
            elif rtype == 13:              # LOST_SAMPLES
                buf.swap("Q", body)
        buf.swap("I", off)
        buf.swap("H", off + 4, 2)
        return size


def swap_feature(buf, feat, off, size):
    if feat in (3, 6, 8):       # perf strings: u32 length, characters
        buf.swap("I", off)
    elif feat == 21:
        buf.swap("Q", off, 2)
    elif feat == 2:
        pos = off
        while pos + 8 <= off + size:
            esize = buf.get("H", pos + 6)
            buf.swap("I", pos)
            buf.swap("H", pos + 4, 2)
            buf.swap("i", pos + 8)
            if esize < 8:
                break
            pos += esize


def convert_pipe(data):
    buf = Buf(data)
    out = bytearray(b"PERFILE2"[::-1] + struct.pack(">Q", 16))
    sw = Swapper()
    off = 16
    while off + 8 <= len(data):
        size = buf.get("H", off + 6)
        if size < 8:
            sys.exit("perf-byteswap.py: record of %d bytes at %d" % (size, off))
        if sw.swap_record(buf, off) is not None:
            out += buf.b[off:off + size]
        off += size
    return bytes(out)


def convert_file(data):
    buf = Buf(data)
    (hsize, attr_size, attrs_off, attrs_size, data_off, data_size, _, _) = \
        struct.unpack_from("<8Q", data, 8)
    features = list(struct.unpack_from("<4Q", data, 72))
    sw = Swapper()
    for i in range(attrs_size // attr_size):
        o = attrs_off + i * attr_size
        asize = attr_size - 16
        ids_off, ids_size = struct.unpack_from("<QQ", data, o + asize)
        ids = [buf.get("Q", ids_off + 8 * k) for k in range(ids_size // 8)]
        sw.add_attr(attr_info(buf, o, asize), ids)
        swap_attr(buf, o, asize)
        buf.swap("Q", o + asize, 2)
        buf.swap("Q", ids_off, len(ids))
    off = data_off
    while off < data_off + data_size:
        size = buf.get("H", off + 6)
        if size < 8:
            sys.exit("perf-byteswap.py: record of %d bytes at %d" % (size, off))
        sw.swap_record(buf, off, drop=False)
        off += size
    # The feature table: the kept features' sections, in bit order.
    table = data_off + data_size
    kept = []
    idx = 0
    for bit in range(256):
        if not features[bit // 64] & (1 << (bit % 64)):
            continue
        sec_off, sec_size = struct.unpack_from("<QQ", data, table + 16 * idx)
        idx += 1
        if bit in KEPT_FEATURES:
            swap_feature(buf, bit, sec_off, sec_size)
            kept.append((bit, sec_off, sec_size))
    bits = [0, 0, 0, 0]
    for k, (bit, sec_off, sec_size) in enumerate(kept):
        bits[bit // 64] |= 1 << (bit % 64)
        struct.pack_into(">QQ", buf.b, table + 16 * k, sec_off, sec_size)
    struct.pack_into(">8Q", buf.b, 8, hsize, attr_size, attrs_off, attrs_size, data_off,
                     data_size, *struct.unpack_from("<2Q", data, 56))
    struct.pack_into(">4Q", buf.b, 72, *bits)
    buf.b[0:8] = b"PERFILE2"[::-1]
    return bytes(buf.b)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    data = open(argv[0], "rb").read()
    if data[:8] != b"PERFILE2":
        sys.exit("perf-byteswap.py: %s is not a little-endian perf.data" % argv[0])
    pipe = struct.unpack_from("<Q", data, 8)[0] == 16
    out = convert_pipe(data) if pipe else convert_file(data)
    with open(argv[1], "wb") as f:
        f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
