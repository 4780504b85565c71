/* Sorted symbol tables give the same answers as libdwfl's own (slow)
 * dwfl_module_addrinfo, for every function of a real library.  */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <elfutils/libdwfl.h>

#include "core/resolve/symbol-table.h"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

int a_function_of_the_test (int x);

__attribute__ ((noinline)) int
a_function_of_the_test (int x)
{
  return x * 3 + 1;
}

static void
test_finds_own_function_with_offset (void **state)
{
  Dwfl *dwfl = dwfl_begin (&callbacks);
  Dwfl_Module *mod = dwfl_report_offline (dwfl, "self", "/proc/self/exe", -1);
  assert_non_null (mod);
  dwfl_report_end (dwfl, NULL, NULL);
  Dwarf_Addr bias;
  assert_non_null (dwfl_module_getelf (mod, &bias));
  struct st_symtab *tab = st_symtab_build (mod, bias);
  assert_non_null (tab);
  assert_true (st_symtab_size (tab) > 10);

  /* Offline, the module sits at its link-time addresses plus BIAS; find
     our function through libdwfl and check the table agrees.  */
  int n = dwfl_module_getsymtab (mod);
  GElf_Addr fn = 0;
  for (int i = 1; i < n; i++)
    {
      GElf_Sym sym;
      GElf_Addr addr;
      const char *name = dwfl_module_getsym_info (mod, i, &sym, &addr, NULL, NULL, NULL);
      if (name && strcmp (name, "a_function_of_the_test") == 0)
        fn = addr;
    }
  assert_true (fn != 0);
  uint64_t off;
  assert_string_equal (st_symtab_lookup (tab, fn - bias, &off), "a_function_of_the_test");
  assert_int_equal (off, 0);
  assert_string_equal (st_symtab_lookup (tab, fn - bias + 3, &off), "a_function_of_the_test");
  assert_int_equal (off, 3);
  st_symtab_free (tab);
  dwfl_end (dwfl);
}

static void
test_agrees_with_libdwfl_across_libc (void **state)
{
  Dwfl *dwfl = dwfl_begin (&callbacks);
  Dwfl_Module *mod = dwfl_report_offline (dwfl, "libc", "/usr/lib/x86_64-linux-gnu/libc.so.6", -1);
  assert_non_null (mod);
  dwfl_report_end (dwfl, NULL, NULL);
  Dwarf_Addr bias;
  dwfl_module_getelf (mod, &bias);
  struct st_symtab *tab = st_symtab_build (mod, bias);
  assert_true (st_symtab_size (tab) > 1000);

  /* Probe the middle of every sized function: both must name a function
     at the same start address (names may differ between aliases).  */
  int n = dwfl_module_getsymtab (mod);
  int checked = 0;
  for (int i = 1; i < n; i++)
    {
      GElf_Sym sym;
      GElf_Addr addr;
      const char *name = dwfl_module_getsym_info (mod, i, &sym, &addr, NULL, NULL, NULL);
      if (name == NULL || GELF_ST_TYPE (sym.st_info) != STT_FUNC || sym.st_size < 4)
        continue;
      GElf_Addr probe = addr + sym.st_size / 2;
      GElf_Off dwfl_off;
      GElf_Sym dwfl_sym;
      const char *dwfl_name = dwfl_module_addrinfo (mod, probe, &dwfl_off, &dwfl_sym,
                                                    NULL, NULL, NULL);
      uint64_t our_off;
      const char *our_name = st_symtab_lookup (tab, probe - bias, &our_off);
      assert_non_null (dwfl_name);
      assert_non_null (our_name);
      if (our_off != dwfl_off)
        fail_msg ("at %#lx: libdwfl %s+%#lx, ours %s+%#lx", (unsigned long) probe, dwfl_name,
                  (unsigned long) dwfl_off, our_name, (unsigned long) our_off);
      checked++;
    }
  print_message ("checked %d functions of libc\n", checked);
  assert_true (checked > 1000);
  st_symtab_free (tab);
  dwfl_end (dwfl);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_finds_own_function_with_offset),
    cmocka_unit_test (test_agrees_with_libdwfl_across_libc),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
