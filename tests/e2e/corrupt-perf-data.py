#!/usr/bin/env python3
"""Malformed perf.data inputs for eu-stacktrace, and the checks of its answer.

Used by tests/e2e/bad-input.sh.  Standard library only.

  corrupt-perf-data.py walk FILE
      List the records of a perf.data file or pipe stream: offset, type, size,
      and for samples tid, time and where the register and stack fields are.

  corrupt-perf-data.py test --file F --pipe P --tool T [--tool T2 ...] --tmp DIR
      Make every malformed variant of the file-mode recording F and the
      pipe-mode stream P, run each TOOL on each, and print a TAP stream (plan
      included).  For every variant and tool it checks:
        - the exit status (2 for malformed input; 0, with every sample
          written, for the hostile but well-formed ones: random registers,
          a mapped file's name swapped for a FIFO's),
        - no death by a signal, no sanitizer report, the end within --timeout
          (20 s for the FIFO),
        - stderr names `byte offset N' with N inside the faulty record (or
          inside the faulty header field),
        - every sample whose record lies before the fault in the input is in
          the `-f json' output (samples are keyed by pid, tid and time;
          later ones may appear too: records already read when the fault was
          found are still delivered).
      Pipe-mode variants are fed through a real pipe.

The exit status of `test' is 0 once the TAP stream is complete; failures are
the "not ok" lines.
"""

import argparse
import collections
import json
import os
import random
import re
import struct
import shutil
import subprocess
import sys
import tempfile

# perf_event_attr.sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU = (1 << i for i in range(8))
S_PERIOD, S_STREAM_ID, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = (
    1 << i for i in range(8, 14))
S_IDENTIFIER = 1 << 16
# read_format bits
F_TOTAL_TIME_ENABLED, F_TOTAL_TIME_RUNNING, F_ID, F_GROUP, F_LOST = (1 << i for i in range(5))
BRANCH_HW_INDEX = 1 << 17

REC_SAMPLE = 9
REC_HEADER_ATTR = 64
REC_HEADER_TRACING_DATA = 66
REC_AUXTRACE = 71
REC_NAMES = {1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE", 6: "UNTHROTTLE",
             7: "FORK", 8: "READ", 9: "SAMPLE", 10: "MMAP2", 11: "AUX", 12: "ITRACE_START",
             13: "LOST_SAMPLES", 14: "SWITCH", 15: "SWITCH_CPU_WIDE", 16: "NAMESPACES",
             17: "KSYMBOL", 18: "BPF_EVENT", 19: "CGROUP", 20: "TEXT_POKE",
             64: "HEADER_ATTR", 65: "HEADER_EVENT_TYPE", 66: "HEADER_TRACING_DATA",
             67: "HEADER_BUILD_ID", 68: "FINISHED_ROUND", 69: "ID_INDEX",
             70: "AUXTRACE_INFO", 71: "AUXTRACE", 72: "AUXTRACE_ERROR", 73: "THREAD_MAP",
             74: "CPU_MAP", 75: "STAT_CONFIG", 76: "STAT", 77: "STAT_ROUND",
             78: "EVENT_UPDATE", 79: "TIME_CONV", 80: "HEADER_FEATURE", 81: "COMPRESSED",
             82: "FINISHED_INIT"}

FILE_HEADER_SIZE = 104
PIPE_HEADER_SIZE = 16
MAGIC = b"PERFILE2"

# Header field offsets (struct perf_file_header).
H_SIZE, H_ATTR_SIZE = 8, 16
H_ATTRS, H_DATA, H_EVENT_TYPES, H_FEATURES = 24, 40, 56, 72


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


class Attr:
    def __init__(self, raw):
        self.sample_type = u64(raw, 24)
        self.read_format = u64(raw, 32)
        flags = u64(raw, 40)
        self.sample_id_all = bool(flags & (1 << 18))
        size = u32(raw, 4)
        self.branch_sample_type = u64(raw, 72) if size >= 80 and len(raw) >= 80 else 0
        self.sample_regs_user = u64(raw, 80) if size >= 88 and len(raw) >= 88 else 0


class Record:
    """One record: where it is, what it is, and for samples where its fields are."""

    def __init__(self, offset, rtype, misc, size):
        self.offset, self.type, self.misc, self.size = offset, rtype, misc, size
        self.end = offset + size
        self.key = None           # (pid, tid, time) of a sample
        self.time_off = None      # absolute offset of a sample's time
        self.regs_off = None      # absolute offset of the first user register
        self.n_regs = 0
        self.stack_size_off = None
        self.stack_size = 0
        self.dyn_size_off = None

    def name(self):
        return REC_NAMES.get(self.type, str(self.type))


