#!/usr/bin/env python3
"""Turn gdb's stops of the cross-architecture workload into a perf.data, and
compare eu-stacktrace's frames with gdb's backtrace.  Standard library only.

  arch-check.py write --stops S.jsonl --maps MAPS --sysroot DIR --arch NAME
                      --abi 32|64 [--no-build-ids] [--bogus-inodes] --out perf.data
      Each stop becomes a SAMPLE (REGS_USER with the registers gdb read, in
      perf numbering; STACK_USER with the bytes from sp upward), after COMM
      and MMAP2 records from the workload's own /proc/self/maps as qemu-user
      showed it.  File names under --sysroot are written as the recording
      machine names them (the sysroot prefix removed).  HEADER_ARCH is NAME;
      HEADER_BUILD_ID lists every mapped file's build-id unless
      --no-build-ids; --bogus-inodes writes device and inode numbers no file
      here has (as from another machine).

  arch-check.py compare --stops S.jsonl --ours OUT.json --maps MAPS
      Prints "stops counted equal rate trampoline" and the first
      differences.  A stop counts when gdb's backtrace reaches main, without
      passing through code outside the mapped files (qemu-user's own signal
      trampoline, counted as "trampoline"); it is equal when our function
      names, innermost first, up to main, are gdb's.
"""

import argparse
import json
import struct
import sys

S_IP, S_TID, S_TIME, S_PERIOD = 1 << 0, 1 << 1, 1 << 2, 1 << 8
S_REGS_USER, S_STACK_USER = 1 << 12, 1 << 13
REC_MMAP2, REC_COMM, REC_SAMPLE = 10, 3, 9
MISC_USER = 2
HEADER_BUILD_ID, HEADER_HOSTNAME, HEADER_ARCH = 2, 3, 6


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


# "<": this machine's order; ">": as perf on a big-endian machine (s390x,
# ppc64) writes its files, every integer in its own order.
E = "<"


def record(rtype, misc, body):
    body = pad8(body)
    return struct.pack(E + "IHH", rtype, misc, 8 + len(body)) + body


def bitfield(flags):
    """perf_event_attr's flags word as the compiler lays it out: a
    big-endian one fills each byte from its top bit."""
    b = struct.pack("<Q", flags)
    if E == "<":
        return b
    return bytes(int("{:08b}".format(x)[::-1], 2) for x in b)


def perf_string(text):
    s = text.encode() + b"\0"
    s += b"\0" * (-len(s) % 64)
    return struct.pack(E + "I", len(s)) + s


