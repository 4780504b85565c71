# Runs inside gdb (-x), on tests/e2e/epilogue.c's program: stops at every
# instruction of work's epilogue (the pops and the tail call's jmp after
# them), at each entry into strtol@plt and through the first call's lazy
# path (push, jmp to PLT0, PLT0's push and jmp, ld.so's trampoline up to
# its call of _dl_fixup and _dl_fixup's first 8), and writes one JSON line
# per stop as tests/arch/harvest.py does: the registers in perf's x86_64
# order, the stack from sp up (what perf --call-graph dwarf copies) and
# gdb's backtrace, the oracle (gdb reads the live memory below sp).
#
# Environment: EPILOGUE_OUT (the JSON lines), EPILOGUE_MAPS (where the
# process's maps are copied).
import json
import os

import gdb

REGS = ("rax,rbx,rcx,rdx,rsi,rdi,rbp,rsp,rip,eflags,cs,ss,ds,es,fs,gs,"
        "r8,r9,r10,r11,r12,r13,r14,r15").split(",")
out = open(os.environ["EPILOGUE_OUT"], "w")

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break main", to_string=True)
gdb.execute("run", to_string=True)
gdb.execute("delete", to_string=True)
pid = gdb.selected_inferior().pid
stack_end = None
with open("/proc/%d/maps" % pid) as f, open(os.environ["EPILOGUE_MAPS"], "w") as m:
    for line in f:
        m.write(line)
        if line.rstrip().endswith("[stack]"):
            stack_end = int(line.split()[0].split("-")[1], 16)

# work's epilogue: from the first pop before its last jmp to the jmp.
work = int(gdb.parse_and_eval("(long) &work"))
block = gdb.block_for_pc(work)
while block.function is None:
    block = block.superblock
insns = gdb.selected_frame().architecture().disassemble(work, end_pc=block.end - 1)
tail = max(i for i, x in enumerate(insns) if x["asm"].startswith("jmp") and "*" in x["asm"])
first = tail
while first > 0 and insns[first - 1]["asm"].startswith(("pop", "add ")):
    first -= 1
for x in insns[first:tail + 1]:
    gdb.execute("break *%d" % x["addr"], to_string=True)
plt = int(gdb.parse_and_eval("(long) &'strtol@plt'"))
gdb.execute("break *%d" % plt, to_string=True)
# The .plt section where the process has it (PLT0 has no symbol).
plt_lo = plt_hi = 0
for line in gdb.execute("info files", to_string=True).splitlines():
    words = line.split()
    if len(words) >= 5 and words[1] == "-" and words[4] == ".plt" and "/" not in line:
        plt_lo, plt_hi = int(words[0], 16), int(words[2], 16)


def backtrace():
    frames, pcs = [], []
    f = gdb.newest_frame()
    while f is not None and len(frames) < 32:
        pcs.append(f.pc())
        name = f.name()
        if f.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            frames.append(name if name else "??")
        if name == "main":
            return frames, pcs, True
        try:
            f = f.older()
        except gdb.error:
            break
    return frames, pcs, False


def record(lazy=False):
    regs = []
    for n in REGS:
        try:
            v = int(gdb.parse_and_eval("(unsigned long long) $%s" % n))
        except gdb.error:
            v = int(gdb.execute("p/x $%s" % n, to_string=True).split("=")[1].strip(), 16)
        regs.append(v & 0xFFFFFFFFFFFFFFFF)
    sp = regs[7]
    stack = bytes(gdb.selected_inferior().read_memory(sp, min(16384, stack_end - sp)))
    bt, pcs, reached = backtrace()
    out.write(json.dumps({"regs": regs, "sp": sp, "stack": stack.hex(), "bt": bt, "pcs": pcs,
                          "reached_main": reached, "pc": regs[8],
                          "in_plt": plt_lo <= regs[8] < plt_hi, "lazy": lazy}) + "\n")



def pc():
    return int(gdb.parse_and_eval("(long) $pc"))


first_call = True
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not gdb.selected_inferior().threads():
        break
    record()
    # The first call is not bound yet: its jmp leads to the push of the
    # index, the jmp to PLT0, PLT0's push and jmp, each a stop.
    while first_call and pc() == plt or plt_lo <= pc() < plt_hi and pc() != plt:
        gdb.execute("stepi", to_string=True)
        if plt_lo <= pc() < plt_hi:
            record()
    if first_call:
        # PLT0's jmp led into ld.so's lazy-binding trampoline
        # (_dl_runtime_resolve_*): a stop at each of its instructions up
        # to its call of _dl_fixup, and at _dl_fixup's first ones, past its
        # save of rbx.  The trampoline keeps its frame in rbx, and until
        # _dl_fixup saves it, the value is the one rbx had below, which
        # libdw's x86_64 ABI rules lose (dwfl-unwind.c's note_rbx).
        arch = gdb.selected_frame().architecture()
        for _ in range(64):
            asm = arch.disassemble(pc())[0]["asm"]
            record(lazy=True)
            gdb.execute("stepi", to_string=True)
            if asm.startswith("call"):
                break
        for _ in range(8):
            record(lazy=True)
            gdb.execute("stepi", to_string=True)
    first_call = False
out.close()
