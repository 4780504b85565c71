#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <string.h>
#include <gelf.h>
#include <sys/utsname.h>

#include "core/unwind/regs.h"

struct reg_pair {
  uint8_t dwarf;
  int8_t perf;
};

/* One row of the architecture table below.  A new field goes at the end,
   so that the rows that do not need it stay as they are (zero).  */
struct st_regs_arch {
  const char *name;
  unsigned e_machine, elf_class;
  int perf_pc, perf_sp;
  int ra_reg;               /* DWARF link register; 0: none (x86) */
  uint64_t sample_mask;
  /* For each DWARF register below n_dwarf, the perf register that holds
     it, or -1 where none does.  */
  const int8_t *perf_of_dwarf;
  size_t n_dwarf;
  /* DWARF registers numbered beyond n_dwarf (ppc64's lr, xer, ctr).  */
  const struct reg_pair *extra;
  size_t n_extra;
  const char *const *aliases;
  const struct st_regs_arch *compat32;  /* ABI_32 tasks */
  bool is_aarch64;
  bool big_endian;
};

/* The layouts below are the kernel's uapi asm/perf_regs.h of each
   architecture (perf numbers) and the DWARF numbering of the psABI, which
   is what elfutils' backends (backends/<arch>_initreg.c) use; perf's own
   tools/perf/arch/<arch>/util/unwind-libdw.c pairs them the same way.  */

/* x86: perf numbers AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS
   R8..R15 = 0..23; DWARF i386 is eax ecx edx ebx esp ebp esi edi eip.  A
   32-bit task on a 64-bit kernel reports the same numbers under ABI_32.
   DWARF x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.  */
