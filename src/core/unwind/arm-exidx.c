#include "config.h"

#include <errno.h>
#include <string.h>

#include "basic/bytes.h"
#include "core/unwind/arm-exidx.h"

#ifndef PT_ARM_EXIDX
#define PT_ARM_EXIDX 0x70000001
#endif

#define EXIDX_CANTUNWIND 1u

int
st_exidx_tables_from_elf (Elf *elf, struct st_exidx_tables *out, struct st_why *why)
{
  memset (out, 0, sizeof *out);
  GElf_Ehdr ehdr;
  if (gelf_getehdr (elf, &ehdr) == NULL || ehdr.e_machine != EM_ARM
      || ehdr.e_ident[EI_CLASS] != ELFCLASS32)
    return -ENOENT;
  size_t size;
  const char *image = elf_rawfile (elf, &size);
  size_t phnum;
  if (image == NULL || elf_getphdrnum (elf, &phnum) != 0)
    return -ENOENT;
  out->image = (const uint8_t *) image;
  out->image_size = size;
  out->big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  GElf_Phdr exidx = { .p_type = PT_NULL };
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, (int) i, &ph) == NULL)
        return st_why_set (why, EBADMSG, "program header %zu unreadable", i);
      if (ph.p_type == PT_ARM_EXIDX)
        exidx = ph;
      /* A file image holds only the bytes of p_filesz; .bss has no table.  */
      if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
        continue;
      if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset || ph.p_vaddr > UINT32_MAX
          || ph.p_filesz > UINT32_MAX - ph.p_vaddr)
        return st_why_set (why, EBADMSG, "PT_LOAD %zu lies outside the file", i);
      if (out->n_loads == sizeof out->loads / sizeof out->loads[0])
        continue;   /* real files have 2-4; more is not worth a table */
      out->loads[out->n_loads].vaddr = (uint32_t) ph.p_vaddr;
      out->loads[out->n_loads].filesz = (uint32_t) ph.p_filesz;
      out->loads[out->n_loads].offset = ph.p_offset;
      out->n_loads++;
    }
  if (exidx.p_type != PT_ARM_EXIDX)
    return -ENOENT;
  if (exidx.p_vaddr > UINT32_MAX || exidx.p_filesz > UINT32_MAX - exidx.p_vaddr
      || exidx.p_filesz % 8 != 0)
    return st_why_set (why, EBADMSG, "PT_ARM_EXIDX at %#llx, %llu bytes, is no table of entries",
                       (unsigned long long) exidx.p_vaddr, (unsigned long long) exidx.p_filesz);
  out->exidx_vaddr = (uint32_t) exidx.p_vaddr;
  out->exidx_entries = (uint32_t) (exidx.p_filesz / 8);
  return 0;
}

/* The file word at file address ADDR, in the file's byte order.  */
static int
read_file_word (const struct st_exidx_tables *t, uint32_t addr, uint32_t *value)
{
  for (size_t i = 0; i < t->n_loads; i++)
    {
      uint32_t rel = addr - t->loads[i].vaddr;
      if (addr < t->loads[i].vaddr || t->loads[i].filesz < 4 || rel > t->loads[i].filesz - 4)
        continue;
      uint32_t v = st_get_u32 (t->image + t->loads[i].offset + rel);
      *value = t->big_endian ? __builtin_bswap32 (v) : v;
      return 0;
    }
  return -EFAULT;
}

/* A prel31 word at PLACE: a 31-bit signed offset from PLACE.  */
static uint32_t
prel31 (uint32_t word, uint32_t place)
{
  int32_t off = (int32_t) (word << 1) >> 1;
  return place + (uint32_t) off;
}

/* The function address of entry I, or -EBADMSG.  */
static int
entry_fn (const struct st_exidx_tables *t, uint32_t i, uint32_t *fn, struct st_why *why)
{
  uint32_t place = t->exidx_vaddr + 8 * i, word;
  if (read_file_word (t, place, &word) < 0)
    return st_why_set (why, EBADMSG, "exidx entry %u at %#x is outside the file", i, place);
  if (word & 0x80000000u)
    return st_why_set (why, EBADMSG, "exidx entry %u at %#x: %#x is no prel31 offset", i, place,
                       word);
  *fn = prel31 (word, place) & ~1u;
  return 0;
}

