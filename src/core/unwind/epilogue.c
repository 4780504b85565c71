#include "config.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/unwind/epilogue.h"

/* x86's register numbers in an opcode (rax, rcx, rdx, rbx, rsp, rbp,
   rsi, rdi) to DWARF's (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp on
   x86_64; i386's DWARF order is the opcode order).  */
static const int x86_64_dwarf[8] = { 0, 2, 1, 3, 7, 6, 4, 5 };

bool
st_code_at (Dwfl *dwfl, uint64_t pc, struct st_code *out)
{
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, pc);
  Dwarf_Addr bias;
  Elf *elf = mod ? dwfl_module_getelf (mod, &bias) : NULL;
  size_t shstrndx;
  if (elf == NULL || elf_getshdrstrndx (elf, &shstrndx) != 0)
    return false;
  uint64_t addr = pc - bias;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) == NULL || !(shdr.sh_flags & SHF_EXECINSTR)
          || shdr.sh_type != SHT_PROGBITS || addr < shdr.sh_addr
          || addr - shdr.sh_addr >= shdr.sh_size)
        continue;
      Elf_Data *data = elf_getdata (scn, NULL);
      uint64_t off = addr - shdr.sh_addr;
      if (data == NULL || data->d_buf == NULL || off >= data->d_size)
        return false;
      out->section = elf_strptr (elf, shstrndx, shdr.sh_name);
      out->bytes = (const uint8_t *) data->d_buf + off;
      out->avail = data->d_size - off;
      out->offset = off;
      return out->section != NULL;
    }
  return false;
}

bool
st_code_in_plt (Dwfl *dwfl, uint64_t pc, bool *plt0)
{
  struct st_code at;
  if (!st_code_at (dwfl, pc, &at))
    return false;
  const char *name = at.section;
  if (strcmp (name, ".plt") != 0 && strcmp (name, ".plt.sec") != 0
      && strcmp (name, ".iplt") != 0 && strcmp (name, ".plt.got") != 0)
    return false;
  *plt0 = strcmp (name, ".plt") == 0 && at.offset < 16;
  return true;
}

Dwarf_Frame *
st_cfi_row_at (Dwfl *dwfl, uint64_t pc)
{
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, pc);
  if (mod == NULL)
    return NULL;
  Dwarf_Addr bias;
  Dwarf_Frame *frame;
  Dwarf_CFI *cfi = dwfl_module_eh_cfi (mod, &bias);
  if (cfi != NULL && dwarf_cfi_addrframe (cfi, pc - bias, &frame) == 0)
    return frame;
  cfi = dwfl_module_dwarf_cfi (mod, &bias);
  if (cfi != NULL && dwarf_cfi_addrframe (cfi, pc - bias, &frame) == 0)
    return frame;
  return NULL;
}

/* The address of the slot where FRAME saves DWARF register REG, by an
   "offset(N)" rule from a CFA of register plus offset; false for any
   other rule.  */
static bool
slot_of (Dwarf_Frame *frame, const struct st_dwarf_regs *regs, int reg, uint64_t *addr)
{
  Dwarf_Op *ops, ops_mem[3];
  size_t nops;
  if (dwarf_frame_cfa (frame, &ops, &nops) != 0 || nops != 1)
    return false;
  uint64_t cfa;
  if (ops[0].atom == DW_OP_bregx && ops[0].number < regs->n && regs->present[ops[0].number])
    cfa = regs->value[ops[0].number] + ops[0].number2;
  else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31
           && (size_t) (ops[0].atom - DW_OP_breg0) < regs->n
           && regs->present[ops[0].atom - DW_OP_breg0])
    cfa = regs->value[ops[0].atom - DW_OP_breg0] + ops[0].number;
  else
    return false;
  if (dwarf_frame_register (frame, reg, ops_mem, &ops, &nops) != 0 || nops == 0
      || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
    return false;
  if (nops == 2 && ops[1].atom != DW_OP_plus_uconst)
    return false;
  /* A negative offset is the unsigned operand's wrap-around.  */
  *addr = cfa + (nops == 2 ? ops[1].number : 0);
  return true;
}

/* The DWARF register popped by the instruction that ends just before
   CODE (BEFORE bytes of the section lie before it; *LEN its length), or
   -1.  A byte that only looks like a pop (the end of an immediate) names
   a register the CFI does not save in that slot, and ends the walk.  */
static int
pop_before (const uint8_t *code, size_t before, bool i386, size_t *len)
{
  if (before >= 1 && (code[-1] & 0xf8) == 0x58 && !(before >= 2 && !i386 && code[-2] == 0x41))
    {
      *len = 1;
      return i386 ? code[-1] - 0x58 : x86_64_dwarf[code[-1] - 0x58];
    }
  /* pop %r8..%r15: REX.B.  */
  if (!i386 && before >= 2 && code[-2] == 0x41 && (code[-1] & 0xf8) == 0x58)
    {
      *len = 2;
      return 8 + code[-1] - 0x58;
    }
  return -1;
}

void
st_popped_slots (Dwfl *dwfl, const struct st_dwarf_regs *regs, struct st_popped *out)
{
  out->n = 0;
  if (regs->ra_reg >= 0)
    return;                     /* not x86 */
  struct st_code at;
  if (!st_code_at (dwfl, regs->pc, &at))
    return;
  const uint8_t *code = at.bytes;
  size_t before = at.offset, len;
  /* Only after a pop: the CFI lookup costs more, and few samples are.  */
  if (pop_before (code, before, regs->is_i386, &len) < 0)
    return;
  Dwarf_Frame *frame = st_cfi_row_at (dwfl, regs->pc);
  if (frame == NULL)
    return;
  uint64_t w = regs->is_i386 ? 4 : 8;
  /* The slot just below the stack pointer was popped last: walk back over
     the pops while each one's register is the one the CFI saves in the
     next slot down.  */
  for (uint64_t slot = regs->sp - w; out->n < ST_POPPED_MAX; slot -= w)
    {
      int reg = pop_before (code, before, regs->is_i386, &len);
      uint64_t addr;
      if (reg < 0 || (size_t) reg >= regs->n || !regs->present[reg]
          || !slot_of (frame, regs, reg, &addr) || addr != slot)
        break;
      out->addr[out->n] = slot;
      out->value[out->n] = regs->value[reg];
      out->n++;
      code -= len;
      before -= len;
    }
  free (frame);
}
