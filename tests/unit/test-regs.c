#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <elf.h>

#include "core/unwind/regs.h"

/* perf's x86 register numbers.  */
enum { AX, BX, CX, DX, SI, DI, BP, SP, IP, FLAGS, CS, SS, DS, ES, FS, GS, R8 };

static void
fill_masked (uint64_t mask, uint64_t *regs, size_t *n)
{
  /* Value of perf register k is 0x1000 + k, stored in mask order.  */
  *n = 0;
  for (int k = 0; k < 64; k++)
    if (mask & (1ULL << k))
      regs[(*n)++] = 0x1000 + k;
}

static void
test_x86_64_perf_record_mask_maps_to_dwarf_order (void **state)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup ("x86_64");
  assert_non_null (arch);
  uint64_t regs[64];
  struct st_sample s = { .abi = ST_REGS_ABI_64, .regs_mask = 0xff0fff, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  assert_int_equal (s.n_regs, 20);
  struct st_dwarf_regs d;
  assert_int_equal (st_regs_to_dwarf (arch, &s, &d), 0);
  assert_int_equal (d.n, 17);
  /* DWARF: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.  */
  static const int perf_of_dwarf[] = { AX, DX, CX, BX, SI, DI, BP, SP,
                                       R8, R8 + 1, R8 + 2, R8 + 3, R8 + 4, R8 + 5, R8 + 6,
                                       R8 + 7, IP };
  for (int i = 0; i < 17; i++)
    {
      assert_true (d.present[i]);
      assert_int_equal (d.value[i], 0x1000 + perf_of_dwarf[i]);
    }
  assert_int_equal (d.pc, 0x1000 + IP);
  assert_int_equal (d.sp, 0x1000 + SP);
}

static void
test_sysprof_mask_without_segment_registers (void **state)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup ("x86_64");
  uint64_t regs[64];
  struct st_sample s = { .abi = ST_REGS_ABI_64, .regs_mask = 0xff01ff, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  assert_int_equal (s.n_regs, 17);
  struct st_dwarf_regs d;
  assert_int_equal (st_regs_to_dwarf (arch, &s, &d), 0);
  assert_int_equal (d.value[8], 0x1000 + R8);   /* r8 after the gap */
  assert_int_equal (d.value[16], 0x1000 + IP);
  assert_int_equal (st_regs_sample_mask (arch), 0xff01ff);
}

static void
test_32bit_task_uses_i386_order_and_truncates (void **state)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup ("x86_64");
  uint64_t regs[64];
  struct st_sample s = { .abi = ST_REGS_ABI_32, .regs_mask = 0xff0fff, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  regs[IP] = 0xffffffff00401000ULL;
  struct st_dwarf_regs d;
  assert_int_equal (st_regs_to_dwarf (arch, &s, &d), 0);
  assert_int_equal (d.n, 9);
  /* DWARF i386: eax ecx edx ebx esp ebp esi edi eip.  */
  assert_int_equal (d.value[1], 0x1000 + CX);
  assert_int_equal (d.value[4], 0x1000 + SP);
  assert_int_equal (d.value[8], 0x401000);
  assert_int_equal (d.pc, 0x401000);
}

static void
test_missing_pc_is_an_error (void **state)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup ("x86_64");
  uint64_t regs[64];
  struct st_sample s = { .abi = ST_REGS_ABI_64, .regs_mask = 0xff, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  struct st_dwarf_regs d;
  assert_int_equal (st_regs_to_dwarf (arch, &s, &d), -EINVAL);
}

static void
test_aarch64_table (void **state)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup ("aarch64");
  assert_non_null (arch);
  uint64_t regs[64];
  struct st_sample s = { .abi = ST_REGS_ABI_64, .regs_mask = 0x1ffffffffULL, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  struct st_dwarf_regs d;
  assert_int_equal (st_regs_to_dwarf (arch, &s, &d), 0);
  assert_int_equal (d.value[30], 0x1000 + 30);  /* lr */
  assert_int_equal (d.sp, 0x1000 + 31);
  assert_int_equal (d.pc, 0x1000 + 32);
  assert_true (d.is_aarch64);
  assert_null (st_regs_arch_lookup ("pdp11"));
}

/* Each table against the kernel's uapi asm/perf_regs.h of the architecture
   (enum perf_event_<arch>_regs) and the psABI's DWARF numbering.  */
static void
convert_full (const char *machine, uint64_t mask, enum st_regs_abi abi, struct st_dwarf_regs *d)
{
  static uint64_t regs[64];
  const struct st_regs_arch *arch = st_regs_arch_lookup (machine);
  assert_non_null (arch);
  struct st_sample s = { .abi = abi, .regs_mask = mask, .regs = regs };
  fill_masked (s.regs_mask, regs, &s.n_regs);
  assert_int_equal (st_regs_to_dwarf (arch, &s, d), 0);
}

static void
test_arm_table (void **state)
{
  /* PERF_REG_ARM_R0..R10, FP, IP, SP, LR, PC = 0..15; DWARF r0..r15.  */
  struct st_dwarf_regs d;
  convert_full ("armv7l", 0xffff, ST_REGS_ABI_32, &d);
  assert_int_equal (d.n, 16);
  for (int i = 0; i < 16; i++)
    assert_int_equal (d.value[i], 0x1000 + i);
  assert_int_equal (d.sp, 0x1000 + 13);
  assert_int_equal (d.pc, 0x1000 + 15);
  assert_false (d.is_aarch64);
  assert_false (d.big_endian);
}