def parse_sample(b, rec, attr):
    st, o = attr.sample_type, rec.offset + 8
    pid = tid = time = None
    if st & S_IDENTIFIER:
        o += 8
    if st & S_IP:
        o += 8
    if st & S_TID:
        pid, tid = struct.unpack_from("<ii", b, o)
        o += 8
    if st & S_TIME:
        rec.time_off = o
        time = u64(b, o)
        o += 8
    for bit in (S_ADDR, S_ID, S_STREAM_ID):
        if st & bit:
            o += 8
    if st & S_CPU:
        o += 8
    if st & S_PERIOD:
        o += 8
    if st & S_READ:
        rf = attr.read_format
        per_value = 8 * (1 + bool(rf & F_ID) + bool(rf & F_LOST))
        times = 8 * (bool(rf & F_TOTAL_TIME_ENABLED) + bool(rf & F_TOTAL_TIME_RUNNING))
        if rf & F_GROUP:
            nr = u64(b, o)
            o += 8 + times + nr * per_value
        else:
            o += per_value + times
    if st & S_CALLCHAIN:
        nr = u64(b, o)
        o += 8 + 8 * nr
    if st & S_RAW:
        o += 4 + u32(b, o)
    if st & S_BRANCH_STACK:
        nr = u64(b, o)
        o += 8
        if attr.branch_sample_type & BRANCH_HW_INDEX:
            o += 8
        o += 24 * nr
    if st & S_REGS_USER:
        abi = u64(b, o)
        o += 8
        if abi:
            rec.regs_off = o
            rec.n_regs = bin(attr.sample_regs_user).count("1")
            o += 8 * rec.n_regs
    if st & S_STACK_USER:
        rec.stack_size_off = o
        rec.stack_size = u64(b, o)
        o += 8
        if rec.stack_size:
            o += rec.stack_size
            rec.dyn_size_off = o
    if o > rec.end:
        raise ValueError("sample at %d does not parse (field end %d > record end %d)"
                         % (rec.offset, o, rec.end))
    rec.key = (pid, tid, time)


class PerfData:
    """The records of a (well-formed) perf.data file or pipe stream."""

    def __init__(self, path, data=None):
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        self.bytes = data
        b = self.bytes
        if b[:8] != MAGIC:
            raise ValueError("%s: not a little-endian perf.data" % path)
        self.pipe = u64(b, H_SIZE) == PIPE_HEADER_SIZE
        self.attrs = []
        self.records = []
        if self.pipe:
            self.data_offset, self.data_end = PIPE_HEADER_SIZE, len(b)
        else:
            attr_size = u64(b, H_ATTR_SIZE)
            a_off, a_size = struct.unpack_from("<QQ", b, H_ATTRS)
            for at in range(a_off, a_off + a_size, attr_size):
                self.attrs.append(Attr(b[at:at + attr_size - 16]))
            self.data_offset, data_size = struct.unpack_from("<QQ", b, H_DATA)
            self.data_end = self.data_offset + data_size
        o = self.data_offset
        while o + 8 <= self.data_end:
            rtype, misc, size = struct.unpack_from("<IHH", b, o)
            if size < 8 or o + size > self.data_end:
                raise ValueError("%s: bad record at %d" % (path, o))
            rec = Record(o, rtype, misc, size)
            self.records.append(rec)
            if rtype == REC_HEADER_ATTR:
                asz = u32(b, o + 8 + 4) or 64
                self.attrs.append(Attr(b[o + 8:o + 8 + asz]))
            elif rtype == REC_SAMPLE:
                if len(self.attrs) != 1:
                    raise ValueError("%s: %d event attributes; the test wants one"
                                     % (path, len(self.attrs)))
                parse_sample(b, rec, self.attrs[0])
            o += size
            if rtype == REC_HEADER_TRACING_DATA:
                o += u32(b, rec.offset + 8)
            elif rtype == REC_AUXTRACE:
                o += u64(b, rec.offset + 8)

    def samples(self):
        return [r for r in self.records if r.type == REC_SAMPLE]

    def stack_samples(self):
        return [r for r in self.samples() if r.stack_size > 0 and r.regs_off is not None]

    def keys_before(self, offset):
        return collections.Counter(r.key for r in self.samples() if r.end <= offset)

    def all_keys(self):
        return collections.Counter(r.key for r in self.samples())