/* Appends the bytes of WORD from byte FIRST down to byte 0 (most
   significant first, as the ABI orders instructions in a word).  */
static void
append_bytes (struct st_exidx_entry *e, uint32_t word, int first)
{
  for (int b = first; b >= 0; b--)
    e->ops[e->n_ops++] = (uint8_t) (word >> (8 * b));
}

/* N_WORDS more words of instructions after the one at ADDR.  */
static int
append_words (const struct st_exidx_tables *t, struct st_exidx_entry *e, uint32_t addr,
              uint32_t n_words, struct st_why *why)
{
  for (uint32_t k = 1; k <= n_words; k++)
    {
      uint32_t word;
      if (addr + 4 * k < addr || read_file_word (t, addr + 4 * k, &word) < 0)
        return st_why_set (why, EBADMSG, "exidx entry %u: its word %u past %#x is outside the file",
                           e->index, k, addr);
      append_bytes (e, word, 3);
    }
  return 0;
}

/* The instructions of an .ARM.extab entry at ADDR.  */
static int
decode_extab (const struct st_exidx_tables *t, uint32_t addr, struct st_exidx_entry *e,
              struct st_why *why)
{
  uint32_t word;
  if (read_file_word (t, addr, &word) < 0)
    return st_why_set (why, EBADMSG, "exidx entry %u: its table entry at %#x is outside the file",
                       e->index, addr);
  if (!(word & 0x80000000u))
    {
      /* A personality routine of its own (prel31): GCC's routines
         (__gcc_personality_v0, __gxx_personality_v0) are followed by the
         compact long form with the word count in the top byte, the
         layout gdb and libunwind assume too.  */
      e->personality = -1;
      addr += 4;
      if (addr < 4 || read_file_word (t, addr, &word) < 0)
        return st_why_set (why, EBADMSG, "exidx entry %u: personality data at %#x outside the file",
                           e->index, addr);
      append_bytes (e, word, 2);
      return append_words (t, e, addr, word >> 24, why);
    }
  if (word & 0x70000000u)
    return st_why_set (why, EBADMSG, "exidx entry %u: %#x is no compact model", e->index, word);
  e->personality = (int) ((word >> 24) & 0x0f);
  if (e->personality == 0)
    {
      append_bytes (e, word, 2);
      return 0;
    }
  if (e->personality > 2)
    return st_why_set (why, EBADMSG, "exidx entry %u: personality routine %d is not the ABI's",
                       e->index, e->personality);
  append_bytes (e, word, 1);
  return append_words (t, e, addr, (word >> 16) & 0xff, why);
}

int
st_exidx_entry_at (const struct st_exidx_tables *t, uint32_t i, struct st_exidx_entry *e,
                   struct st_why *why)
{
  e->index = i;
  e->n_ops = 0;
  e->cantunwind = false;
  e->personality = 0;
  if (i >= t->exidx_entries)
    return st_why_set (why, EBADMSG, "exidx entry %u of %u", i, t->exidx_entries);
  int r = entry_fn (t, i, &e->fn_start, why);
  if (r < 0)
    return r;
  uint32_t place = t->exidx_vaddr + 8 * i + 4, word;
  if (read_file_word (t, place, &word) < 0)
    return st_why_set (why, EBADMSG, "exidx entry %u at %#x is outside the file", i, place);
  if (word == EXIDX_CANTUNWIND)
    {
      e->cantunwind = true;
      return 0;
    }
  if (!(word & 0x80000000u))
    return decode_extab (t, prel31 (word, place), e, why);
  /* Inline: personality routine 0 and three instruction bytes.  */
  if (word & 0x7f000000u)
    return st_why_set (why, EBADMSG, "exidx entry %u: inline %#x is not personality 0", i, word);
  append_bytes (e, word, 2);
  return 0;
}

