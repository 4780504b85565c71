#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/unwind/regs.h"

struct st_regs_arch {
  const char *name;
  const char *const *aliases;
  /* For each DWARF register, the perf register that holds it.  */
  const int8_t *perf_of_dwarf;
  size_t n_dwarf;
  int perf_pc, perf_sp;
  uint64_t sample_mask;
  const struct st_regs_arch *compat32;  /* ABI_32 tasks */
  bool is_aarch64;
};

/* x86: perf numbers AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS
   R8..R15 = 0..23; DWARF i386 is eax ecx edx ebx esp ebp esi edi eip.  */
static const int8_t i386_perf_of_dwarf[] = { 0, 2, 3, 1, 7, 6, 4, 5, 8 };
static const char *const i386_aliases[] = { "i386", "i486", "i586", "i686", NULL };
static const struct st_regs_arch arch_i386 = {
  .name = "i386",
  .aliases = i386_aliases,
  .perf_of_dwarf = i386_perf_of_dwarf,
  .n_dwarf = 9,
  .perf_pc = 8,
  .perf_sp = 7,
  .sample_mask = 0x1ff,
};

/* DWARF x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.  */
static const int8_t x86_64_perf_of_dwarf[] = {
  0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};
static const char *const x86_64_aliases[] = { "x86_64", "amd64", NULL };
static const struct st_regs_arch arch_x86_64 = {
  .name = "x86_64",
  .aliases = x86_64_aliases,
  .perf_of_dwarf = x86_64_perf_of_dwarf,
  .n_dwarf = 17,
  .perf_pc = 8,
  .perf_sp = 7,
  .sample_mask = 0xff01ff,   /* AX..IP, R8..R15: what Sysprof uses too */
  .compat32 = &arch_i386,
};

/* aarch64: perf and DWARF agree for x0..x30 and sp (31); pc is perf 32.  */
static const int8_t aarch64_perf_of_dwarf[] = {
  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};
static const char *const aarch64_aliases[] = { "aarch64", "arm64", NULL };
static const struct st_regs_arch arch_aarch64 = {
  .name = "aarch64",
  .aliases = aarch64_aliases,
  .perf_of_dwarf = aarch64_perf_of_dwarf,
  .n_dwarf = 32,
  .perf_pc = 32,
  .perf_sp = 31,
  .sample_mask = 0x1ffffffffULL,
  .is_aarch64 = true,
};

static const struct st_regs_arch *const all_arches[] = {
  &arch_x86_64, &arch_aarch64, &arch_i386,
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
  for (size_t i = 0; i < sizeof all_arches / sizeof all_arches[0]; i++)
    for (const char *const *a = all_arches[i]->aliases; *a; a++)
      if (strcmp (*a, machine) == 0)
        return all_arches[i];
  return NULL;
}

const char *
st_regs_arch_name (const struct st_regs_arch *arch)
{
  return arch->name;
}

uint64_t
st_regs_sample_mask (const struct st_regs_arch *arch)
{
  return arch->sample_mask;
}

/* The value of perf register NUM in SAMPLE, if the mask carries it.  */
static bool
perf_reg (const struct st_sample *s, int num, uint64_t *value)
{
  if (num < 0 || num >= 64 || !(s->regs_mask & (1ULL << num)))
    return false;
  size_t idx = __builtin_popcountll (s->regs_mask & ((1ULL << num) - 1));
  if (idx >= s->n_regs)
    return false;
  memcpy (value, &s->regs[idx], sizeof *value);
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
  out->n = arch->n_dwarf;
  out->is_aarch64 = arch->is_aarch64;
  for (size_t i = 0; i < arch->n_dwarf; i++)
    {
      uint64_t v;
      if (perf_reg (s, arch->perf_of_dwarf[i], &v))
        {
          out->value[i] = v & width_mask;
          out->present[i] = true;
        }
    }
  uint64_t pc, sp;
  if (!perf_reg (s, arch->perf_pc, &pc) || !perf_reg (s, arch->perf_sp, &sp))
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
