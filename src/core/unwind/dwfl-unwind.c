#include "config.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/unwind/arm-exidx-step.h"
#include "core/unwind/dwfl-unwind.h"
#include "core/unwind/epilogue.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/unwind-cache.h"

/* x86_64's DWARF registers libdwfl keeps in a frame (rax ... r15, and the
   return address column), and rbx among them.  */
#define X86_64_FRAME_REGS 17
#define X86_64_RBX 3

/* What the attached callbacks read: the sample being unwound now.  */
struct st_unwind_slot {
  pid_t tid;
  const struct st_dwarf_regs *regs;
  const uint8_t *stack;
  size_t stack_size;
  uint64_t sp;
  bool memory_fault;       /* a read fell outside the stack copy */
  uint64_t fault_above;    /* the highest such read above the copy, or 0 */
  uint64_t read_end;       /* the end of the highest word read or wanted */
  bool has_thread;         /* next_thread already returned the thread */
  bool go_outermost;       /* stopped at a Go stack's outermost frame */
  struct st_popped popped; /* slots below sp an epilogue popped (x86) */
  /* frame collection */
  struct st_raw_frame *frames;
  size_t n_frames, max_frames;
  /* The rules of the attached Dwfl's modules (NULL: not made yet).  */
  struct st_unwind_cache *cache;
  /* 32-bit ARM: the last frame, for an .ARM.exidx step past it */
  struct st_arm_frame arm_frame;
  struct st_why arm_why;
  /* x86_64: rbx as the frames so far knew it, whether libdwfl lost it in
     the last frame, and that frame's registers once captured (note_rbx) */
  struct rbx_seen {
    bool known, lost;
    uint64_t value;
    size_t lost_at;         /* the first frame since it was known without it */
  } rbx, rbx_at_start;      /* and as the unwind started (a hand-off's) */
  size_t capture_at;        /* the frame whose registers to keep, or SIZE_MAX */
  uint64_t captured_value[X86_64_FRAME_REGS];
  uint32_t captured_present;
};

struct st_unwind_slot *
st_unwind_slot_new (void)
{
  return calloc (1, sizeof (struct st_unwind_slot));
}

void
st_unwind_slot_free (struct st_unwind_slot *slot)
{
  if (slot != NULL)
    st_unwind_cache_free (slot->cache);
  free (slot);
}

static pid_t
next_thread (Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
  struct st_unwind_slot *slot = dwfl_arg;
  if (slot->has_thread || slot->regs == NULL)
    return 0;
  slot->has_thread = true;
  *thread_argp = slot;
  return slot->tid;
}

static bool
get_thread (Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
  struct st_unwind_slot *slot = dwfl_arg;
  if (slot->regs == NULL || tid != slot->tid)
    return false;
  *thread_argp = slot;
  return true;
}

/* How far above the sampled sp a wanted read may lie and still be taken
   for the stack the copy did not hold: the default stack limit (8 MiB).
   Farther is a garbage pointer (a frame-pointer guess through code built
   without frame pointers), not a short copy.  */
#define STACK_REACH ((uint64_t) 8 << 20)

/* Memory is what the sample copied: the stack from the sampled sp up.  */
static bool
memory_read (Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
  struct st_unwind_slot *slot = dwfl_arg;
  for (unsigned i = 0; addr < slot->sp && i < slot->popped.n; i++)
    if (slot->popped.addr[i] == addr)
      {
        *result = slot->popped.value[i];
        return true;
      }
  if (st_stack_copy_read (slot->stack, slot->stack_size, slot->sp, slot->regs->big_endian, addr,
                          &slot->read_end, result))
    return true;
  slot->memory_fault = true;
  if (addr >= slot->sp && addr > slot->fault_above)
    slot->fault_above = addr;
  if (addr >= slot->sp && addr - slot->sp < STACK_REACH && addr + 8 > slot->read_end)
    slot->read_end = addr + 8;
  return false;
}

