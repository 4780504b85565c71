/* Saved registers an x86 epilogue has already popped: the CFI at a pc
 * after the pops (LLVM's, at a tail call's `jmp' or at `ret') still says
 * the caller's registers are saved in the frame's slots, which now lie
 * below the stack pointer, where a sample's stack copy does not reach.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/unwind/regs.h"

#define ST_POPPED_MAX 16

/* The code at a pc, from its module's main ELF file.  */
struct st_code {
  const char *section;     /* the section's name (".text", ".plt", ...) */
  const uint8_t *bytes;    /* the bytes from the pc to the section's end */
  size_t avail;            /* how many */
  uint64_t offset;         /* the pc's offset in the section */
};

/* Fills OUT for PC; false when no module, section or bytes hold it.
   dwfl_module_address_section would do, but it loads the module's own
   symbol table and DWARF first (a libc debug file's): this costs a walk
   over the section headers only.  */
bool st_code_at (Dwfl *dwfl, uint64_t pc, struct st_code *out);
/* True when PC lies in a PLT section of its module (.plt, .plt.sec, .iplt,
   .plt.got), where dwfl-unwind.c steps a sample by its own rules; *PLT0
   when it is in the first 16 bytes of .plt, the lazy resolver's entry.  */
bool st_code_in_plt (Dwfl *dwfl, uint64_t pc, bool *plt0);

/* The CFI row libdwfl steps the frame at PC by (PC as looked up: a
   return address less one): .eh_frame's, else .debug_frame's; NULL when
   neither has one.  The caller frees it.  */
Dwarf_Frame *st_cfi_row_at (Dwfl *dwfl, uint64_t pc);

/* The slots below the sampled stack pointer and the values they held.  */
struct st_popped {
  uint64_t addr[ST_POPPED_MAX];
  uint64_t value[ST_POPPED_MAX];
  unsigned n;
};

/* Fills OUT for the sampled frame of REGS (x86_64 or i386): each slot
   below the stack pointer where the CFI at the pc says a register is
   saved, and which the instructions just before the pc popped into that
   same register, in the slots' order, so that the register now holds
   what the slot held.  A slot nothing proves popped is left out (it stays
   unreadable).  */
void st_popped_slots (Dwfl *dwfl, const struct st_dwarf_regs *regs, struct st_popped *out);