static const int8_t i386_perf_of_dwarf[] = { 0, 2, 3, 1, 7, 6, 4, 5, 8 };
static const int8_t x86_64_perf_of_dwarf[] = {
  0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

/* arm: perf R0..R10 FP IP SP LR PC = 0..15 are DWARF r0..r15.  An arm64
   kernel reports a compat task's r0..r15 under the same numbers (its
   perf_reg_value maps 13, 14 and 15 to compat_sp, compat_lr and pc).
   aarch64: perf and DWARF agree for x0..x30 and sp (31); pc is perf 32.
   powerpc: perf R0..R31 = 0..31, NIP 32, MSR 33, ORIG_R3 34, CTR 35,
   LINK 36, XER 37, CCR 38.  DWARF (GCC's .eh_frame numbering, which
   elfutils' ppc backend uses): r0..r31 = 0..31, lr 65, xer 101, ctr 109.
   These three take perf register I for DWARF register I, the first 16 or
   32 of this table.  */
static const int8_t same_perf_of_dwarf[] = {
  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
static const struct reg_pair ppc64_extra[] = { { 65, 36 }, { 101, 37 }, { 109, 35 } };
/* r0..r31, nip, ctr, link, xer */
#define PPC64_MASK (0xffffffffULL | (1ULL << 32) | (1ULL << 35) | (1ULL << 36) | (1ULL << 37))

/* s390x: perf R0..R15 = 0..15, FP0..FP15 = 16..31, MASK 32, PC 33.  DWARF
   r0..r15 = 0..15, then f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13
   f15 = 16..31; elfutils unwinds with these 32.  */
static const int8_t s390x_perf_of_dwarf[] = {
  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
  16 + 0, 16 + 2, 16 + 4, 16 + 6, 16 + 1, 16 + 3, 16 + 5, 16 + 7,
  16 + 8, 16 + 10, 16 + 12, 16 + 14, 16 + 9, 16 + 11, 16 + 13, 16 + 15,
};

/* riscv64: perf PC RA SP GP TP T0..T2 S0 S1 A0..A7 S2..S11 T3..T6 = 0..31
   is x1..x31 in order, with the pc where x0 (always zero) would be; DWARF
   x0..x31 = 0..31.  */
static const int8_t riscv64_perf_of_dwarf[] = {
  -1, 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

/* The names uname -m and perf's HEADER_ARCH give each architecture.  */
static const char *const i386_aliases[] = { "i386", "i486", "i586", "i686", "x86", NULL };
static const char *const x86_64_aliases[] = { "x86_64", "amd64", NULL };
static const char *const arm_aliases[] = { "arm", "armv7l", "armv7", "armv6l", "armv8l",
                                           "armhf", "armel", NULL };
static const char *const aarch64_aliases[] = { "aarch64", "arm64", NULL };
static const char *const ppc64le_aliases[] = { "ppc64le", "powerpc64le", NULL };
static const char *const ppc64_aliases[] = { "ppc64", "powerpc64", NULL };
static const char *const s390x_aliases[] = { "s390x", "s390", NULL };
static const char *const riscv64_aliases[] = { "riscv64", "riscv", NULL };

/* The first DWARF registers of MAP, and no extra ones.  */
#define REGS(map, n) map, n, NULL, 0
#define ALL_REGS(map) REGS (map, sizeof map / sizeof map[0])

/* Looked up in this order: ppc64le before ppc64, which share e_machine.  */
enum { X86_64, AARCH64, I386, ARM, PPC64LE, PPC64, S390X, RISCV64, N_ARCHES };
static const struct st_regs_arch arches[N_ARCHES] = {
  /*          name       e_machine   class       pc  sp  ra  sample mask    DWARF registers */
  [X86_64] = { "x86_64", EM_X86_64, ELFCLASS64, 8, 7, 0, 0xff01ff, ALL_REGS (x86_64_perf_of_dwarf),
               x86_64_aliases, &arches[I386] },  /* mask AX..IP, R8..R15: Sysprof's too */
  [AARCH64] = { "aarch64", EM_AARCH64, ELFCLASS64, 32, 31, 30, 0x1ffffffffULL,
                REGS (same_perf_of_dwarf, 32), aarch64_aliases, &arches[ARM], .is_aarch64 = true },
  [I386] = { "i386", EM_386, ELFCLASS32, 8, 7, 0, 0x1ff, ALL_REGS (i386_perf_of_dwarf),
             i386_aliases },
  [ARM] = { "arm", EM_ARM, ELFCLASS32, 15, 13, 14, 0xffff, REGS (same_perf_of_dwarf, 16),
            arm_aliases },
  [PPC64LE] = { "ppc64le", EM_PPC64, ELFCLASS64, 32, 1, 65, PPC64_MASK, same_perf_of_dwarf, 32,
                ppc64_extra, 3, ppc64le_aliases },
  [PPC64] = { "ppc64", EM_PPC64, ELFCLASS64, 32, 1, 65, PPC64_MASK, same_perf_of_dwarf, 32,
              ppc64_extra, 3, ppc64_aliases, .big_endian = true },
  [S390X] = { "s390x", EM_S390, ELFCLASS64, 33, 15, 14, 0x3ffffffffULL,
              ALL_REGS (s390x_perf_of_dwarf), s390x_aliases, .big_endian = true },
  [RISCV64] = { "riscv64", EM_RISCV, ELFCLASS64, 0, 2, 1, 0xffffffffULL,
                ALL_REGS (riscv64_perf_of_dwarf), riscv64_aliases },
};

/* What perf records on but libdw 0.188 cannot unwind: its backends for
   these have no initial-register or frame support (frame_nregs is 0).  */
static const struct {
  const char *prefix, *reason;
} unsupported[] = {
  { "mips", "libdw 0.188 has no MIPS unwinder (it came in elfutils 0.190)" },
  { "loongarch", "libdw 0.188 has no LoongArch unwinder" },
  { "sparc", "SPARC register windows are not in perf's user registers" },
  { "csky", "C-SKY is not supported by this build" },
  { "ppc", "32-bit powerpc is not supported by this build" },
  { "powerpc", "32-bit powerpc is not supported by this build" },
  { "riscv32", "32-bit RISC-V is not supported by this build" },
};

const struct st_regs_arch *
st_regs_arch_lookup (const char *machine)
{
  struct utsname u;
  if (machine == NULL)
    {
      if (uname (&u) != 0)
        return NULL;
      machine = u.machine;
    }
  for (size_t i = 0; i < N_ARCHES; i++)
    for (const char *const *a = arches[i].aliases; *a; a++)
      if (strcmp (*a, machine) == 0)
        return &arches[i];
  return NULL;
}

const char *
st_regs_arch_unsupported_reason (const char *machine)
{
  if (machine == NULL || st_regs_arch_lookup (machine) != NULL)
    return NULL;
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
    if (strncmp (machine, unsupported[i].prefix, strlen (unsupported[i].prefix)) == 0)
      return unsupported[i].reason;
  return "no register table for it";
}

const struct st_regs_arch *
st_regs_arch_of_elf (unsigned e_machine, unsigned elf_class, unsigned elf_data)
{
  for (size_t i = 0; i < N_ARCHES; i++)
    if (arches[i].e_machine == e_machine && arches[i].elf_class == elf_class
        && arches[i].big_endian == (elf_data == ELFDATA2MSB))
      return &arches[i];
  return NULL;
}

const char *
st_regs_arch_name (const struct st_regs_arch *arch)
{
  return arch->name;
}

const struct st_regs_arch *
st_regs_arch_compat (const struct st_regs_arch *arch)
{
  return arch->compat32 ? arch->compat32 : arch;
}

unsigned
st_regs_arch_machine (const struct st_regs_arch *arch)
{
  return arch->e_machine;
}

uint64_t
st_regs_sample_mask (const struct st_regs_arch *arch)
{
  return arch->sample_mask;
}

/* A sample's perf registers by their number: the values come in the
   order of the mask's bits, so one walk over the mask places them all
   (a popcount per register looked up cost more than the rest of the
   conversion).  */
struct perf_regs {
  uint64_t have;            /* bit i: value[i] was sampled */
  uint64_t value[64];
};

static void
perf_regs_of (const struct st_sample *s, struct perf_regs *r)
{
  r->have = 0;
  size_t idx = 0;
  for (uint64_t m = s->regs_mask; m != 0 && idx < s->n_regs; m &= m - 1, idx++)
    {
      int num = __builtin_ctzll (m);
      memcpy (&r->value[num], &s->regs[idx], sizeof r->value[num]);
      r->have |= 1ULL << num;
    }
}

/* The value of perf register NUM, if the sample carries it.  */
static bool
perf_reg (const struct perf_regs *r, int num, uint64_t *value)
{
  if (num < 0 || num >= 64 || !(r->have & (1ULL << num)))
    return false;
  *value = r->value[num];
  return true;
}

int
st_regs_to_dwarf (const struct st_regs_arch *arch, const struct st_sample *s,
                  struct st_dwarf_regs *out)
{
  if (s->abi == ST_REGS_ABI_32 && arch->compat32 != NULL)
    arch = arch->compat32;
  uint64_t width_mask = s->abi == ST_REGS_ABI_32 ? 0xffffffffULL : UINT64_MAX;
  memset (out, 0, sizeof *out);
  struct perf_regs perf;
  perf_regs_of (s, &perf);
  out->n = arch->n_dwarf;
  out->is_aarch64 = arch->is_aarch64;
  out->big_endian = arch->big_endian;
  out->ra_reg = arch->ra_reg > 0 ? arch->ra_reg : -1;
  out->is_i386 = arch == &arches[I386];
  out->is_x86_64 = arch == &arches[X86_64];
  out->is_arm = arch == &arches[ARM];
  for (size_t i = 0; i < arch->n_dwarf; i++)
    {
      uint64_t v;
      if (arch->perf_of_dwarf[i] >= 0 && perf_reg (&perf, arch->perf_of_dwarf[i], &v))
        {
          out->value[i] = v & width_mask;
          out->present[i] = true;
        }
    }
  for (size_t i = 0; i < arch->n_extra; i++)
    {
      uint64_t v;
      const struct reg_pair *e = &arch->extra[i];
      if (e->dwarf < ST_MAX_DWARF_REGS && perf_reg (&perf, e->perf, &v))
        {
          out->value[e->dwarf] = v & width_mask;
          out->present[e->dwarf] = true;
          if (e->dwarf >= out->n)
            out->n = e->dwarf + 1;
        }
    }
  uint64_t pc, sp;
  if (!perf_reg (&perf, arch->perf_pc, &pc) || !perf_reg (&perf, arch->perf_sp, &sp))
    return -EINVAL;
  out->pc = pc & width_mask;
  out->sp = sp & width_mask;
  return 0;
}

bool
st_regs_set_initial (Dwfl_Thread *thread, const struct st_dwarf_regs *regs)
{
  for (size_t i = 0; i < regs->n; i++)
    if (regs->present[i] && !dwfl_thread_state_registers (thread, i, 1, &regs->value[i]))
      return false;
  if (regs->is_aarch64)
    {
      /* v8-v15 are "same value" in the ABI's initial CFI: without a value
         libdwfl refuses to unwind past the first frame.  */
      static const Dwarf_Word zeros[8];
      if (!dwfl_thread_state_registers (thread, 72, 8, zeros))
        return false;
    }
  /* Otherwise libdwfl takes the pc from the return-address column.  */
  dwfl_thread_state_register_pc (thread, regs->pc);
  return true;
}