int
st_exidx_lookup (const struct st_exidx_tables *t, uint32_t addr, struct st_exidx_entry *out,
                 struct st_why *why)
{
  /* The last entry whose function starts at or before ADDR: the table is
     sorted by the linker.  A table that is not sorted gives a wrong entry,
     never a read outside it.  */
  uint32_t lo = 0, hi = t->exidx_entries;
  while (lo < hi)
    {
      uint32_t mid = lo + (hi - lo) / 2, fn = 0;
      int r = entry_fn (t, mid, &fn, why);
      if (r < 0)
        return r;
      if (fn <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return -ENOENT;
  return st_exidx_entry_at (t, lo - 1, out, why);
}

/* The interpreter's state: the virtual stack pointer and the registers.  */
struct vm {
  struct st_arm_regs *regs;
  uint32_t vsp;
  bool pc_set;
  st_exidx_read_fn read;
  void *arg;
  struct st_why *why;
  uint32_t index;
};

static int
add_vsp (struct vm *vm, uint64_t n)
{
  if (n > UINT32_MAX - vm->vsp)
    return st_why_set (vm->why, EFAULT, "exidx entry %u: vsp %#x + %llu wraps", vm->index, vm->vsp,
                       (unsigned long long) n);
  vm->vsp += (uint32_t) n;
  return 0;
}

/* Pops the core registers of MASK (bit N: rN), lowest first.  */
static int
pop_mask (struct vm *vm, uint32_t mask)
{
  uint32_t vsp = vm->vsp;
  for (int n = 0; n < 16; n++)
    {
      if (!(mask & (1u << n)))
        continue;
      uint32_t value;
      if (vsp > UINT32_MAX - 4 || vm->read (vsp, &value, vm->arg) < 0)
        return st_why_set (vm->why, EFAULT, "exidx entry %u: pop of r%d from %#x", vm->index, n,
                           vsp);
      vm->regs->r[n] = value;
      vm->regs->known |= 1u << n;
      vsp += 4;
    }
  if (mask & (1u << 15))
    vm->pc_set = true;
  /* A popped r13 is the new vsp, not the stack pointer past the pops.  */
  vm->vsp = (mask & (1u << 13)) ? vm->regs->r[13] : vsp;
  return 0;
}

/* One instruction at OPS[*I]; advances *I.  Returns 1 at "finish".  */
static int
exec_one (struct vm *vm, const uint8_t *ops, size_t n_ops, size_t *i)
{
  uint8_t op = ops[(*i)++];
  /* The second byte of a two-byte instruction; 0 past the end, which no
     such instruction takes for valid (the ABI pads with "finish").  */
  uint8_t op2 = *i < n_ops ? ops[*i] : 0;
  if ((op & 0xc0) == 0x00)
    return add_vsp (vm, ((uint32_t) (op & 0x3f) << 2) + 4);
  if ((op & 0xc0) == 0x40)
    {
      uint32_t n = ((uint32_t) (op & 0x3f) << 2) + 4;
      if (n > vm->vsp)
        return st_why_set (vm->why, EFAULT, "exidx entry %u: vsp %#x - %u wraps", vm->index,
                           vm->vsp, n);
      vm->vsp -= n;
      return 0;
    }
  if ((op & 0xf0) == 0x80)
    {
      (*i)++;
      uint32_t mask = ((uint32_t) (op & 0x0f) << 8) | op2;
      if (mask == 0)
        return st_why_set (vm->why, ENODATA, "exidx entry %u: refuse to unwind", vm->index);
      return pop_mask (vm, mask << 4);
    }
  if ((op & 0xf0) == 0x90)
    {
      int n = op & 0x0f;
      if (n == 13 || n == 15)
        return st_why_set (vm->why, EBADMSG, "exidx entry %u: reserved instruction %#x", vm->index,
                           op);
      if (!(vm->regs->known & (1u << n)))
        return st_why_set (vm->why, EINVAL, "exidx entry %u: vsp = r%d, which is not known",
                           vm->index, n);
      vm->vsp = vm->regs->r[n];
      return 0;
    }
  if ((op & 0xf0) == 0xa0)
    {
      /* pop r4-r[4+nnn], and r14 when bit 3 is set.  */
      uint32_t mask = ((1u << ((op & 0x07) + 1)) - 1) << 4;
      return pop_mask (vm, mask | ((op & 0x08) ? 1u << 14 : 0));
    }
  switch (op)
    {
    case 0xb0:
      return 1;
    case 0xb1:
      (*i)++;
      if (op2 == 0 || (op2 & 0xf0))
        return st_why_set (vm->why, EBADMSG, "exidx entry %u: spare instruction b1 %02x",
                           vm->index, op2);
      return pop_mask (vm, op2);
    case 0xb2:
      {
        /* vsp += 0x204 + (uleb128 << 2).  */
        uint64_t v = 0;
        int shift = 0;
        uint8_t b;
        do
          {
            if (*i >= n_ops || shift > 28)
              return st_why_set (vm->why, EBADMSG, "exidx entry %u: bad uleb128", vm->index);
            b = ops[(*i)++];
            v |= (uint64_t) (b & 0x7f) << shift;
            shift += 7;
          }
        while (b & 0x80);
        return add_vsp (vm, 0x204 + (v << 2));
      }
    case 0xb3:   /* VFP D[ssss]-D[ssss+cccc] saved by FSTMFDX */
      (*i)++;
      return add_vsp (vm, (uint32_t) ((op2 & 0x0f) + 1) * 8 + 4);
    case 0xc6:   /* iWMMXt wR[ssss]-wR[ssss+cccc] */
    case 0xc8:   /* VFP D[16+ssss]-D[16+ssss+cccc] saved by VPUSH */
    case 0xc9:   /* VFP D[ssss]-D[ssss+cccc] saved by VPUSH */
      (*i)++;
      return add_vsp (vm, (uint32_t) ((op2 & 0x0f) + 1) * 8);
    case 0xc7:   /* iWMMXt wCGR0-3 under a mask */
      (*i)++;
      if (op2 == 0 || (op2 & 0xf0))
        return st_why_set (vm->why, EBADMSG, "exidx entry %u: spare instruction c7 %02x",
                           vm->index, op2);
      return add_vsp (vm, 4u * (uint32_t) __builtin_popcount (op2));
    default:
      break;
    }
  if ((op & 0xf8) == 0xb8)   /* VFP D[8]-D[8+nnn] saved by FSTMFDX */
    return add_vsp (vm, (uint32_t) ((op & 0x07) + 1) * 8 + 4);
  if ((op & 0xf8) == 0xc0)   /* iWMMXt wR[10]-wR[10+nnn] */
    return add_vsp (vm, (uint32_t) ((op & 0x07) + 1) * 8);
  if ((op & 0xf8) == 0xd0)   /* VFP D[8]-D[8+nnn] saved by VPUSH */
    return add_vsp (vm, (uint32_t) ((op & 0x07) + 1) * 8);
  return st_why_set (vm->why, EBADMSG, "exidx entry %u: spare instruction %#x", vm->index, op);
}

int
st_exidx_execute (const struct st_exidx_entry *entry, struct st_arm_regs *regs,
                  st_exidx_read_fn read, void *arg, struct st_why *why)
{
  if (entry->cantunwind)
    return st_why_set (why, ENODATA, "exidx entry %u: EXIDX_CANTUNWIND", entry->index);
  if (!(regs->known & (1u << 13)))
    return st_why_set (why, EINVAL, "exidx entry %u: the stack pointer is not known",
                       entry->index);
  struct vm vm = {
    .regs = regs, .vsp = regs->r[13], .read = read, .arg = arg, .why = why,
    .index = entry->index,
  };
  size_t i = 0;
  while (i < entry->n_ops)
    {
      int r = exec_one (&vm, entry->ops, entry->n_ops, &i);
      if (r < 0)
        return r;
      if (r == 1)
        break;
    }
  /* Without a popped pc the caller resumes at the link register.  */
  if (!vm.pc_set)
    {
      if (!(regs->known & (1u << 14)))
        return st_why_set (why, EINVAL, "exidx entry %u: the return address (lr) is not known",
                           entry->index);
      regs->r[15] = regs->r[14];
      regs->known |= 1u << 15;
    }
  regs->r[15] &= ~1u;
  regs->r[13] = vm.vsp;
  regs->known |= 1u << 13;
  return vm.pc_set ? 1 : 0;
}
