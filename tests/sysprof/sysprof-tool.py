#!/usr/bin/env python3
"""Helpers of the Sysprof tests: look at, edit and compare capture streams.

  frames FILE                 one line per frame: OFFSET TYPE LEN
  strip IN OUT TYPE...        copy IN without the frames of the TYPEs
  same-frames STREAM CAPTURE  the frames of STREAM other than stack-user
                              (type 18) are in CAPTURE, byte for byte and in
                              order, and CAPTURE has one sample frame (type 2)
                              for each stack-user frame, at its place; the
                              headers are equal but for their end time
  corrupt KIND IN OUT         writes a damaged copy of a stack-user stream
                              and prints "OFFSET SAMPLES_BEFORE": where the
                              error must be reported, and how many samples
                              come before it.  KINDs: magic, short-header,
                              cut-frame-header, cut-frame, short-len,
                              past-end, unaligned-len, n-regs, stack-size
  compare-samples SAMPLES JSON
                              the samples that sysprof-check wrote (--samples)
                              against eu-stacktrace -f json of the same input:
                              same count, and for each, in order, the same
                              pid, tid, time, cpu and user addresses
  compare-json A B            two -f json outputs: equal but for "comm"

Exit status 0 when the check holds; the reason on stderr otherwise.  Only
the standard library is used.
"""

import json
import struct
import sys

HEADER = 256
FRAME = struct.Struct("<HhiqII")   # len, cpu, pid, time, type, padding
STACK_USER = 18
SAMPLE = 2
END_TIME_AT = 80                   # offset of end_time in the file header


def frames(data):
    """(offset, type, len) of every frame, by the lengths alone."""
    out = []
    at = HEADER
    while at + FRAME.size <= len(data):
        length, _, _, _, ftype, _ = FRAME.unpack_from(data, at)
        if length < FRAME.size:
            raise ValueError("frame at %d has length %d" % (at, length))
        out.append((at, ftype & 0xFF, length))
        at += length
    if at != len(data):
        raise ValueError("%d bytes after the last whole frame" % (len(data) - at))
    return out


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def die(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def cmd_frames(args):
    for at, ftype, length in frames(read(args[0])):
        print(at, ftype, length)


def cmd_strip(args):
    data = read(args[0])
    drop = {int(t) for t in args[2:]}
    out = bytearray(data[:HEADER])
    for at, ftype, length in frames(data):
        if ftype not in drop:
            out += data[at:at + length]
    write(args[1], bytes(out))


def cmd_same_frames(args):
    stream, capture = read(args[0]), read(args[1])
    if stream[:END_TIME_AT] != capture[:END_TIME_AT] \
            or stream[END_TIME_AT + 8:HEADER] != capture[END_TIME_AT + 8:HEADER]:
        die("the headers differ (beyond end_time)")
    a, b = frames(stream), frames(capture)
    if len(a) != len(b):
        die("%d frames in the stream, %d in the capture" % (len(a), len(b)))
    for i, ((at1, t1, l1), (at2, t2, l2)) in enumerate(zip(a, b)):
        if t1 == STACK_USER:
            if t2 != SAMPLE:
                die("frame %d: stack-user at %d became type %d" % (i, at1, t2))
            # Same cpu, pid and time.
            if stream[at1 + 2:at1 + 16] != capture[at2 + 2:at2 + 16]:
                die("frame %d: the sample's cpu, pid or time differ" % i)
        elif stream[at1:at1 + l1] != capture[at2:at2 + l2]:
            die("frame %d (type %d at byte %d) differs" % (i, t1, at1))
    print("%d frames, %d samples" % (len(a), sum(t == STACK_USER for _, t, _ in a)))


def cmd_corrupt(args):
    kind, src, dst = args
    data = bytearray(read(src))
    fr = frames(bytes(data))
    users = [f for f in fr if f[1] == STACK_USER]
    if len(users) < 20:
        die("the stream has only %d stack-user frames" % len(users))
    k = len(users) // 2                 # the frame to damage
    at, _, length = users[k]
    before = k
    if kind == "magic":
        data[0] ^= 0xFF
        offset, before = 0, 0
    elif kind == "short-header":
        data = data[:100]
        offset, before = 100, 0
    elif kind == "cut-frame-header":
        data = data[:at + 10]
        offset = at
    elif kind == "cut-frame":
        data = data[:at + length // 2]
        offset = at
    elif kind == "short-len":
        struct.pack_into("<H", data, at, 16)
        offset = at
    elif kind == "unaligned-len":
        struct.pack_into("<H", data, at, length - 4)
        offset = at
    elif kind == "past-end":
        last_at, _, last_len = fr[-1]
        struct.pack_into("<H", data, last_at, min(last_len + 64, 65528))
        offset = last_at
        before = sum(1 for f in users if f[0] < last_at)
    elif kind == "n-regs":
        (size,) = struct.unpack_from("<Q", data, at + 24)
        struct.pack_into("<I", data, at + 40 + size, 5000)
        offset = at + 40 + size
    elif kind == "stack-size":
        struct.pack_into("<Q", data, at + 24, length)
        offset = at + 24
    else:
        die("unknown kind " + kind)
    write(dst, bytes(data))
    print(offset, before)


def parse_samples(path):
    out = []
    with open(path) as f:
        for line in f:
            head, _, addrs = line.partition(":")
            pid, tid, time, cpu, _kernel = head.split()
            out.append(((int(pid), int(tid), int(time), int(cpu)),
                        [int(a, 16) for a in addrs.split()]))
    return out


def cmd_compare_samples(args):
    ours = parse_samples(args[0])
    with open(args[1]) as f:
        ref = [json.loads(line) for line in f]
    if len(ours) != len(ref):
        die("%d sample frames in the capture, %d samples in the json" % (len(ours), len(ref)))
    for i, ((key, addrs), obj) in enumerate(zip(ours, ref)):
        cpu = obj["cpu"] if obj["cpu"] < 0x8000 else obj["cpu"] - (1 << 32)
        want_key = (obj["pid"], obj["tid"], obj["time"], cpu)
        want = [int(fr["address"], 16) for fr in obj["frames"]]
        if key != want_key:
            die("sample %d: %s in the capture, %s in the json" % (i, key, want_key))
        if addrs != want:
            die("sample %d (tid %d, time %d): chain of %d in the capture, %d in the json; "
                "first difference at frame %d" % (
                    i, obj["tid"], obj["time"], len(addrs), len(want),
                    next((j for j, (x, y) in enumerate(zip(addrs, want)) if x != y),
                         min(len(addrs), len(want)))))
    frames_n = sum(len(a) for _, a in ours)
    print("%d samples, %d frames: equal" % (len(ours), frames_n))


def cmd_compare_json(args):
    with open(args[0]) as f:
        a = [json.loads(line) for line in f]
    with open(args[1]) as f:
        b = [json.loads(line) for line in f]
    if len(a) != len(b):
        die("%d samples, %d samples" % (len(a), len(b)))
    for i, (x, y) in enumerate(zip(a, b)):
        x.pop("comm", None)
        y.pop("comm", None)
        if x != y:
            keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            die("sample %d (tid %s, time %s) differs in %s" % (i, x.get("tid"), x.get("time"),
                                                             ", ".join(keys)))
    print("%d samples: equal" % len(a))


COMMANDS = {
    "frames": cmd_frames,
    "strip": cmd_strip,
    "same-frames": cmd_same_frames,
    "corrupt": cmd_corrupt,
    "compare-samples": cmd_compare_samples,
    "compare-json": cmd_compare_json,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        die(__doc__)
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except (OSError, ValueError) as e:
        die(str(e))