def walk(path):
    d = PerfData(path)
    print("%s: %s mode, data [%d, %d), %d records, %d samples"
          % (path, "pipe" if d.pipe else "file", d.data_offset, d.data_end,
             len(d.records), len(d.samples())))
    for r in d.records:
        extra = ""
        if r.type == REC_SAMPLE:
            extra = " pid/tid/time=%s regs@%s(%d) stack_size@%s=%d dyn_size@%s" % (
                r.key, r.regs_off, r.n_regs, r.stack_size_off, r.stack_size, r.dyn_size_off)
        print("%10d %-16s size %5d%s" % (r.offset, r.name(), r.size, extra))


# ---------------------------------------------------------------------------
# Variants


class Variant:
    """A malformed input and what the tool must answer.

    lo <= N < hi is where the reported byte offset must lie; field is the
    offset the fault is really at (shown in diagnostics); expected is the
    Counter of sample keys that must be written."""

    def __init__(self, name, data, status, expected, lo=None, hi=None, field=None,
                 pipe=False, exact=False, check=None, what="", timeout=None):
        self.name, self.data, self.status = name, data, status
        self.timeout = timeout
        self.expected, self.lo, self.hi, self.field = expected, lo, hi, field
        self.pipe, self.exact, self.check, self.what = pipe, exact, check, what


def put_u64(b, o, v):
    struct.pack_into("<Q", b, o, v)


def put_u16(b, o, v):
    struct.pack_into("<H", b, o, v)


