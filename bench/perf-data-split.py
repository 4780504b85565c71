#!/usr/bin/env python3
"""perf-data-split.py: cuts a perf.data file in two at a record boundary.

    perf-data-split.py IN FRACTION FIRST SECOND

FIRST gets IN's records up to the first record boundary at or past
FRACTION of the data section; SECOND gets the records of FIRST that are
not samples (the processes' history: their mmaps, comms, forks, exits),
then the rest of IN.  Both keep IN's header, attributes and feature
sections, so a tool reads each as a recording of its own.  Unwinding FIRST
and then SECOND gives IN's output when the file's order is its records'
time order around the cut (one process at a time, as bench-perf-script.sh
records them); where records are ordered by time across rounds (several
CPUs' processes interleaved), the halves may differ from the whole, and
the bench checks that they do not before it uses them.

bench-perf-script.sh uses it for two anchors of -j 2: how long a run on
the first 1% of a recording takes (the start: exec, set-up, the first
samples' files, which no split of the samples divides), and the two halves
unwound at once by two processes, a split by bytes with nothing handed
over between them.

Only what `perf record` writes to a file is accepted: little-endian
PERFILE2, not a pipe, no compressed records (-z), no AUX area data.
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9
PERF_RECORD_AUXTRACE = 71
PERF_RECORD_COMPRESSED = 81
HEADER_SIZE = 104          # struct perf_file_header
FEATURE_BITS = (72, 104)   # adds_features: 256 bits


def die(msg):
    sys.exit(f"perf-data-split.py: {msg}")


def main():
    if len(sys.argv) != 5:
        die("usage: perf-data-split.py IN FRACTION FIRST SECOND")
    path, fraction, first, second = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    if not 0 < fraction < 1:
        die(f"FRACTION {fraction} is not between 0 and 1")
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < HEADER_SIZE or buf[:8] != b"PERFILE2":
        die(f"{path}: not a little-endian perf.data file (PERFILE2)")
    (size,) = struct.unpack_from("<Q", buf, 8)
    if size != HEADER_SIZE:
        die(f"{path}: a header of {size} bytes (a pipe's recording?), not {HEADER_SIZE}")
    data_off, data_size = struct.unpack_from("<QQ", buf, 40)
    if data_off + data_size > len(buf):
        die(f"{path}: the data section runs past the end of the file")
    # The feature sections' table follows the data section: one (offset,
    # size) per bit set in adds_features.  Their contents are copied after
    # each new data section, the offsets rewritten.
    n_features = sum(bin(b).count("1") for b in buf[FEATURE_BITS[0]:FEATURE_BITS[1]])
    table = data_off + data_size
    features = [struct.unpack_from("<QQ", buf, table + 16 * i) for i in range(n_features)]

    cut = data_off + int(data_size * fraction)
    end = data_off + data_size
    off = data_off
    history = []
    while off < cut:
        rtype, _misc, rsize = struct.unpack_from("<IHH", buf, off)
        if rsize < 8 or off + rsize > end:
            die(f"{path}: a record of {rsize} bytes at offset {off}")
        if rtype == PERF_RECORD_COMPRESSED:
            die(f"{path}: compressed records (perf record -z) are not split")
        if rtype == PERF_RECORD_AUXTRACE:
            die(f"{path}: AUX area data (its bytes follow the record) is not split")
        if rtype != PERF_RECORD_SAMPLE:
            history.append(buf[off:off + rsize])
        off += rsize

    def write(name, data):
        header = bytearray(buf[:data_off])
        struct.pack_into("<QQ", header, 40, data_off, len(data))
        first_feature = data_off + len(data) + 16 * n_features
        table_out = bytearray()
        contents = bytearray()
        for f_off, f_size in features:
            table_out += struct.pack("<QQ", first_feature + len(contents), f_size)
            contents += buf[f_off:f_off + f_size]
        with open(name, "wb") as out:
            out.write(header)
            out.write(data)
            out.write(table_out)
            out.write(contents)

    write(first, buf[data_off:off])
    write(second, b"".join(history) + buf[off:end])
    print(f"{path}: cut at byte {off - data_off} of {data_size} of the data; "
          f"{len(history)} records of the first part carried to the second")


if __name__ == "__main__":
    main()