static bool
set_initial_registers (Dwfl_Thread *thread, void *thread_arg)
{
  struct st_unwind_slot *slot = thread_arg;
  return st_regs_set_initial (thread, slot->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
  .next_thread = next_thread,
  .get_thread = get_thread,
  .memory_read = memory_read,
  .set_initial_registers = set_initial_registers,
};

bool
st_unwind_attach (Dwfl *dwfl, pid_t pid, struct st_unwind_slot *slot)
{
  /* A Dwfl is attached once: a new one (an exec, a mapping gone) has
     other modules, which the cached rules must not outlive.  */
  st_unwind_cache_clear (slot->cache);
  return dwfl_attach_state (dwfl, NULL, pid, &thread_callbacks, slot);
}

/* libdw 0.188's x86_64 ABI rules (backends/x86_64_cfi.c) make DWARF
   register 0, rax, "same value" where they mean rbx, register 3.  So a
   frame whose CFI says nothing of rbx (its function never touched it)
   leaves rbx undefined in its caller, where the SysV ABI keeps it: it is
   callee-saved.  Nothing needs it until a caller's CFA is rbx-based:
   glibc's lazy-binding trampolines (_dl_runtime_resolve_xsave* realign the
   stack and keep their frame in rbx).  libdwfl then cannot compute the
   return address and ends the stack there as if it were the outermost
   frame: a sample in _dl_fixup's first instructions, before it saves rbx,
   ended at the trampoline instead of in the program that called through
   its PLT.  So each frame notes rbx when libdwfl knows it, and an end at
   a frame where it was lost goes on with rbx as the frames below had it
   (go_on_with_rbx).  The unwind-rule cache keeps rbx the same way
   (unwind-rows.c).  Returns true at the frame to capture: its registers
   are kept, and libdwfl need go no further.  */
static bool
note_rbx (Dwfl_Frame *state, struct st_unwind_slot *slot)
{
  Dwarf_Word v;
  if (dwfl_frame_reg (state, X86_64_RBX, &v) == 0)
    slot->rbx = (struct rbx_seen) { .known = true, .value = v };
  else if (slot->rbx.known && !slot->rbx.lost)
    {
      slot->rbx.lost = true;
      slot->rbx.lost_at = slot->n_frames - 1;
    }
  if (slot->n_frames - 1 != slot->capture_at)
    return false;
  slot->captured_present = 0;
  for (unsigned i = 0; i < X86_64_FRAME_REGS; i++)
    if (dwfl_frame_reg (state, i, &v) == 0)
      {
        slot->captured_value[i] = v;
        slot->captured_present |= 1u << i;
      }
  return true;
}

static int
frame_callback (Dwfl_Frame *state, void *arg)
{
  struct st_unwind_slot *slot = arg;
  Dwarf_Addr pc;
  bool activation;
  if (!dwfl_frame_pc (state, &pc, &activation))
    return DWARF_CB_ABORT;
  if (slot->n_frames >= slot->max_frames)
    return DWARF_CB_ABORT;
  slot->frames[slot->n_frames].pc = pc;
  slot->frames[slot->n_frames].activation = activation;
  slot->n_frames++;
  if (slot->regs->is_arm)
    st_arm_frame_save (state, &slot->arm_frame);
  if (slot->regs->is_x86_64 && note_rbx (state, slot))
    return DWARF_CB_ABORT;
  /* Go's outermost frames have no CFI that says so, and a frame-pointer
     step past them reads another stack's words: stop where Go does.  */
  Dwarf_Addr lookup = activation ? pc : pc - 1;
  Dwfl_Module *mod = dwfl_addrmodule (dwfl_thread_dwfl (dwfl_frame_thread (state)), lookup);
  if (mod != NULL && st_module_is_go_outermost (mod, lookup))
    {
      slot->go_outermost = true;
      return DWARF_CB_ABORT;
    }
  return DWARF_CB_OK;
}

/* libdwfl's error codes are private; its messages are stable, and this
   program never calls setlocale, so they are never translated.  */
static bool
next_pc_outside_modules (int err)
{
  return err != 0 && strcmp (dwfl_errmsg (err), "no matching address range") == 0;
}

/* True when the unwind wanted stack above the copy, within reach of a
   real stack: a CFA, a return address or a saved register lay beyond the
   copied bytes.  A saved register that could not be read ends the unwind
   only a step later, where a CFA is computed from it: the fault may be
   from any step, not only the last.  */
static bool
ran_out_of_copy (const struct st_unwind_slot *slot)
{
  uint64_t copy_end = slot->sp + slot->stack_size;
  return slot->fault_above >= copy_end && slot->fault_above - slot->sp < STACK_REACH;
}

/* True when CFI (.eh_frame or .debug_frame) covers LOOKUP in MOD: libdwfl
   stepped from there by its rules, not by a frame-pointer guess.  */
static bool
has_cfi (Dwfl_Module *mod, uint64_t lookup)
{
  Dwarf_Addr bias;
  Dwarf_CFI *tables[2];
  tables[0] = dwfl_module_eh_cfi (mod, &bias);
  Dwarf_Addr eh_bias = bias;
  tables[1] = dwfl_module_dwarf_cfi (mod, &bias);
  Dwarf_Addr biases[2] = { eh_bias, bias };
  for (int i = 0; i < 2; i++)
    {
      Dwarf_Frame *frame;
      if (tables[i] != NULL && dwarf_cfi_addrframe (tables[i], lookup - biases[i], &frame) == 0)
        {
          free (frame);
          return true;
        }
    }
  return false;
}

/* True when MOD's CFI at LOOKUP says the return address is undefined: the
   outermost frame (_start, a thread's clone3) by the ABI's own marker.  */
static bool
cfi_marks_outermost (Dwfl_Module *mod, uint64_t lookup)
{
  Dwarf_Addr bias;
  Dwarf_CFI *cfi = dwfl_module_eh_cfi (mod, &bias);
  if (cfi == NULL)
    cfi = dwfl_module_dwarf_cfi (mod, &bias);
  Dwarf_Frame *frame;
  if (cfi == NULL || dwarf_cfi_addrframe (cfi, lookup - bias, &frame) != 0)
    return false;
  bool undefined = false;
  int ra = dwarf_frame_info (frame, NULL, NULL, NULL);
  Dwarf_Op ops_mem[3], *ops;
  size_t nops;
  if (ra >= 0 && dwarf_frame_register (frame, ra, ops_mem, &ops, &nops) == 0)
    undefined = nops == 0 && ops == ops_mem;
  free (frame);
  return undefined;
}

static uint64_t
frame_lookup (const struct st_raw_frame *f)
{
  return f->activation ? f->pc : f->pc - 1;
}

/* True when the step into the last frame was a frame-pointer guess: the
   frame before it had no CFI.  */
static bool
reached_by_frame_pointer (Dwfl *dwfl, const struct st_unwind_slot *slot)
{
  /* libdw 0.188 has no frame-pointer unwinder for 32-bit ARM.  */
  if (slot->n_frames < 2 || slot->regs->is_arm)
    return false;
  uint64_t lookup = frame_lookup (&slot->frames[slot->n_frames - 2]);
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  return mod == NULL || !has_cfi (mod, lookup);
}

static bool
ends_at_outermost (Dwfl *dwfl, const struct st_unwind_slot *slot)
{
  if (slot->n_frames == 0)
    return false;
  uint64_t lookup = frame_lookup (&slot->frames[slot->n_frames - 1]);
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  return mod != NULL && cfi_marks_outermost (mod, lookup);
}

/* True when OPS (a DWARF expression) reads rbx.  */
static bool
reads_rbx (const Dwarf_Op *ops, size_t nops)
{
  for (size_t i = 0; i < nops; i++)
    if (ops[i].atom == DW_OP_breg0 + X86_64_RBX || ops[i].atom == DW_OP_reg0 + X86_64_RBX
        || ((ops[i].atom == DW_OP_bregx || ops[i].atom == DW_OP_regx)
            && ops[i].number == X86_64_RBX))
      return true;
  return false;
}

/* True when CFI covers LOOKUP and says nothing of rbx (libdw's ABI rules
   leave it undefined): the only way libdwfl loses a known rbx that the
   frames below still hold.  A rule that failed (a read that faulted, a
   register that was unknown) loses it for real.  */
static bool
rbx_left_by_cfi (Dwfl *dwfl, uint64_t lookup)
{
  Dwarf_Frame *frame = st_cfi_row_at (dwfl, lookup);
  if (frame == NULL)
    return false;
  Dwarf_Op ops_mem[3], *ops;
  size_t nops;
  bool undefined = dwarf_frame_register (frame, X86_64_RBX, ops_mem, &ops, &nops) == 0
                   && nops == 0 && (ops == ops_mem || ops == NULL);
  free (frame);
  return undefined;
}

/* True when libdwfl's end at the last frame was for the want of rbx alone:
   the frame's CFA is computed from rbx, and every step since rbx was last
   known was by CFI that said nothing of it (a frame-pointer guess knows
   nothing of the registers a function without CFI may have changed).  */
static bool
ended_for_rbx (Dwfl *dwfl, const struct st_unwind_slot *slot)
{
  if (!slot->rbx.lost || slot->go_outermost || slot->rbx.lost_at == 0)
    return false;
  Dwarf_Frame *frame = st_cfi_row_at (dwfl, frame_lookup (&slot->frames[slot->n_frames - 1]));
  if (frame == NULL)
    return false;
  Dwarf_Op *ops;
  size_t nops;
  bool cfa_rbx = dwarf_frame_cfa (frame, &ops, &nops) == 0 && reads_rbx (ops, nops);
  free (frame);
  for (size_t i = slot->rbx.lost_at - 1; cfa_rbx && i < slot->n_frames - 1; i++)
    cfa_rbx = rbx_left_by_cfi (dwfl, frame_lookup (&slot->frames[i]));
  return cfa_rbx;
}

/* Goes on past each end libdwfl came to only for the want of rbx
   (note_rbx), from the frame it ended at, given that frame's registers and
   rbx as the frames below had it, the way it goes on from the cache's last
   frame (a return address is given as pc - 1, and the frame mended).
   Those registers are gone with libdwfl's frames: it unwinds again from
   where it started (START, with START_N frames before it) to keep them, a
   cost only such an end pays.  R: what dwfl_getthread_frames returned;
   returns what it returned last.  */
static int
go_on_with_rbx (Dwfl *dwfl, struct st_unwind_slot *slot, const struct st_dwarf_regs *start,
                size_t start_n, int r)
{
  struct st_dwarf_regs from;
  const struct st_dwarf_regs *before = slot->regs;
  while (r == 0 && ended_for_rbx (dwfl, slot))
    {
      size_t last = slot->n_frames - 1;
      struct st_raw_frame frame = slot->frames[last], first = slot->frames[start_n];
      uint64_t rbx = slot->rbx.value;
      slot->regs = start;
      slot->n_frames = start_n;
      slot->rbx = slot->rbx_at_start;
      slot->capture_at = last;
      (void) dwfl_getthread_frames (dwfl, slot->tid, frame_callback, slot);
      slot->capture_at = SIZE_MAX;
      slot->frames[start_n] = first;   /* as mended after the first unwind */
      if (slot->n_frames != last + 1)
        break;                         /* cannot happen: the same steps */
      from = *before;
      for (unsigned i = 0; i < X86_64_FRAME_REGS; i++)
        {
          from.present[i] = (slot->captured_present >> i) & 1;
          from.value[i] = from.present[i] ? slot->captured_value[i] : 0;
        }
      from.present[X86_64_RBX] = true;
      from.value[X86_64_RBX] = rbx;
      from.pc = frame.activation ? frame.pc : frame.pc - 1;
      start = slot->regs = &from;
      start_n = slot->n_frames = last;
      slot->rbx = slot->rbx_at_start = (struct rbx_seen) { .known = false };
      r = dwfl_getthread_frames (dwfl, slot->tid, frame_callback, slot);
      if (slot->n_frames > last)
        slot->frames[last] = frame;
    }
  slot->regs = before;
  return r;
}

static enum st_stop_reason
classify_failure (Dwfl *dwfl, const struct st_unwind_slot *slot, int err)
{
  if (slot->n_frames == 0)
    return ST_STOP_UNWIND_ERROR;
  uint64_t lookup = frame_lookup (&slot->frames[slot->n_frames - 1]);
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  if (mod == NULL)
    return ran_out_of_copy (slot) ? ST_STOP_STACK_EXHAUSTED : ST_STOP_NO_MODULE;
  if (next_pc_outside_modules (err))
    return st_module_in_entry_function (mod, lookup) ? ST_STOP_END : ST_STOP_NO_MODULE;
  /* Without CFI libdwfl guessed by frame pointer.  A first guess that
     found nothing means no unwind info, whatever it read (code built
     without frame pointers leaves anything in the register); a chain of
     guesses that worked ends, or runs out of the copy.  */
  if (!has_cfi (mod, lookup))
    {
      if (!reached_by_frame_pointer (dwfl, slot))
        return ST_STOP_NO_UNWIND_INFO;
      return ran_out_of_copy (slot) ? ST_STOP_STACK_EXHAUSTED : ST_STOP_FRAME_POINTER_END;
    }
  if (ran_out_of_copy (slot))
    return ST_STOP_STACK_EXHAUSTED;
  return ST_STOP_UNWIND_ERROR;
}

/* The code bytes at PC in its module's file, at most N; 0 if none.  */
static size_t
code_at (Dwfl *dwfl, uint64_t pc, const uint8_t **bytes)
{
  struct st_code at;
  if (!st_code_at (dwfl, pc, &at))
    return 0;
  *bytes = at.bytes;
  return at.avail;
}

/* A sample stopped in a PLT stub: the stubs of the architectures with a
   link register have no CFI (the linker writes none) and touch neither the
   stack pointer nor the link register, so the caller is at the link
   register with the same stack: the rule gdb applies too.  On x86 GNU ld
   writes CFI for its PLT but lld writes none (a clang -fuse-ld=lld
   program, every cargo build): there the return address is the word at
   the stack pointer, below the words the lazy path pushed, which the
   instruction at PC tells (libunwind's is_plt_entry, which perf uses,
   knows only the first).  Returns true with *RA, and in *POPPED the bytes
   the caller's stack pointer lies above the sample's (x86), when REGS is
   such a sample.  */
static bool
in_plt_stub (Dwfl *dwfl, const struct st_dwarf_regs *regs, const struct st_sample *sample,
             uint64_t *ra, uint64_t *popped)
{
  bool plt0;
  if (regs->ra_reg >= 0)
    {
      if (!regs->present[regs->ra_reg] || !st_code_in_plt (dwfl, regs->pc, &plt0))
        return false;
      *ra = regs->value[regs->ra_reg];
      *popped = 0;
      return true;
    }
  /* The section first: a CFI lookup costs more, and few samples are in
     a PLT.  A linker writes a PLT's CFI (GNU ld does) in .eh_frame, never
     in .debug_frame: no need to load the module's DWARF to look.  */
  Dwarf_Addr bias;
  Dwarf_CFI *eh;
  Dwarf_Frame *frame;
  if (!st_code_in_plt (dwfl, regs->pc, &plt0))
    return false;
  eh = dwfl_module_eh_cfi (dwfl_addrmodule (dwfl, regs->pc), &bias);
  if (eh != NULL && dwarf_cfi_addrframe (eh, regs->pc - bias, &frame) == 0)
    {
      free (frame);
      return false;
    }
  const uint8_t *c;
  size_t n = code_at (dwfl, regs->pc, &c);
  if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && (c[3] & 0xfe) == 0xfa)
    n = 0;    /* endbr64/endbr32: nothing pushed yet */
  else if (n >= 1 && c[0] == 0xf2)
    c++, n--;   /* bnd */
  unsigned words;
  if (n == 0 || (n >= 1 && c[0] == 0x68))
    words = 0;                /* endbr, or push $index: nothing pushed yet */
  else if (plt0)
    words = n >= 2 && c[0] == 0xff && (c[1] == 0x35 || c[1] == 0xb3)
            ? 1               /* push GOT+8: the index is pushed */
            : 2;              /* jmp *GOT+16: and the link map */
  else if (n >= 2 && c[0] == 0xff && (c[1] == 0x25 || c[1] == 0xa3))
    words = 0;                /* jmp *GOT: a resolved stub */
  else if (n >= 1 && c[0] == 0xe9)
    words = 1;                /* jmp PLT0, after push $index */
  else
    return false;
  size_t w = regs->is_i386 ? 4 : 8;
  if (sample->stack_size < (words + 1) * w)
    return false;
  uint64_t value = 0;
  memcpy (&value, sample->stack + words * w, w);
  *ra = value;
  *popped = (words + 1) * w;
  return true;
}

