#!/usr/bin/env python3
"""Copy a perf.data in pipe format (perf record -o -), keeping the samples of
the given pids only.  Every other record (attrs, features, mmaps, comms,
forks, exits, rounds) is kept, so that the copy describes the same processes
with fewer samples.

Usage: filter-pipe-samples.py IN OUT PID[,PID...]

Only what perf record writes on this machine is handled: one native-endian
attr (HEADER_ATTR) per event, and samples whose pid follows the optional
IDENTIFIER and IP fields.  Only the standard library is used.
"""

import struct
import sys

PERF_RECORD_SAMPLE = 9
PERF_RECORD_HEADER_ATTR = 64
SAMPLE_IP = 1 << 0
SAMPLE_IDENTIFIER = 1 << 16


def main(argv):
    src, dst, pids = argv[0], argv[1], {int(p) for p in argv[2].split(",")}
    data = open(src, "rb").read()
    if data[:8] != b"PERFILE2" or struct.unpack_from("<Q", data, 8)[0] != 16:
        sys.exit("%s: not a perf.data in pipe format" % src)
    out = [data[:16]]
    sample_type = None
    off = 16
    kept = dropped = 0
    while off + 8 <= len(data):
        rtype, _misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8 or off + size > len(data):
            sys.exit("%s: bad record at byte %d" % (src, off))
        rec = data[off:off + size]
        off += size
        if rtype == PERF_RECORD_HEADER_ATTR:
            st = struct.unpack_from("<Q", rec, 8 + 24)[0]
            if sample_type is not None and st != sample_type:
                sys.exit("%s: events with different sample types" % src)
            sample_type = st
        elif rtype == PERF_RECORD_SAMPLE:
            at = 8
            if sample_type & SAMPLE_IDENTIFIER:
                at += 8
            if sample_type & SAMPLE_IP:
                at += 8
            pid = struct.unpack_from("<i", rec, at)[0]
            if pid not in pids:
                dropped += 1
                continue
            kept += 1
        out.append(rec)
    open(dst, "wb").write(b"".join(out))
    print("kept %d samples, dropped %d" % (kept, dropped))


if __name__ == "__main__":
    main(sys.argv[1:])
