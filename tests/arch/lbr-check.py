#!/usr/bin/env python3
"""Compare eu-stacktrace's frames of perfparser's LBR recording with perf
script's and with perfparser's expected output.  Standard library only.

  lbr-check.py inflate DIR OUTDIR
      Inflates DIR/*.zlib (Qt's qCompress: a 4-byte big-endian length, then
      zlib) into OUTDIR, without the .zlib.
  lbr-check.py compare --ours OURS.json --perf PERF.txt --expected EXPECTED.txt
                       --binary ELF
      PERF.txt is `perf script -F time,ip,sym`.  Prints one line per oracle:
      "RESULT oracle samples equal lbr" and the first differences.

Names are compared for the user frames that have one, innermost first.
perf and perfparser name the PLT stubs of a static program (in .plt)
"_init", the symbol before them; eu-stacktrace names them "@plt": a frame
inside .plt is "<plt>" on every side.  perfparser puts the sample's own
ip (precise_ip, from PEBS) before the LBR chain when the kernel's
callchain starts elsewhere; perf script, whose reading eu-stacktrace
follows, does not: that leading frame is left out of perfparser's side
when it has exactly one frame more.  Its names carry return types and
parameter lists, which are cut off, and it may name a function by another
of its symbols (glibc's aliases): names of one address are equal."""

import argparse
import json
import os
import struct
import sys
import zlib


def inflate(args):
    for name in sorted(os.listdir(args[0])):
        if not name.endswith(".zlib"):
            continue
        data = open(os.path.join(args[0], name), "rb").read()
        out = zlib.decompress(data[4:])
        assert len(out) == struct.unpack(">I", data[:4])[0]
        with open(os.path.join(args[1], name[:-5]), "wb") as f:
            f.write(out)
    return 0


def plt_range(path):
    """[start, end) of the .plt section of a 64-bit little-endian ELF."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
    str_off, = struct.unpack_from("<Q", data, shoff + shstrndx * shentsize + 24)
    for i in range(shnum):
        o = shoff + i * shentsize
        name, = struct.unpack_from("<I", data, o)
        addr, = struct.unpack_from("<Q", data, o + 16)
        size, = struct.unpack_from("<Q", data, o + 32)
        end = data.index(b"\0", str_off + name)
        if data[str_off + name:end] == b".plt":
            return addr, addr + size
    return 0, 0


def aliases(path):
    """Name -> address of every function symbol (.symtab): names at the
    same address are one function (glibc's __hypot_finite and
    __ieee754_hypot, hypot and __hypot)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQII", data, shoff + i * shentsize) for i in range(shnum)]
    addr_of = {}
    for _name, stype, _flags, _addr, off, size, link, _info in sections:
        if stype != 2:   # SHT_SYMTAB
            continue
        str_off = sections[link][4]
        for o in range(off, off + size, 24):
            name, info, _other, _shndx, value = struct.unpack_from("<IBBHQ", data, o)
            if info & 0xf == 2 and value:   # STT_FUNC
                end = data.index(b"\0", str_off + name)
                addr_of[data[str_off + name:end].decode()] = value
    return addr_of


def same(a, b, addr_of):
    return a == b or (a in addr_of and addr_of.get(a) == addr_of.get(b))


def short(name):
    """A demangled name without its parameter list and return type."""
    name = name.strip()
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    depth = 0
    last = 0
    for i, ch in enumerate(name):
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == " " and depth == 0:
            last = i + 1
    return name[last:]


def ours(path, plt):
    samples = {}
    for line in open(path):
        o = json.loads(line)
        names = []
        for f in o["frames"]:
            addr = int(f["address"], 16)
            if plt[0] <= addr < plt[1]:
                names.append("<plt>")
            elif f.get("symbol"):
                names.append(short(f["symbol"]))
        samples["%d.%06d" % (o["time"] // 10**9, o["time"] % 10**9 // 1000)] = \
            (names, o["stop"].startswith("LBR"))
    return samples


def perf_script(path):
    """perf script -F time,ip,sym: the user frames with a name."""
    samples = {}
    key = None
    for line in open(path):
        line = line.rstrip("\n")
        if line and not line.startswith("\t") and not line.startswith(" "):
            key = line.split(":")[0].strip()
            samples[key] = []
            continue
        parts = line.split(None, 1)
        if key is None or len(parts) < 2 or parts[0].startswith("ffffffff"):
            continue
        sym = parts[1]
        if sym == "[unknown]":
            continue
        samples[key].append("<plt>" if sym.startswith("_init") else short(sym.split("+0x")[0]))
    return samples


def perfparser(path, plt):
    """perfparser's expected text: a sample is a header line (comm, pid,
    tid, time), its attributes, then two lines a frame; the second holds
    the symbol's start and size, then its name and binary."""
    samples = {}
    blocks = open(path).read().split("\n\n")
    key = None
    for block in blocks:
        lines = block.split("\n")
        if lines and lines[0] and not lines[0].startswith("\t"):
            sec, frac = lines[0].split("\t")[3].split(".")
            key = sec + "." + frac[:6]   # perf script truncates to us
            samples[key] = []
            continue
        if key is None:
            continue
        for line in lines:
            fields = line.split("\t")
            # [addr, (source,) symbol start and size, symbol and binary]
            if len(fields) < 4 or " vector_static_gcc_v9.1.0 " not in fields[-1]:
                continue
            text = fields[-1]
            if text.endswith(" (inlined)"):
                continue
            start = int(fields[-2].split()[0], 16)
            sym = text.split(" vector_static_gcc_v9.1.0 ")[0]
            samples[key].append("<plt>" if plt[0] <= start < plt[1] or sym == "_init"
                                else short(sym))
    return samples


def compare(args):
    plt = plt_range(args.binary)
    addr_of = aliases(args.binary)
    mine = ours(args.ours, plt)
    rc = 0
    for oracle, theirs in (("perf", perf_script(args.perf)),
                           ("perfparser", perfparser(args.expected, plt))):
        equal = lbr = lbr_equal = shown = 0
        for key, (names, is_lbr) in sorted(mine.items()):
            want = theirs.get(key)
            if want is not None and oracle == "perfparser" and len(want) == len(names) + 1:
                want = want[1:]
            lbr += is_lbr
            if want is not None and len(want) == len(names) and \
               all(same(x, y, addr_of) for x, y in zip(want, names)):
                equal += 1
                lbr_equal += is_lbr
            elif shown < 3:
                shown += 1
                print("# %s %s: theirs %s" % (oracle, key, want))
                print("#   ours %s" % names)
        print("RESULT %s samples=%d equal=%d lbr=%d lbr_equal=%d theirs=%d"
              % (oracle, len(mine), equal, lbr, lbr_equal, len(theirs)))
    return rc


def main(argv):
    if argv and argv[0] == "inflate":
        return inflate(argv[1:])
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["compare"])
    p.add_argument("--ours", required=True)
    p.add_argument("--perf", required=True)
    p.add_argument("--expected", required=True)
    p.add_argument("--binary", required=True)
    return compare(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
