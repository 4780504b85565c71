#include "config.h"

#include <errno.h>
#include <string.h>

#include "core/unwind/arm-exidx-step.h"
#include "core/unwind/module-symbols.h"

void
st_arm_frame_save (Dwfl_Frame *state, struct st_arm_frame *out)
{
  out->regs.known = 0;
  Dwarf_Addr pc;
  if (!dwfl_frame_pc (state, &pc, &out->activation))
    pc = 0;
  out->pc = pc;
  for (unsigned n = 0; n < 15; n++)
    {
      Dwarf_Word v;
      if (dwfl_frame_reg (state, n, &v) == 0)
        {
          out->regs.r[n] = (uint32_t) v;
          out->regs.known |= 1u << n;
        }
    }
}

struct reader {
  Dwfl *dwfl;
  st_arm_memory_fn memory_read;
  void *arg;
};

static int
read_stack (uint32_t addr, uint32_t *value, void *arg)
{
  struct reader *rd = arg;
  Dwarf_Word w;
  if (!rd->memory_read (rd->dwfl, addr, &w, rd->arg))
    return -EFAULT;
  /* The reader hands out a 64-bit word of the little-endian copy: ours is
     its low half.  */
  *value = (uint32_t) w;
  return 0;
}

static uint64_t
lookup_pc (const struct st_arm_frame *frame)
{
  return frame->activation ? frame->pc : frame->pc - 1;
}

int
st_arm_exidx_step (Dwfl *dwfl, const struct st_arm_frame *frame, st_arm_memory_fn memory_read,
                   void *arg, struct st_dwarf_regs *caller, uint64_t *pc, bool *exact,
                   struct st_why *why)
{
  uint64_t lookup = lookup_pc (frame);
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  Dwarf_Addr bias;
  Elf *elf = mod != NULL ? dwfl_module_getelf (mod, &bias) : NULL;
  if (elf == NULL || lookup - bias > UINT32_MAX)
    return -ENOENT;
  struct st_exidx_tables tables;
  int r = st_exidx_tables_from_elf (elf, &tables, why);
  if (r < 0)
    return r == -ENOENT ? r : -EBADMSG;
  struct st_exidx_entry entry;
  r = st_exidx_lookup (&tables, (uint32_t) (lookup - bias), &entry, why);
  if (r < 0)
    return r;
  struct st_arm_regs regs = frame->regs;
  struct reader rd = { dwfl, memory_read, arg };
  if (frame->activation && (uint32_t) (lookup - bias) == entry.fn_start)
    {
      /* The table describes the function's body, after its prologue: at
         its first instruction nothing is pushed yet, and the caller is at
         the link register with this very stack pointer.  */
      if (!(regs.known & (1u << 14)))
        return st_why_set (why, EINVAL, "exidx entry %u: at the function's entry, lr is not known",
                           entry.index);
      regs.r[15] = regs.r[14] & ~1u;
      r = 0;
    }
  else
    r = st_exidx_execute (&entry, &regs, read_stack, &rd, why);
  if (r < 0)
    return r;
  *exact = r == 1;
  if (regs.r[15] == 0)
    return 0;
  /* A step that leaves the stack pointer and pc where they were would
     loop; the stack only grows down.  */
  if (regs.r[13] < frame->regs.r[13] || (regs.r[13] == frame->regs.r[13] && regs.r[15] == frame->pc))
    return st_why_set (why, EINVAL, "exidx entry %u: sp %#x -> %#x, pc %#llx -> %#x goes nowhere",
                       entry.index, frame->regs.r[13], regs.r[13],
                       (unsigned long long) frame->pc, regs.r[15]);
  memset (caller, 0, sizeof *caller);
  caller->n = 16;
  caller->ra_reg = 14;
  caller->is_arm = true;
  for (int n = 0; n < 16; n++)
    if (regs.known & (1u << n))
      {
        caller->value[n] = regs.r[n];
        caller->present[n] = true;
      }
  *pc = regs.r[15];
  caller->pc = *exact ? regs.r[15] : regs.r[15] - 1;
  caller->value[15] = caller->pc;
  caller->sp = regs.r[13];
  return 1;
}

enum st_stop_reason
st_arm_exidx_stop (Dwfl *dwfl, const struct st_arm_frame *frame, int err, bool ran_out)
{
  if (err == 0)
    return ST_STOP_END;
  if (err == -EFAULT && ran_out)
    return ST_STOP_STACK_EXHAUSTED;
  if (err == -ENODATA)
    {
      /* _start says EXIDX_CANTUNWIND: that is the end of the stack.  */
      uint64_t lookup = lookup_pc (frame);
      Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
      if (mod != NULL && st_module_in_entry_function (mod, lookup))
        return ST_STOP_END;
      return ST_STOP_NO_UNWIND_INFO;
    }
  return ST_STOP_UNWIND_ERROR;
}
