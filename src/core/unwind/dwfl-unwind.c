#include "config.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/unwind/symbolize.h"
#include "core/unwind/dwfl-unwind.h"

const char *
st_stop_reason_name (enum st_stop_reason reason)
{
  static const char *const names[ST_STOP_N] = {
    [ST_STOP_END] = "end",
    [ST_STOP_STACK_EXHAUSTED] = "stack copy exhausted",
    [ST_STOP_NO_MODULE] = "no module",
    [ST_STOP_NO_UNWIND_INFO] = "no unwind info",
    [ST_STOP_FRAME_LIMIT] = "frame limit",
    [ST_STOP_NO_USER_STACK] = "no user stack",
    [ST_STOP_NO_PROCESS_FILES] = "no files of the process found",
    [ST_STOP_UNWIND_ERROR] = "unwind error",
    [ST_STOP_NOT_UNWOUND] = "not unwound (passthru)",
    [ST_STOP_KERNEL_CHAIN] = "kernel call chain (frame pointers)",
  };
  return reason < ST_STOP_N ? names[reason] : "?";
}

/* What the attached callbacks read: the sample being unwound now.  */
struct st_unwind_slot {
  pid_t tid;
  const struct st_dwarf_regs *regs;
  const uint8_t *stack;
  size_t stack_size;
  uint64_t sp;
  bool memory_fault;       /* a read fell outside the stack copy */
  bool has_thread;         /* next_thread already returned the thread */
  /* frame collection */
  struct st_raw_frame *frames;
  size_t n_frames, max_frames;
};

struct st_unwind_slot *
st_unwind_slot_new (void)
{
  return calloc (1, sizeof (struct st_unwind_slot));
}

void
st_unwind_slot_free (struct st_unwind_slot *slot)
{
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

/* Memory is what the sample copied: the stack from the sampled sp up.  */
static bool
memory_read (Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
  struct st_unwind_slot *slot = dwfl_arg;
  if (addr < slot->sp || addr - slot->sp >= slot->stack_size)
    {
      slot->memory_fault = true;
      return false;
    }
  uint64_t off = addr - slot->sp;
  size_t avail = slot->stack_size - off;
  uint64_t value = 0;
  /* A 32-bit task's last word may be only 4 bytes from the end.  */
  size_t n = avail < sizeof value ? avail : sizeof value;
  if (slot->regs->big_endian)
    /* The copy is the recording machine's memory (s390x): read its word.  */
    for (size_t i = 0; i < n; i++)
      value |= (uint64_t) slot->stack[off + i] << (8 * (sizeof value - 1 - i));
  else
    memcpy (&value, slot->stack + off, n);
  *result = value;
  return true;
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
  return dwfl_attach_state (dwfl, NULL, pid, &thread_callbacks, slot);
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
  return DWARF_CB_OK;
}

/* libdwfl's error codes are private; its messages are stable, and this
   program never calls setlocale, so they are never translated.  */
static bool
next_pc_outside_modules (int err)
{
  return err != 0 && strcmp (dwfl_errmsg (err), "no matching address range") == 0;
}

static enum st_stop_reason
classify_failure (Dwfl *dwfl, const struct st_unwind_slot *slot, int err)
{
  if (slot->n_frames == 0)
    return ST_STOP_UNWIND_ERROR;
  const struct st_raw_frame *last = &slot->frames[slot->n_frames - 1];
  uint64_t lookup = last->activation ? last->pc : last->pc - 1;
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  if (mod == NULL)
    return ST_STOP_NO_MODULE;
  if (next_pc_outside_modules (err))
    return st_symbolize_in_entry_function (mod, lookup) ? ST_STOP_END : ST_STOP_NO_MODULE;
  if (slot->memory_fault)
    return ST_STOP_STACK_EXHAUSTED;
  Dwarf_Addr bias;
  if (dwfl_module_eh_cfi (mod, &bias) == NULL && dwfl_module_dwarf_cfi (mod, &bias) == NULL)
    return ST_STOP_NO_UNWIND_INFO;
  return ST_STOP_UNWIND_ERROR;
}

/* A sample stopped in a PLT stub: the stubs of the architectures with a
   link register have no CFI (the linker writes none) and touch neither the
   stack pointer nor the link register, so the caller is at the link
   register with the same stack: the rule gdb applies too.  Returns true
   with *RA when REGS is such a sample.  */
static bool
in_plt_stub (Dwfl *dwfl, const struct st_dwarf_regs *regs, uint64_t *ra)
{
  if (regs->ra_reg < 0 || !regs->present[regs->ra_reg])
    return false;
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, regs->pc);
  if (mod == NULL)
    return false;
  Dwarf_Addr addr = regs->pc;
  Elf_Scn *scn = dwfl_module_address_section (mod, &addr, &(Dwarf_Addr) { 0 });
  Dwarf_Addr bias;
  Elf *elf = dwfl_module_getelf (mod, &bias);
  size_t shstrndx;
  GElf_Shdr shdr;
  if (scn == NULL || elf == NULL || elf_getshdrstrndx (elf, &shstrndx) != 0
      || gelf_getshdr (scn, &shdr) == NULL)
    return false;
  const char *name = elf_strptr (elf, shstrndx, shdr.sh_name);
  if (name == NULL || (strcmp (name, ".plt") != 0 && strcmp (name, ".plt.sec") != 0
                       && strcmp (name, ".iplt") != 0))
    return false;
  *ra = regs->value[regs->ra_reg];
  return true;
}

