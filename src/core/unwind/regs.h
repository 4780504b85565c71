/* User registers: from perf's numbering to the DWARF numbering libdwfl
 * expects, per architecture.  libebl is not installed by elfutils, so the
 * tables are our own (see REFERENCE.md, "Register order").  */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

/* ppc64's link register is DWARF 65 and its count register 109.  */
#define ST_MAX_DWARF_REGS 110

struct st_regs_arch;

/* The architecture a recording came from: "x86_64", "aarch64", "i686", ...
   (uname -m, as perf's HEADER_ARCH has it), or NULL for the machine this
   runs on.  NULL if unsupported.  */
const struct st_regs_arch *st_regs_arch_lookup (const char *uname_machine);
/* The architecture of an ELF file's e_machine, class (ELFCLASS32/64) and
   data encoding (ELFDATA2LSB/MSB: ppc64 or ppc64le), NULL if unsupported:
   what the mapped files say when the recording does not.  */
const struct st_regs_arch *st_regs_arch_of_elf (unsigned e_machine, unsigned elf_class,
                                                unsigned elf_data);
/* Why MACHINE cannot be unwound by this build, or NULL if it can: for an
   architecture perf records but libdw 0.188 has no unwinder for.  */
const char *st_regs_arch_unsupported_reason (const char *uname_machine);
const char *st_regs_arch_name (const struct st_regs_arch *arch);
/* The architecture a task of the ABI_32 register set is unwound with
   (i386 on x86_64, arm on aarch64); ARCH itself when it has none.  */
const struct st_regs_arch *st_regs_arch_compat (const struct st_regs_arch *arch);
/* The ELF e_machine of ARCH (EM_X86_64, ...).  */
unsigned st_regs_arch_machine (const struct st_regs_arch *arch);

/* Registers of one sample in DWARF order.  */
struct st_dwarf_regs {
  uint64_t value[ST_MAX_DWARF_REGS];   /* Dwarf_Word */
  bool present[ST_MAX_DWARF_REGS];
  size_t n;              /* DWARF registers of this architecture */
  uint64_t pc, sp;
  bool is_aarch64;       /* v8-v15 must be zeroed, see set_initial_registers */
  bool big_endian;       /* the stack copy's words are big-endian (s390x) */
  int ra_reg;            /* DWARF number of the link register, -1: none (x86) */
  bool is_i386;          /* 32-bit x86: get_pc_thunk has no CFI */
  bool is_x86_64;        /* the unwind-rule cache steps it */
  bool is_arm;           /* 32-bit ARM: .ARM.exidx where there is no CFI */
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