static void
test_arm_compat_task_on_arm64_uses_arm_table (void **state)
{
  /* An arm64 kernel samples a compat task under ABI_32 with the arm64
     mask; its perf_reg_value gives r0..r15 at 0..15.  */
  struct st_dwarf_regs d;
  convert_full ("aarch64", 0x1ffffffffULL, ST_REGS_ABI_32, &d);
  assert_int_equal (d.n, 16);
  assert_int_equal (d.value[14], 0x1000 + 14);  /* lr */
  assert_int_equal (d.sp, 0x1000 + 13);
  assert_int_equal (d.pc, 0x1000 + 15);
  assert_false (d.is_aarch64);
  assert_string_equal (st_regs_arch_name (st_regs_arch_compat (st_regs_arch_lookup ("arm64"))),
                       "arm");
}

static void
test_ppc64le_table (void **state)
{
  /* PERF_REG_POWERPC_R0..R31 = 0..31, NIP 32, CTR 35, LINK 36, XER 37;
     DWARF r0..r31, lr 65, xer 101, ctr 109; r1 is the stack pointer.  */
  struct st_dwarf_regs d;
  const struct st_regs_arch *arch = st_regs_arch_lookup ("ppc64le");
  assert_non_null (arch);
  convert_full ("ppc64le", st_regs_sample_mask (arch), ST_REGS_ABI_64, &d);
  for (int i = 0; i < 32; i++)
    assert_int_equal (d.value[i], 0x1000 + i);
  assert_true (d.present[65]);
  assert_int_equal (d.value[65], 0x1000 + 36);
  assert_int_equal (d.value[101], 0x1000 + 37);
  assert_int_equal (d.value[109], 0x1000 + 35);
  assert_false (d.present[64]);
  assert_int_equal (d.n, 110);
  assert_int_equal (d.pc, 0x1000 + 32);
  assert_int_equal (d.sp, 0x1000 + 1);
  assert_false (d.big_endian);
}

static void
test_s390x_table (void **state)
{
  /* PERF_REG_S390_R0..R15 = 0..15, FP0..FP15 = 16..31, MASK 32, PC 33;
     DWARF 16..31 = f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15.  */
  struct st_dwarf_regs d;
  convert_full ("s390x", 0x3ffffffffULL, ST_REGS_ABI_64, &d);
  static const int f_of_dwarf[16] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15 };
  for (int i = 0; i < 16; i++)
    {
      assert_int_equal (d.value[i], 0x1000 + i);
      assert_int_equal (d.value[16 + i], 0x1000 + 16 + f_of_dwarf[i]);
    }
  assert_int_equal (d.sp, 0x1000 + 15);
  assert_int_equal (d.pc, 0x1000 + 33);
  assert_true (d.big_endian);
}

static void
test_riscv64_table (void **state)
{
  /* PERF_REG_RISCV_PC RA SP GP TP T0 T1 T2 S0 S1 A0..A7 S2..S11 T3..T6 =
     0..31: register k > 0 is x<k>; DWARF x0..x31 = 0..31.  */
  struct st_dwarf_regs d;
  convert_full ("riscv64", 0xffffffffULL, ST_REGS_ABI_64, &d);
  assert_false (d.present[0]);          /* x0 is zero, not the pc */
  for (int i = 1; i < 32; i++)
    assert_int_equal (d.value[i], 0x1000 + i);
  assert_int_equal (d.value[1], 0x1000 + 1);    /* ra */
  assert_int_equal (d.sp, 0x1000 + 2);
  assert_int_equal (d.pc, 0x1000 + 0);
}

static void
test_arch_from_elf_and_refusals (void **state)
{
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_AARCH64, ELFCLASS64, ELFDATA2LSB)), "aarch64");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_ARM, ELFCLASS32, ELFDATA2LSB)), "arm");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_386, ELFCLASS32, ELFDATA2LSB)), "i386");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_S390, ELFCLASS64, ELFDATA2MSB)), "s390x");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_RISCV, ELFCLASS64, ELFDATA2LSB)), "riscv64");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_PPC64, ELFCLASS64, ELFDATA2LSB)),
                       "ppc64le");
  assert_string_equal (st_regs_arch_name (st_regs_arch_of_elf (EM_PPC64, ELFCLASS64, ELFDATA2MSB)),
                       "ppc64");
  assert_null (st_regs_arch_of_elf (EM_MIPS, ELFCLASS64, ELFDATA2MSB));
  assert_null (st_regs_arch_unsupported_reason ("x86_64"));
  assert_non_null (st_regs_arch_unsupported_reason ("mips64"));
  assert_non_null (strstr (st_regs_arch_unsupported_reason ("mips64"), "libdw"));
  assert_int_equal (st_regs_arch_machine (st_regs_arch_lookup ("ppc64le")), EM_PPC64);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_x86_64_perf_record_mask_maps_to_dwarf_order),
    cmocka_unit_test (test_sysprof_mask_without_segment_registers),
    cmocka_unit_test (test_32bit_task_uses_i386_order_and_truncates),
    cmocka_unit_test (test_missing_pc_is_an_error),
    cmocka_unit_test (test_aarch64_table),
    cmocka_unit_test (test_arm_table),
    cmocka_unit_test (test_arm_compat_task_on_arm64_uses_arm_table),
    cmocka_unit_test (test_ppc64le_table),
    cmocka_unit_test (test_s390x_table),
    cmocka_unit_test (test_riscv64_table),
    cmocka_unit_test (test_arch_from_elf_and_refusals),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
