#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_x86_64_perf_record_mask_maps_to_dwarf_order),
    cmocka_unit_test (test_sysprof_mask_without_segment_registers),
    cmocka_unit_test (test_32bit_task_uses_i386_order_and_truncates),
    cmocka_unit_test (test_missing_pc_is_an_error),
    cmocka_unit_test (test_aarch64_table),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