def elf_build_id(path):
    """The GNU build-id note of an ELF file, from its program headers."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return None
    is64 = data[4] == 2
    e = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(e + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(e + "HH", data, 54)
    else:
        phoff, = struct.unpack_from(e + "I", data, 28)
        phentsize, phnum = struct.unpack_from(e + "HH", data, 42)
    for i in range(phnum):
        o = phoff + i * phentsize
        ptype, = struct.unpack_from(e + "I", data, o)
        if ptype != 4:  # PT_NOTE
            continue
        if is64:
            off, = struct.unpack_from(e + "Q", data, o + 8)
            size, = struct.unpack_from(e + "Q", data, o + 32)
        else:
            off, = struct.unpack_from(e + "I", data, o + 4)
            size, = struct.unpack_from(e + "I", data, o + 16)
        p = off
        while p + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from(e + "III", data, p)
            name = data[p + 12:p + 12 + namesz]
            desc_at = p + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and name.rstrip(b"\0") == b"GNU":
                return data[desc_at:desc_at + descsz]
            p = desc_at + ((descsz + 3) & ~3)
    return None


def elf_loads(path):
    """(p_vaddr, p_memsz, p_offset, executable) of each PT_LOAD."""
    with open(path, "rb") as f:
        data = f.read(65536)
    is64 = data[4] == 2
    e = "<" if data[5] == 1 else ">"
    if is64:
        phoff, = struct.unpack_from(e + "Q", data, 32)
        phentsize, phnum = struct.unpack_from(e + "HH", data, 54)
    else:
        phoff, = struct.unpack_from(e + "I", data, 28)
        phentsize, phnum = struct.unpack_from(e + "HH", data, 42)
    loads = []
    for i in range(phnum):
        o = phoff + i * phentsize
        if is64:
            ptype, flags, off, vaddr = struct.unpack_from(e + "IIQQ", data, o)
            memsz, = struct.unpack_from(e + "Q", data, o + 40)
        else:
            ptype, off, vaddr = struct.unpack_from(e + "III", data, o)
            memsz, flags = struct.unpack_from(e + "II", data, o + 20)
        if ptype == 1:
            loads.append((vaddr, memsz, off, bool(flags & 1)))
    return loads


def parse_maps(path):
    """The executable mappings of each file: qemu-user's maps give where a
    file's first page went (x86 targets show no x bit), the ELF program
    headers the rest."""
    bases = {}
    for line in open(path):
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].strip().startswith("/"):
            continue
        name = parts[5].strip()
        if int(parts[2], 16) == 0 and name not in bases:
            maj, mnr = (int(x, 16) for x in parts[3].split(":"))
            bases[name] = (int(parts[0].split("-")[0], 16), maj, mnr, int(parts[4]))
    maps = []
    page = 4096
    for name, (base, maj, mnr, ino) in bases.items():
        loads = elf_loads(name)
        if not loads:
            continue
        bias = base - (loads[0][0] & ~(page - 1))
        for vaddr, memsz, off, x in loads:
            if not x:
                continue
            lo = bias + (vaddr & ~(page - 1))
            hi = bias + ((vaddr + memsz + page - 1) & ~(page - 1))
            maps.append({"start": lo, "end": hi, "prot": "r-xp", "pgoff": off & ~(page - 1),
                         "maj": maj, "min": mnr, "ino": ino, "path": name})
    return maps


def parse_maps_qemu(path):
    maps = []
    for line in open(path):
        parts = line.split(None, 5)
        if len(parts) < 6 or not parts[5].strip().startswith("/"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        prot = parts[1]
        maj, mnr = (int(x, 16) for x in parts[3].split(":"))
        maps.append({"start": lo, "end": hi, "prot": prot, "pgoff": int(parts[2], 16),
                     "maj": maj, "min": mnr, "ino": int(parts[4]),
                     "path": parts[5].strip()})
    return maps


def recorded_name(path, sysroot):
    root = sysroot.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root):]
    return path


def write(args):
    global E
    E = ">" if args.big_endian else "<"
    stops = [json.loads(line) for line in open(args.stops)]
    names = stops[0]["regs"]
    mask = 0
    for i, v in enumerate(names):
        if v is not None:
            mask |= 1 << i
    pid = 4242
    data = bytearray()
    data += record(REC_COMM, MISC_USER, struct.pack(E + "II", pid, pid) + b"archwork\0")
    maps = parse_maps(args.maps)
    files = {}
    for m in maps:
        if "x" not in m["prot"]:
            continue
        name = recorded_name(m["path"], args.sysroot)
        files[name] = m["path"]
        ino = m["ino"] + 7777777 if args.bogus_inodes else m["ino"]
        maj = m["maj"] + 3 if args.bogus_inodes else m["maj"]
        body = struct.pack(E + "IIQQQIIQQII", pid, pid, m["start"], m["end"] - m["start"], m["pgoff"],
                           maj, m["min"], ino, 0, 5, 2)  # PROT_READ|PROT_EXEC, MAP_PRIVATE
        data += record(REC_MMAP2, MISC_USER, body + name.encode() + b"\0")
    abi = 1 if args.abi == 32 else 2
    for t, s in enumerate(stops * args.repeat):
        regs = [v for v in s["regs"] if v is not None]
        stack = bytes.fromhex(s["stack"])
        stack = stack[:len(stack) & ~7]
        pc = s["regs"][args.pc_index]
        body = struct.pack(E + "QIIQQ", pc, pid, pid, 1000 + t, 1)
        body += struct.pack(E + "Q", abi) + struct.pack(E + "%dQ" % len(regs), *regs)
        body += struct.pack(E + "Q", len(stack)) + stack + struct.pack(E + "Q", len(stack))
        data += record(REC_SAMPLE, MISC_USER, body)

    sample_type = S_IP | S_TID | S_TIME | S_PERIOD | S_REGS_USER | S_STACK_USER
    flags = (1 << 8) | (1 << 9) | (1 << 13) | (1 << 23)  # mmap comm task mmap2
    attr = struct.pack(E + "IIQQQQ", 1, 112, 0, 4000, sample_type, 0) + bitfield(flags)
    attr += struct.pack(E + "IIQQQQIiQIHH", 0, 0, 0, 0, 0, mask, 16384, 0, 0, 0, 0, 0)
    assert len(attr) == 112
    attrs = attr + struct.pack(E + "QQ", 0, 0)
    header_size = 104
    attrs_off = header_size
    data_off = attrs_off + len(attrs)
    feat_off = data_off + len(data)

    features = []
    if not args.no_build_ids:
        bid = bytearray()
        for name, path in files.items():
            b = elf_build_id(path)
            if b is None:
                continue
            fname = name.encode() + b"\0"
            fname += b"\0" * (-len(fname) % 64)
            body = struct.pack(E + "i", -1) + b.ljust(20, b"\0")[:20] + struct.pack(E + "BBH", len(b), 0, 0)
            body += fname
            bid += struct.pack(E + "IHH", 0, MISC_USER | (1 << 15), 8 + len(body)) + body
        features.append((HEADER_BUILD_ID, bytes(bid)))
    features.append((HEADER_HOSTNAME, perf_string("qemu-" + args.arch)))
    if not args.no_arch:
        features.append((HEADER_ARCH, perf_string(args.arch)))

    sections = bytearray()
    blobs = bytearray()
    at = feat_off + 16 * len(features)
    for _, blob in features:
        sections += struct.pack(E + "QQ", at + len(blobs), len(blob))
        blobs += blob
    bitmap = 0
    for bit, _ in features:
        bitmap |= 1 << bit
    magic = b"PERFILE2" if E == "<" else b"PERFILE2"[::-1]
    header = magic + struct.pack(E + "QQQQQQQQ", header_size, len(attr) + 16, attrs_off,
                                       len(attrs), data_off, len(data), 0, 0)
    header += struct.pack(E + "QQQQ", bitmap & (2**64 - 1), 0, 0, 0)
    assert len(header) == header_size
    with open(args.out, "wb") as f:
        f.write(header + attrs + data + sections + blobs)
    return 0


# What eu-stacktrace's Sysprof sink on each machine writes in a stack-user
# frame: the registers of its unwinding mask (regs.c st_regs_sample_mask).
SYSPROF_MASKS = {
    "x86_64": 0xff01ff, "i686": 0x1ff, "aarch64": 0x1ffffffff, "armv7l": 0xffff,
    "ppc64le": 0xffffffff | 1 << 32 | 1 << 35 | 1 << 36 | 1 << 37,
    "s390x": 0x3ffffffff, "riscv64": 0xffffffff,
}


def sysprof_frame(ftype, pid, time, body):
    body = pad8(body) if (24 + len(body)) % 8 else body
    return struct.pack("<HhiqII", 24 + len(body), 0, pid, time, ftype, 0) + body


def write_sysprof(args):
    """The stops as a Sysprof capture, as eu-stacktrace's Sysprof sink on
    the recording machine writes it: a PROCESS frame, MAP frames and one
    stack-user frame (type 18) per stop; the capture names no machine."""
    stops = [json.loads(line) for line in open(args.stops)]
    mask = SYSPROF_MASKS[args.arch]
    pid = 4242
    out = bytearray(struct.pack("<II", 0xFDCA975E, 1 | 0x100))
    out += b"2026-01-01T00:00:00Z".ljust(64, b"\0") + struct.pack("<qq", 1000, 0) + b"\0" * 168
    out += sysprof_frame(4, pid, 1000, b"archwork\0")
    for m in parse_maps(args.maps):
        name = recorded_name(m["path"], args.sysroot)
        out += sysprof_frame(3, pid, 1000, struct.pack("<QQQQ", m["start"], m["end"], m["pgoff"],
                                                       m["ino"]) + name.encode() + b"\0")
    abi = 1 if args.abi == 32 else 2
    for t, s in enumerate(stops):
        regs = [(s["regs"][i] if i < len(s["regs"]) and s["regs"][i] is not None else 0)
                for i in range(64) if mask & (1 << i)]
        stack = bytes.fromhex(s["stack"])
        body = struct.pack("<QiI", len(stack), pid, 0) + stack
        body += struct.pack("<II", len(regs), abi) + struct.pack("<%dQ" % len(regs), *regs)
        out += sysprof_frame(18, pid, 1000 + t, body)
    with open(args.out, "wb") as f:
        f.write(out)
    return 0


# The sigreturn trampolines of the C libraries and kernels: gdb calls their
# frame "<signal handler called>".
SIGRETURN = {"__restore_rt", "__restore", "__kernel_rt_sigreturn", "__vdso_rt_sigreturn",
             "__default_rt_sa_restorer", "__default_sa_restorer", "__kernel_sigtramp_rt64"}


def gdb_names(stop):
    """gdb's frames without the inlined ones; glibc's __GI_ aliases by
    their public name (the symbol table's)."""
    names = []
    for n in stop["bt"]:
        if n.startswith("~"):
            continue
        names.append(n[5:] if n.startswith("__GI_") else n)
    return names


def our_names(sample):
    names = []
    for f in sample["frames"]:
        sym = f.get("symbol")
        names.append("<signal>" if sym in SIGRETURN else sym if sym else "??")
        if sym == "main":
            break
    return names


def in_file_mapping(pc, maps):
    return any(m["start"] <= pc < m["end"] and "x" in m["prot"] for m in maps)


def compare(args):
    stops = [json.loads(line) for line in open(args.stops)]
    maps = parse_maps(args.maps)
    ours = [json.loads(line) for line in open(args.ours)]
    if len(ours) != len(stops):
        print("# %d stops but %d samples in our output" % (len(stops), len(ours)))
        return 1
    counted = equal = trampoline = 0
    shown = 0
    for s, o in zip(stops, ours):
        if not s["reached_main"]:
            continue
        # qemu-user's sigreturn trampoline is a page of its own without CFI
        # (a kernel's vdso has CFI for it): gdb recognizes its code, libdw
        # cannot.  Counted apart.
        if not all(in_file_mapping(pc, maps) for pc in s["pcs"]):
            trampoline += 1
            continue
        counted += 1
        mine = our_names(o)
        theirs = gdb_names(s)
        if mine == theirs:
            equal += 1
        elif shown < args.show:
            shown += 1
            print("# differs at time %d: gdb %s" % (o["time"], " ".join(theirs)))
            print("#               ours %s (stop: %s %s)" % (" ".join(mine), o["stop"],
                                                            o.get("stop_detail", "")))
    rate = 100.0 * equal / counted if counted else 0.0
    print("RESULT stops=%d counted=%d equal=%d rate=%.2f trampoline=%d"
          % (len(stops), counted, equal, rate, trampoline))
    return 0


def main(argv):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--stops", required=True)
    w.add_argument("--maps", required=True)
    w.add_argument("--sysroot", default="")
    w.add_argument("--arch", required=True)
    w.add_argument("--abi", type=int, default=64)
    w.add_argument("--pc-index", type=int, required=True)
    w.add_argument("--no-build-ids", action="store_true")
    w.add_argument("--no-arch", action="store_true", help="no HEADER_ARCH (old perf, pipes)")
    w.add_argument("--big-endian", action="store_true",
                   help="every integer big-endian, as perf on s390x writes")
    w.add_argument("--bogus-inodes", action="store_true")
    w.add_argument("--repeat", type=int, default=1, help="write the stops N times (bench)")
    w.add_argument("--sysprof", action="store_true",
                   help="a Sysprof capture (stack-user frames) instead of a perf.data")
    w.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--stops", required=True)
    c.add_argument("--ours", required=True)
    c.add_argument("--maps", required=True)
    c.add_argument("--show", type=int, default=5)
    args = p.parse_args(argv)
    if args.cmd == "write":
        return write_sysprof(args) if args.sysprof else write(args)
    return compare(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
