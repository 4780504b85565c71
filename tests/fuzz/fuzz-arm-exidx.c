/* Fuzz target: 32-bit ARM unwind tables, .ARM.exidx and .ARM.extab
 * (src/core/unwind/arm-exidx.c), read from every armhf file a profiled
 * process maps where libdw finds no CFI: files of the recording machine.
 *
 * The input is a whole ELF file (libelf's elf_memory).  For every index
 * entry (at most 4096) the target decodes it, looks up its function's
 * first and last byte and runs its instructions on a frame whose stack is
 * 4 KiB of words made from their own addresses.  Checks: the table's
 * entries are found where they start, the instruction count stays within
 * ST_EXIDX_MAX_OPS, a step that succeeds leaves a known sp and an even pc,
 * and every failure is one of the documented errnos.
 *
 * Corpus: tests/fuzz/corpus/arm-exidx/: two stripped shared libraries built
 * from a small C file by Debian's arm-linux-gnueabihf-gcc -O2 -fPIC -shared
 * -nostdlib -funwind-tables (one Thumb-2 with -fexceptions, whose cleanup
 * brings GCC's personality routine, one -marm): functions with alloca
 * (vsp = r7, vsp = r11), a VFP save (vpush d8), varargs (pop r0-r3), a
 * 4000-byte frame (uleb128 vsp adjust) and the compact forms.  */
#include "config.h"

#include <errno.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/unwind/arm-exidx.h"
#include "fuzz.h"

#define STACK_BASE 0x10000u
#define STACK_SIZE 4096u

static int
read_word (uint32_t addr, uint32_t *value, void *arg)
{
  (void) arg;
  if (addr < STACK_BASE || addr - STACK_BASE > STACK_SIZE - 4)
    return -EFAULT;
  *value = addr * 2654435761u;
  return 0;
}

static void
check_result (int r, const struct st_arm_regs *regs, const struct st_why *why)
{
  if (r >= 0)
    {
      if (r > 1 || !(regs->known & (1u << 13)) || !(regs->known & (1u << 15))
          || (regs->r[15] & 1))
        {
          fprintf (stderr, "bad step: %d, known %#x, pc %#x\n", r, regs->known, regs->r[15]);
          abort ();
        }
      return;
    }
  if (r != -ENODATA && r != -EFAULT && r != -EINVAL && r != -EBADMSG)
    {
      fprintf (stderr, "undocumented error %d: %s\n", r, why->text);
      abort ();
    }
  if (fuzz_verbose >= 2)
    fprintf (stderr, "step refused: %s\n", why->text);
}

static void
step (const struct st_exidx_entry *e)
{
  struct st_arm_regs regs = { .known = 0xffff };
  for (int n = 0; n < 16; n++)
    regs.r[n] = STACK_BASE + 64 * (uint32_t) n;
  struct st_why why = { 0 };
  int r = st_exidx_execute (e, &regs, read_word, NULL, &why);
  check_result (r, &regs, &why);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  elf_version (EV_CURRENT);
  char *copy = malloc (size ? size : 1);
  if (copy == NULL)
    abort ();
  memcpy (copy, data, size);
  Elf *elf = elf_memory (copy, size);
  struct st_exidx_tables t;
  struct st_why why = { 0 };
  int r = elf != NULL ? st_exidx_tables_from_elf (elf, &t, &why) : -ENOENT;
  if (r < 0 && fuzz_verbose)
    fprintf (stderr, "no tables: %s\n", why.text);
  static struct st_exidx_entry e, found;
  for (uint32_t i = 0; r == 0 && i < t.exidx_entries && i < 4096; i++)
    {
      if (st_exidx_entry_at (&t, i, &e, &why) < 0)
        {
          if (fuzz_verbose)
            fprintf (stderr, "entry %u: %s\n", i, why.text);
          continue;
        }
      if (e.n_ops > ST_EXIDX_MAX_OPS || e.index != i)
        abort ();
      step (&e);
      /* The binary search reads other entries: it may fail on them, but
         what it finds must start at or before the address.  */
      uint32_t addrs[2] = { e.fn_start, e.fn_start - 1 };
      for (int k = 0; k < 2; k++)
        {
          int l = st_exidx_lookup (&t, addrs[k], &found, &why);
          if (l == 0 && (found.fn_start > addrs[k] || found.index >= t.exidx_entries))
            abort ();
          if (l < 0 && l != -ENOENT && l != -EBADMSG)
            abort ();
        }
    }
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  return 0;
}
