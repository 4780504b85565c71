/* 32-bit ARM unwind tables: .ARM.exidx and .ARM.extab (ARM IHI 0038,
 * "Exception Handling ABI for the ARM Architecture").
 *
 * Debian's armhf libraries carry no .eh_frame and no .debug_frame: only
 * these tables, which libdw 0.188 does not read, so without them a sample
 * in libc ends there.  This is the table reader and the interpreter of its
 * unwind instructions; arm-exidx-step.h runs them on a libdwfl frame.
 *
 * The tables come from a file of the profiled machine: every offset, every
 * prel31 target and every word count is checked against the file's bytes
 * before it is read.  */
#pragma once

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/why.h"

/* A table's unwind instructions are at most 2 + 255 * 4 bytes (the long
   compact forms and the GNU personality data: a byte of extra words).  */
#define ST_EXIDX_MAX_OPS 1024

/* The unwind tables of one ARM ELF file, as views into its bytes.  */
struct st_exidx_tables {
  const uint8_t *image;       /* the whole file */
  size_t image_size;
  bool big_endian;
  uint32_t exidx_vaddr;       /* the index table: 8-byte entries */
  uint32_t exidx_entries;
  size_t n_loads;
  struct {
    uint32_t vaddr, filesz;
    uint64_t offset;
  } loads[16];                /* PT_LOAD: where file addresses lie in IMAGE */
};

/* Finds ELF's index table (PT_ARM_EXIDX) and its loadable segments.
   Returns 0, -ENOENT when ELF is not a 32-bit ARM file with such a table,
   or -EBADMSG (WHY says why) when its headers lie outside the file.  */
int st_exidx_tables_from_elf (Elf *elf, struct st_exidx_tables *out, struct st_why *why);

/* The unwind instructions of the function around one address.  */
struct st_exidx_entry {
  uint32_t fn_start;          /* file address of the function (bit 0 clear) */
  uint32_t index;             /* its entry in the index table */
  bool cantunwind;            /* EXIDX_CANTUNWIND: no instructions */
  int personality;            /* 0, 1, 2 (__aeabi_unwind_cpp_prN), -1 a GNU routine */
  size_t n_ops;
  uint8_t ops[ST_EXIDX_MAX_OPS];
};

/* Finds the entry for ADDR, a file address, and decodes its instructions.
   Returns 0, -ENOENT when ADDR lies before the first entry (or the table
   is empty), or -EBADMSG for an entry that is not one.  */
int st_exidx_lookup (const struct st_exidx_tables *t, uint32_t addr,
                     struct st_exidx_entry *out, struct st_why *why);

/* Entry I of the table (0 <= I < exidx_entries), decoded as above.  */
int st_exidx_entry_at (const struct st_exidx_tables *t, uint32_t i,
                       struct st_exidx_entry *out, struct st_why *why);

/* The core registers of one frame, r0..r15; KNOWN has bit N set when rN
   holds a value.  */
struct st_arm_regs {
  uint32_t r[16];
  uint16_t known;
};

/* Reads the 32-bit word at ADDR of the process's memory (its stack copy):
   0, or -EFAULT when the copy does not hold it.  */
typedef int (*st_exidx_read_fn) (uint32_t addr, uint32_t *value, void *arg);

/* Runs ENTRY's instructions on REGS, the registers of the frame at the
   function's pc, and leaves there the caller's: r13 its stack pointer,
   r15 its pc (bit 0, the Thumb bit, clear; 0 at the outermost frame).
   Returns 0, or 1 when the instructions popped r15 itself: only a signal
   frame's do (glibc's restorer describes the saved context so), and then
   the caller's pc is the exact pc it was interrupted at, not a return
   address.  -ENODATA when the entry says the frame cannot be unwound
   (EXIDX_CANTUNWIND, "refuse to unwind"); -EFAULT when a read failed;
   -EINVAL when a register it needs is not known; -EBADMSG for an
   instruction the ABI reserves.  WHY says which.  */
int st_exidx_execute (const struct st_exidx_entry *entry, struct st_arm_regs *regs,
                      st_exidx_read_fn read, void *arg, struct st_why *why);
