/* User registers: from perf's numbering to the DWARF numbering libdwfl
 * expects, per architecture.  libebl is not installed by elfutils, so the
 * tables are our own (see REFERENCE.md, "Register order").  */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

#define ST_MAX_DWARF_REGS 33

struct st_regs_arch;

/* The architecture a recording came from: "x86_64", "aarch64", "i686", ...
   (uname -m), or NULL for the machine this runs on.  NULL if unsupported.  */
const struct st_regs_arch *st_regs_arch_lookup (const char *uname_machine);
const char *st_regs_arch_name (const struct st_regs_arch *arch);

/* Registers of one sample in DWARF order.  */
struct st_dwarf_regs {
  uint64_t value[ST_MAX_DWARF_REGS];   /* Dwarf_Word */
  bool present[ST_MAX_DWARF_REGS];
  size_t n;              /* DWARF registers of this architecture */
  uint64_t pc, sp;
  bool is_aarch64;       /* v8-v15 must be zeroed, see set_initial_registers */
};

/* Converts the perf registers of SAMPLE, taking its ABI into account (a
   32-bit task sampled by a 64-bit kernel uses the 32-bit table).  Returns
   0, or -EINVAL when the pc or stack pointer is missing.  */
int st_regs_to_dwarf (const struct st_regs_arch *arch, const struct st_sample *sample,
                      struct st_dwarf_regs *out);

/* Hands OUT's registers to libdwfl for the thread being unwound.  */
struct Dwfl_Thread;
bool st_regs_set_initial (struct Dwfl_Thread *thread, const struct st_dwarf_regs *regs);

/* The perf register mask and count that unwinding needs (for live
   sampling and for writing Sysprof stack-user frames).  */
uint64_t st_regs_sample_mask (const struct st_regs_arch *arch);