def middle(seq):
    return seq[len(seq) // 2]


def record_variants(d, tag, out):
    """Variants common to file and pipe mode: faults inside the records."""
    pipe = d.pipe
    victim = middle(d.stack_samples())
    before = d.keys_before(victim.offset)
    rng = "record at %d (%d bytes)" % (victim.offset, victim.size)

    cut = victim.offset + victim.size // 2
    out.append(Variant("%s: cut in the middle of a sample record" % tag,
                       d.bytes[:cut], 2, before, victim.offset, victim.end,
                       victim.offset, pipe, what="%s, cut at %d" % (rng, cut)))
    cut = victim.offset + 3
    out.append(Variant("%s: cut inside a record header" % tag,
                       d.bytes[:cut], 2, before, victim.offset, victim.end,
                       victim.offset, pipe, what="%s, cut at %d" % (rng, cut)))

    b = bytearray(d.bytes)
    put_u16(b, victim.offset + 6, 0)
    out.append(Variant("%s: a record header with size 0" % tag, bytes(b), 2, before,
                       victim.offset, victim.end, victim.offset, pipe, what=rng))

    b = bytearray(d.bytes)
    put_u16(b, victim.offset + 6, 4)
    out.append(Variant("%s: a record header with size 4" % tag, bytes(b), 2, before,
                       victim.offset, victim.end, victim.offset, pipe, what=rng))

    # One byte past the record: the boundary case.
    b = bytearray(d.bytes)
    too_big = victim.end - (victim.stack_size_off + 8) + 1
    put_u64(b, victim.stack_size_off, too_big)
    out.append(Variant("%s: a STACK_USER size one byte larger than the record" % tag,
                       bytes(b), 2, before, victim.offset, victim.end,
                       victim.stack_size_off, pipe,
                       what="%s, stack size %d at %d" % (rng, too_big, victim.stack_size_off)))

    b = bytearray(d.bytes)
    huge = 0xfffffffffffffff8
    put_u64(b, victim.stack_size_off, huge)
    out.append(Variant("%s: a STACK_USER size of 2^64-8" % tag, bytes(b), 2, before,
                       victim.offset, victim.end, victim.stack_size_off, pipe,
                       what="%s, stack size %#x at %d" % (rng, huge, victim.stack_size_off)))

    b = bytearray(d.bytes)
    dyn = victim.stack_size + 1
    put_u64(b, victim.dyn_size_off, dyn)
    out.append(Variant("%s: a dyn_size larger than the stack copy" % tag, bytes(b), 2,
                       before, victim.offset, victim.end, victim.dyn_size_off, pipe,
                       what="%s, dyn_size %d > %d at %d"
                       % (rng, dyn, victim.stack_size, victim.dyn_size_off)))

    # Found last: the last sample's fault, behind a sample read before it
    # but later in time (another CPU's, drained first in the same round):
    # the fault surfaces when the end of the input lets the queue go, and
    # the later sample must still be written.  Under load perf drains both
    # CPUs' rings in one pass and the demo migrates: such recordings came
    # by themselves, once in CI (8 samples before the fault went missing).
    stack = d.stack_samples()
    last, earlier = stack[-1], stack[-2]
    b = bytearray(d.bytes)
    later = last.key[2] + 1
    put_u64(b, earlier.time_off, later)
    put_u64(b, last.dyn_size_off, last.stack_size + 1)
    moved = PerfData(None, bytes(b))
    out.append(Variant("%s: the last sample's fault, behind one read before it but later in time"
                       % tag, bytes(b), 2, moved.keys_before(last.offset), last.offset,
                       last.end, last.dyn_size_off, pipe,
                       what="record at %d, dyn_size %d > %d at %d; time of the sample at %d"
                       " set to %d" % (last.offset, last.stack_size + 1, last.stack_size,
                                        last.dyn_size_off, earlier.offset, later)))

    # Not malformed: registers are data.  Every sample is still written.
    b = bytearray(d.bytes)
    r = random.Random(0x5eed)
    corrupted = collections.Counter()
    for s in d.stack_samples():
        b[s.regs_off:s.regs_off + 8 * s.n_regs] = bytes(
            r.getrandbits(8) for _ in range(8 * s.n_regs))
        corrupted[s.key] += 1
    out.append(Variant("%s: random bytes in every sample's user registers" % tag,
                       bytes(b), 0, d.all_keys(), pipe=pipe, exact=True,
                       check=lambda samples, c=corrupted: check_garbage_regs(samples, c),
                       what="%d samples" % sum(corrupted.values())))


def check_garbage_regs(samples, corrupted):
    """Each corrupted sample is written, with at most the sampled pc as a frame."""
    long_ones = [s for s in samples
                 if (s["pid"], s["tid"], s["time"]) in corrupted
                 and len(s.get("frames", [])) > 1]
    if long_ones:
        return "%d samples with random registers unwound to more than 1 frame" % len(long_ones)
    return None


def mmap_filenames(d):
    """The file names of the MMAP2 records of the recording."""
    names = set()
    for r in d.records:
        if r.type == 10 and r.size > 72:
            body = d.bytes[r.offset + 72:r.end]
            names.add(body.split(b"\0", 1)[0])
    return names


def fifo_variant(d, fifo_dir, out):
    """A mapped file's name swapped for a FIFO's of the same length.

    Not malformed, but hostile: opening a FIFO for reading waits for a
    writer, forever.  Every sample must still be written, promptly."""
    fifo_dir_b = fifo_dir.encode() + b"/"
    names = sorted((n for n in mmap_filenames(d)
                    if n.startswith(b"/") and len(n) > len(fifo_dir_b) + 1
                    and b"/lib" in n), key=len)
    if not names:
        raise ValueError("no mapped library with a name long enough for the FIFO")
    name = names[-1]
    fifo = fifo_dir_b + b"f" * (len(name) - len(fifo_dir_b))
    os.mkfifo(fifo)
    out.append(Variant("file: a mapped file's name replaced by a FIFO's", d.bytes.replace(name, fifo),
                       0, d.all_keys(), exact=True, timeout=20,
                       what="%s -> %s (%d times)" % (name.decode(), fifo.decode(),
                                                    d.bytes.count(name))))


def file_variants(d, out):
    """Faults in the file header and the data section's bounds."""
    hb = d.bytes
    nothing = collections.Counter()
    out.append(Variant("file: an empty file", b"", 2, nothing, 0, 1, 0))
    out.append(Variant("file: bad magic", b"PERFFILE" + hb[8:], 2, nothing, 0, 8, 0))
    cut = 50
    out.append(Variant("file: cut inside the header", hb[:cut], 2, nothing, 0, cut + 1, cut,
                       what="cut at %d" % cut))
    cut = 12
    out.append(Variant("file: cut inside the header size field", hb[:cut], 2, nothing,
                       0, cut + 1, cut, what="cut at %d" % cut))

    b = bytearray(hb)
    put_u64(b, H_ATTR_SIZE, 8)
    out.append(Variant("file: attr_size 8 (too small)", bytes(b), 2, nothing,
                       H_ATTR_SIZE, H_DATA, H_ATTR_SIZE))
    b = bytearray(hb)
    attr_size = u64(hb, H_ATTR_SIZE)
    put_u64(b, H_ATTR_SIZE, attr_size + 8)
    out.append(Variant("file: attr_size not dividing the attrs section", bytes(b), 2,
                       nothing, H_ATTR_SIZE, H_DATA, H_ATTR_SIZE,
                       what="attr_size %d instead of %d" % (attr_size + 8, attr_size)))
    b = bytearray(hb)
    put_u64(b, H_ATTR_SIZE, 1 << 62)
    out.append(Variant("file: attr_size 2^62", bytes(b), 2, nothing,
                       H_ATTR_SIZE, H_DATA, H_ATTR_SIZE))

    b = bytearray(hb)
    past = len(hb) + 4096
    put_u64(b, H_DATA, past)
    out.append(Variant("file: data section offset past the end of the file", bytes(b), 2,
                       nothing, H_DATA, H_EVENT_TYPES, H_DATA,
                       what="offset %d, file of %d bytes" % (past, len(hb))))

    # The data section said to run past EOF: the feature sections that
    # follow the data get read as records, then the input ends.
    b = bytearray(hb)
    put_u64(b, H_DATA + 8, len(hb))
    out.append(Variant("file: data section size past the end of the file", bytes(b), 2,
                       d.all_keys(), d.data_end, len(hb) + 1, d.data_end,
                       what="data [%d, %d) in a file of %d bytes"
                       % (d.data_offset, d.data_offset + len(hb), len(hb))))

    # offset + size wraps around 2^64: the data section would end before it
    # starts.  Without feature sections nothing else catches it.
    b = bytearray(hb)
    put_u64(b, H_DATA + 8, (1 << 64) - 8)
    b[H_FEATURES:FILE_HEADER_SIZE] = bytes(FILE_HEADER_SIZE - H_FEATURES)
    out.append(Variant("file: data section size 2^64-8 (offset + size wraps around)",
                       bytes(b), 2, nothing, H_DATA, H_EVENT_TYPES, H_DATA + 8,
                       what="data offset %d, size 2^64-8, no feature sections"
                       % d.data_offset))

    # A record running past the end of the data section: the last sample.
    victim = d.samples()[-1]
    b = bytearray(hb)
    size = min(0xfff8, d.data_end - victim.offset + 8)
    put_u16(b, victim.offset + 6, size)
    out.append(Variant("file: a record running past the end of the data section",
                       bytes(b), 2, d.keys_before(victim.offset), victim.offset, victim.end,
                       victim.offset,
                       what="record at %d now %d bytes, data ends at %d"
                       % (victim.offset, size, d.data_end)))


# ---------------------------------------------------------------------------
# Running and checking

SANITIZER_RE = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                          r"SUMMARY: \w*Sanitizer")
OFFSET_RE = re.compile(r"byte offset (\d+)")