/* The code bytes at PC in its module's file, at most N; 0 if none.  */
static size_t
code_at (Dwfl *dwfl, uint64_t pc, const uint8_t **bytes)
{
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, pc);
  Dwarf_Addr off = pc, bias;
  Elf_Scn *scn = mod ? dwfl_module_address_section (mod, &off, &bias) : NULL;
  Elf_Data *data = scn ? elf_getdata (scn, NULL) : NULL;
  if (data == NULL || data->d_buf == NULL || off >= data->d_size)
    return 0;
  *bytes = (const uint8_t *) data->d_buf + off;
  return data->d_size - off;
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
                  size_t max_frames, struct st_unwind_result *result)
{
  slot->tid = sample->tid;
  slot->regs = regs;
  slot->stack = sample->stack;
  slot->stack_size = sample->stack_size;
  slot->sp = regs->sp;
  slot->memory_fault = false;
  slot->has_thread = false;
  slot->frames = frames;
  slot->n_frames = 0;
  slot->max_frames = max_frames;

  struct st_dwarf_regs caller;
  uint64_t ra;
  bool thunk = false;
  if (max_frames > 1
      && (in_plt_stub (dwfl, regs, &ra) || (thunk = in_pc_thunk (dwfl, regs, sample, &ra))))
    {
      frames[0] = (struct st_raw_frame) { regs->pc, true };
      slot->n_frames = 1;
      caller = *regs;
      caller.pc = ra;
      if (thunk)
        caller.value[4] += 4;   /* esp, past the return address */
      slot->regs = &caller;
    }
  int r = dwfl_getthread_frames (dwfl, sample->tid, frame_callback, slot);
  if (slot->regs == &caller && slot->n_frames > 1)
    frames[1].activation = false;   /* a return address, not the pc of a sample */
  result->frames = frames;
  result->n_frames = slot->n_frames;
  result->detail = NULL;
  if (r == 0)
    result->stop = ST_STOP_END;
  else if (slot->n_frames >= max_frames)
    result->stop = ST_STOP_FRAME_LIMIT;
  else
    {
      int err = dwfl_errno ();
      result->stop = classify_failure (dwfl, slot, err);
      if (err != 0)
        result->detail = dwfl_errmsg (err);
    }
  slot->regs = NULL;
  slot->stack = NULL;
}
