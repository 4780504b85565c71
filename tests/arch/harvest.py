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

# The shared library is loaded by the time main runs.
gdb.execute("break main", to_string=True)
gdb.execute("continue", to_string=True)
gdb.execute("delete", to_string=True)
FUNCS = ["f1", "lib_outer", "lib_inner", "callback", "nofp", "leaf", "in_handler"]
for f in FUNCS:
    # At the entry, so that the stepping below walks through prologues.
    gdb.execute("break *%s" % f, to_string=True)
try:
    gdb.execute("break *'lib_outer@plt'", to_string=True)
except gdb.error:
    pass


def backtrace():
    frames = []
    reached_main = False
    f = gdb.newest_frame()
    while f is not None and len(frames) < 64:
        if f.type() == gdb.SIGTRAMP_FRAME:
            frames.append("<signal>")
        else:
            name = f.name()
            frames.append(name if name else "??")
            if name == "main":
                reached_main = True
                break
        try:
            f = f.older()
        except gdb.error:
            break
    return frames, reached_main


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
        v = frame.read_register(n)
        regs.append(int(v.cast(gdb.lookup_type("long long"))) & 0xFFFFFFFFFFFFFFFF)
    sp = int(gdb.parse_and_eval("$sp").cast(gdb.lookup_type("long long"))) & 0xFFFFFFFFFFFFFFFF
    size = min(stack_want, max(0, stack_end - sp))
    stack = bytes(gdb.selected_inferior().read_memory(sp, size)) if size else b""
    bt, reached = backtrace()
    out.write(json.dumps({"regs": regs, "sp": sp, "stack": stack.hex(), "bt": bt,
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