def run_tool(tool, path, pipe, timeout):
    """Runs TOOL -f json on PATH (through a pipe for pipe mode): (rc, out, err)."""
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:halt_on_error=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    env.pop("DEBUGINFOD_URLS", None)
    data = None
    if pipe:
        # A real pipe: communicate() writes the stream to the tool's stdin.
        with open(path, "rb") as f:
            data = f.read()
        p = subprocess.Popen([tool, "-i", "-", "-f", "json"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    else:
        p = subprocess.Popen([tool, "-i", path, "-f", "json"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = p.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def check(v, tool, path, timeout):
    """Runs one variant: (problems, facts) as lists of strings."""
    if v.timeout is not None:
        timeout = min(timeout, v.timeout)
    rc, out, err = run_tool(tool, path, v.pipe, timeout)
    errs = err.decode("utf-8", "replace")
    problems, facts = [], []
    if rc is None:
        return ["did not finish within %d s (hang?)" % timeout], facts, errs
    if rc < 0:
        problems.append("killed by signal %d" % -rc)
    m = SANITIZER_RE.search(errs)
    if m:
        problems.append("sanitizer report (%s)" % m.group(0))
    if rc != v.status:
        problems.append("exit status %d, want %d" % (rc, v.status))
    else:
        facts.append("exit %d" % rc)
    if v.status == 2:
        offsets = [int(x) for x in OFFSET_RE.findall(errs)]
        if not offsets:
            problems.append("stderr names no `byte offset N'")
        elif not all(v.lo <= n < v.hi for n in offsets):
            problems.append("byte offset %s not in [%d, %d) (the fault is at %d)"
                            % (",".join(map(str, offsets)), v.lo, v.hi, v.field))
        else:
            facts.append("byte offset %d in [%d, %d) (fault at %d)"
                         % (offsets[0], v.lo, v.hi, v.field))
    samples, bad_lines = [], 0
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            samples.append(json.loads(line))
        except ValueError:
            bad_lines += 1
    if bad_lines:
        problems.append("%d output lines are not JSON" % bad_lines)
    got = collections.Counter((s.get("pid"), s.get("tid"), s.get("time"))
                              for s in samples)
    missing = v.expected - got
    if missing:
        problems.append("%d of the %d samples before the fault are missing (first: %s)"
                        % (sum(missing.values()), sum(v.expected.values()),
                           sorted(missing)[0]))
    else:
        facts.append("all %d samples %swritten (%d in all)"
                     % (sum(v.expected.values()),
                        "" if v.status == 0 else "before the fault ", len(samples)))
    if v.exact and got != v.expected:
        problems.append("%d samples written, want exactly %d"
                        % (len(samples), sum(v.expected.values())))
    if v.check and not problems:
        p = v.check(samples)
        if p:
            problems.append(p)
    return problems, facts, errs


def test(args):
    f, p = PerfData(args.file), PerfData(args.pipe)
    if f.pipe or not p.pipe:
        print("1..1\nnot ok 1 - %s must be a file-mode and %s a pipe-mode recording"
              % (args.file, args.pipe))
        return 0
    variants = []
    fifo_dir = tempfile.mkdtemp(prefix="st", dir="/tmp")  # short: the name must fit
    try:
        file_variants(f, variants)
        record_variants(f, "file", variants)
        record_variants(p, "pipe", variants)
        fifo_variant(f, fifo_dir, variants)
        return run_variants(args, f, p, variants)
    finally:
        shutil.rmtree(fifo_dir, ignore_errors=True)


def run_variants(args, f, p, variants):
    tools = args.tool
    plan = len(args.recorded) + 2 * len(tools) + len(variants) * len(tools)
    print("1..%d" % plan)
    n = 0
    for line in args.recorded:
        n += 1
        print("ok %d - %s" % (n, line))
    for d, path, pipe in ((f, args.file, False), (p, args.pipe, True)):
        print("# %s: %d bytes, %d records, %d samples (%d with a stack)"
              % (path, len(d.bytes), len(d.records), len(d.samples()),
                 len(d.stack_samples())))
        v = Variant("clean", d.bytes, 0, d.all_keys(), pipe=pipe, exact=True)
        for tool in tools:
            n += 1
            problems, facts, errs = check(v, tool, path, args.timeout)
            label = "the intact %s recording is read cleanly [%s]" % (
                "pipe-mode" if pipe else "file-mode", os.path.basename(tool))
            report(n, label, problems, facts, errs)
    for i, v in enumerate(variants):
        path = os.path.join(args.tmp, "variant-%02d.data" % i)
        with open(path, "wb") as out:
            out.write(v.data)
        for tool in tools:
            n += 1
            if v.what:
                print("# %s: %s" % (v.name, v.what))
            problems, facts, errs = check(v, tool, path, args.timeout)
            report(n, "%s [%s]" % (v.name, os.path.basename(tool)), problems, facts, errs)
            if problems and args.keep_failures:
                print("# kept as %s" % path)
        if not args.keep_failures:
            os.unlink(path)
    return 0


def report(n, label, problems, facts, errs):
    if problems:
        print("not ok %d - %s: %s" % (n, label, "; ".join(problems)))
        for line in errs.splitlines()[:30]:
            print("#   " + line)
    else:
        print("ok %d - %s: %s" % (n, label, ", ".join(facts)))
        first = next((l for l in errs.splitlines() if "byte offset" in l), None)
        if first:
            print("#   " + first)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("walk")
    w.add_argument("file")
    t = sub.add_parser("test")
    t.add_argument("--file", required=True)
    t.add_argument("--pipe", required=True)
    t.add_argument("--tool", action="append", required=True)
    t.add_argument("--tmp", required=True)
    t.add_argument("--timeout", type=int, default=60)
    t.add_argument("--keep-failures", action="store_true")
    t.add_argument("--recorded", action="append", default=[],
                   help="a passed step of the caller, printed as an ok line")
    args = ap.parse_args()
    if args.cmd == "walk":
        walk(args.file)
        return 0
    return test(args)


if __name__ == "__main__":
    sys.exit(main())