/* i386 position-independent code calls __x86.get_pc_thunk.REG
   (mov (%esp),%REG; ret), which has no CFI: in it, the return address is
   at the stack pointer.  */
static bool
in_pc_thunk (Dwfl *dwfl, const struct st_dwarf_regs *regs, const struct st_sample *sample,
             uint64_t *ra)
{
  if (!regs->is_i386 || sample->stack_size < 4)
    return false;
  const uint8_t *code;
  size_t n = code_at (dwfl, regs->pc, &code);
  bool at_mov = n >= 4 && code[0] == 0x8b && code[2] == 0x24 && code[3] == 0xc3;
  const uint8_t *before;
  bool at_ret = !at_mov && n >= 1 && code[0] == 0xc3 && code_at (dwfl, regs->pc - 3, &before) >= 4
                && before[0] == 0x8b && before[2] == 0x24;
  const uint8_t *mov = at_mov ? code : before;
  /* modrm 00 REG 100 with a SIB of (%esp): mov (%esp),%REG.  */
  if (!(at_mov || at_ret) || (mov[1] & 0xc7) != 0x04)
    return false;
  uint32_t value;
  memcpy (&value, sample->stack, sizeof value);
  *ra = value;
  return true;
}

void
st_unwind_sample (Dwfl *dwfl, struct st_unwind_slot *slot, const struct st_sample *sample,
                  const struct st_dwarf_regs *regs, struct st_raw_frame *frames,
                  size_t max_frames, bool use_cache, struct st_unwind_result *result)
{
  struct st_unwind_handoff handoff = { .n_frames = 0 };
  if (use_cache && st_unwind_cache_applies (regs)
      && (slot->cache != NULL || st_unwind_cache_new (&slot->cache) == 0)
      && st_unwind_cache_sample (slot->cache, dwfl, sample, regs, frames, max_frames, result,
                                 &handoff))
    {
      result->n_by_cache = result->n_frames;
      return;
    }
  result->n_by_cache = handoff.n_frames;
  slot->tid = sample->tid;
  slot->regs = regs;
  slot->stack = sample->stack;
  slot->stack_size = sample->stack_size;
  slot->sp = regs->sp;
  slot->memory_fault = false;
  slot->fault_above = 0;
  slot->read_end = regs->sp;
  slot->has_thread = false;
  slot->go_outermost = false;
  slot->rbx = slot->rbx_at_start = (struct rbx_seen) { .known = false };
  slot->capture_at = SIZE_MAX;
  /* Stopped after an epilogue's pops (LLVM's CFI at a tail call or a ret
     still places the saved registers below sp): the registers hold what
     the popped slots held.  */
  st_popped_slots (dwfl, regs, &slot->popped);
  slot->frames = frames;
  slot->n_frames = handoff.n_frames;
  slot->max_frames = max_frames;

  struct st_dwarf_regs caller;
  uint64_t ra, popped = 0;
  bool thunk = false;
  if (handoff.n_frames > 0)
    {
      /* libdwfl goes on from the cache's last caller.  It takes the frame
         its registers start at for the sampled one and looks its rules up
         at its pc itself; at a return address they are looked up at pc - 1,
         so that is the pc it is given, and the frame mended below.  */
      handoff.regs.pc--;
      slot->regs = &handoff.regs;
      slot->read_end = handoff.read_end;
      if (handoff.rbx_lost_at != 0)
        slot->rbx = slot->rbx_at_start = (struct rbx_seen) {
          .known = true, .lost = true, .value = handoff.rbx, .lost_at = handoff.rbx_lost_at
        };
    }
  else if (max_frames > 1
           && (in_plt_stub (dwfl, regs, sample, &ra, &popped)
               || (thunk = in_pc_thunk (dwfl, regs, sample, &ra))))
    {
      frames[0] = (struct st_raw_frame) { regs->pc, true };
      slot->n_frames = 1;
      caller = *regs;
      caller.pc = ra;
      if (thunk)
        popped = 4;             /* esp, past the return address */
      if (popped != 0)
        {
          /* x86: the caller's stack pointer (rsp is DWARF 7, esp 4).  */
          caller.value[regs->is_i386 ? 4 : 7] += popped;
          caller.sp += popped;
          slot->read_end = regs->sp + popped;
        }
      slot->regs = &caller;
    }
  /* libdwfl's error is thread-local and outlives a call: a frame it
     fails on without setting one (a module without .eh_frame whose Dwarf
     opens without .debug_frame, where the frame-pointer guess finds rbp
     0) reports the error of whatever ran before, an earlier sample's.
     Each sample starts clean, so its detail is its own.  */
  (void) dwfl_errno ();
  const struct st_dwarf_regs *start = slot->regs;
  size_t start_n = slot->n_frames;
  int r = dwfl_getthread_frames (dwfl, sample->tid, frame_callback, slot);
  if (slot->regs == &caller && slot->n_frames > 1)
    frames[1].activation = false;   /* a return address, not the pc of a sample */
  if (handoff.n_frames > 0 && slot->n_frames > handoff.n_frames)
    frames[handoff.n_frames] = (struct st_raw_frame) { handoff.regs.pc + 1, false };
  /* An end only because libdwfl lost rbx (note_rbx) is not the end.  */
  if (r == 0 && slot->rbx.lost)
    r = go_on_with_rbx (dwfl, slot, start, start_n, r);
  /* 32-bit ARM code described only by .ARM.exidx, which libdw 0.188 does
     not read (Debian's armhf libc): step by it, then let libdwfl go on
     from the caller, by CFI where there is some (arm-exidx-step.h).  */
  int exidx = -ENOENT;
  while (r != 0 && regs->is_arm && !slot->go_outermost && slot->n_frames < max_frames)
    {
      size_t n = slot->n_frames;
      bool exact;
      exidx = st_arm_exidx_step (dwfl, &slot->arm_frame, memory_read, slot, &caller, &ra, &exact,
                                 &slot->arm_why);
      if (exidx <= 0)
        break;
      slot->regs = &caller;
      r = dwfl_getthread_frames (dwfl, sample->tid, frame_callback, slot);
      if (slot->n_frames == n)
        break;
      frames[n] = (struct st_raw_frame) { ra, exact };
    }
  result->frames = frames;
  result->n_frames = slot->n_frames;
  result->detail = NULL;
  /* libdwfl ends the stack where the return address is undefined, and
     also where it could not be read: a short copy is not the end.  A Go
     stack ends at its outermost function (gopclntab.c).  */
  if (slot->go_outermost)
    result->stop = ST_STOP_END;
  else if (r == 0)
    result->stop = ran_out_of_copy (slot) && !ends_at_outermost (dwfl, slot)
                   ? ST_STOP_STACK_EXHAUSTED : ST_STOP_END;
  else if (slot->n_frames >= max_frames)
    result->stop = ST_STOP_FRAME_LIMIT;
  else if (exidx <= 0 && exidx != -ENOENT)
    {
      result->stop = st_arm_exidx_stop (dwfl, &slot->arm_frame, exidx, ran_out_of_copy (slot));
      result->detail = exidx < 0 ? slot->arm_why.text : NULL;
    }
  else
    {
      int err = dwfl_errno ();
      if (err == 0 && handoff.n_frames > 0)
        {
          /* A step that fails without an error of its own (no CFI, and
             the frame-pointer guess finds rbp 0) leaves libdwfl's error as
             the frames before it set it, which libdwfl stepped when it
             unwinds the whole sample (an .eh_frame miss before a
             .debug_frame step sets one, and keeps it): so it does.  */
          st_unwind_sample (dwfl, slot, sample, regs, frames, max_frames, false, result);
          return;
        }
      result->stop = classify_failure (dwfl, slot, err);
      if (err != 0)
        result->detail = dwfl_errmsg (err);
    }
  result->stack_needed = slot->read_end - slot->sp;
  slot->regs = NULL;
  slot->stack = NULL;
}
