# Runs inside gdb-multiarch (-x harvest.py), attached to the workload under
# qemu-user's gdb stub.  At every stop it writes one JSON line: the
# registers in perf's order, the stack from sp upward (what perf's
# --call-graph dwarf copies) and gdb's own backtrace, the oracle.
#
# Environment: HARVEST_OUT (the JSON lines file), HARVEST_REGS (gdb's
# register names in perf numbering order, "-" for a perf register left out),
# HARVEST_STACK (bytes to copy), HARVEST_STEPS (stepi stops after each
# breakpoint), HARVEST_MAPS (the maps the workload saved at its start: the
# copy ends where the [stack] mapping does).
import json
import os

import gdb

out = open(os.environ["HARVEST_OUT"], "w")
names = os.environ["HARVEST_REGS"].split(",")
stack_want = int(os.environ.get("HARVEST_STACK", "16384"))
maps_path = os.environ["HARVEST_MAPS"]
stack_end = None
steps = int(os.environ.get("HARVEST_STEPS", "2"))

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set print frame-arguments none")

# The shared library is loaded by the time main runs, and the maps are
# saved by the time it calls f4.
gdb.execute("break f4", to_string=True)
gdb.execute("continue", to_string=True)
gdb.execute("delete", to_string=True)
if "No shared libraries" in gdb.execute("info sharedlibrary", to_string=True):
    # gdb 13 misses qemu-x86_64's and qemu-i386's library list: load each
    # shared object at the start of its first mapping (their first PT_LOAD
    # is at 0), from the maps the workload saved.
    exe = gdb.objfiles()[0].filename
    seen = set()
    with open(maps_path) as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) < 6 or int(parts[2], 16) != 0:
                continue
            path = parts[5].strip()
            if not path.startswith("/") or path == exe or path in seen:
                continue
            seen.add(path)
            gdb.execute("add-symbol-file %s -o 0x%s" % (path, parts[0].split("-")[0]),
                        to_string=True)
FUNCS = ["f1", "lib_outer", "lib_inner", "callback", "nofp", "leaf", "in_handler"]
ppc64 = "powerpc" in gdb.selected_frame().architecture().name()
for f in FUNCS:
    # At the entry, so that the stepping below walks through prologues.
    gdb.execute("break *%s" % f, to_string=True)
    if ppc64:
        # Calls within a module enter at the local entry point, 8 bytes on.
        gdb.execute("break *((char *) %s + 8)" % f, to_string=True)
try:
    gdb.execute("break *'lib_outer@plt'", to_string=True)
except gdb.error:
    pass


def backtrace():
    frames = []
    pcs = []
    reached_main = False
    f = gdb.newest_frame()
    while f is not None and len(frames) < 64:
        pcs.append(f.pc())
        if f.type() == gdb.SIGTRAMP_FRAME:
            frames.append("<signal>")
        else:
            name = f.name()
            # Inlined frames, and the tail-call frames gdb infers from
            # DW_TAG_call_site (no trace of them is on the stack), are
            # marked: eu-stacktrace shows inlined ones only with --inline.
            virtual = f.type() in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)
            frames.append(("~" if virtual else "") + (name if name else "??"))
            if name == "main":
                reached_main = True
                break
        try:
            f = f.older()
        except gdb.error:
            break
    return frames, pcs, reached_main


def find_stack_end():
    with open(maps_path) as f:
        for line in f:
            if line.rstrip().endswith("[stack]"):
                return int(line.split()[0].split("-")[1], 16)
    raise RuntimeError("no [stack] in " + maps_path)


def record():
    global stack_end
    if stack_end is None:
        stack_end = find_stack_end()
    frame = gdb.newest_frame()
    regs = []
    for n in names:
        if n == "-":
            regs.append(None)
            continue
        try:
            v = int(gdb.parse_and_eval("(unsigned long long) $%s" % n))
        except gdb.error:
            # A flags register does not cast: its hex value is printed.
            v = int(gdb.execute("p/x $%s" % n, to_string=True).split("=")[1].strip(), 16)
        regs.append(v & 0xFFFFFFFFFFFFFFFF)
    sp = int(gdb.parse_and_eval("$sp").cast(gdb.lookup_type("long long"))) & 0xFFFFFFFFFFFFFFFF
    size = min(stack_want, max(0, stack_end - sp))
    stack = bytes(gdb.selected_inferior().read_memory(sp, size)) if size else b""
    bt, pcs, reached = backtrace()
    out.write(json.dumps({"regs": regs, "sp": sp, "stack": stack.hex(), "bt": bt, "pcs": pcs,
                          "reached_main": reached}) + "\n")


while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().threads():
        break
    record()
    for _ in range(steps):
        try:
            gdb.execute("stepi", to_string=True)
        except gdb.error:
            break
        if not gdb.selected_inferior().threads():
            break
        record()
out.close()
