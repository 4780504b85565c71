/* Sorted symbol tables give the same answers as libdwfl's own (slow)
 * dwfl_module_addrinfo, for every function of a real library.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>

#include "core/resolve/demangle.h"
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
  assert_string_equal (st_symtab_lookup (tab, fn - bias, &off, NULL), "a_function_of_the_test");
  assert_int_equal (off, 0);
  assert_string_equal (st_symtab_lookup (tab, fn - bias + 3, &off, NULL), "a_function_of_the_test");
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
      const char *our_name = st_symtab_lookup (tab, probe - bias, &our_off, NULL);
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

/* ELF_NAME demangled in STYLE is WANT (NULL: not demangled).  */
static void
check_demangle (const char *elf_name, enum st_demangle_style style, const char *want)
{
  char *got = st_demangle (elf_name, style);
  if (want == NULL && got != NULL)
    fail_msg ("%s: demangled to %s, want it left alone", elf_name, got);
  if (want != NULL && (got == NULL || strcmp (got, want) != 0))
    fail_msg ("%s: demangled to %s, want %s", elf_name, got ? got : "(nothing)", want);
  free (got);
}

/* The names perf 6.1 prints for these symbols (perf script, perf script -v).  */
static void
test_demangles_as_perf (void **state)
{
  /* C++: no parameter lists by default, perf -v's with full.  */
  check_demangle ("_Z9sort_themIlEvRSt6vectorIT_SaIS1_EE", ST_DEMANGLE_SHORT, "sort_them<long>");
  check_demangle ("_Z9sort_themIlEvRSt6vectorIT_SaIS1_EE", ST_DEMANGLE_FULL,
                  "void sort_them<long>(std::vector<long, std::allocator<long> >&)");
  check_demangle ("_Znwm", ST_DEMANGLE_SHORT, "operator new");
  /* A clone's suffix shows only with parameter lists, as in perf -v.  */
  check_demangle ("_ZN4work4leafEm.cold", ST_DEMANGLE_SHORT, "work::leaf");
  check_demangle ("_ZN4work4leafEm.cold", ST_DEMANGLE_FULL, "work::leaf(unsigned long) [clone .cold]");
  /* Rust legacy (the hash goes) and v0.  */
  check_demangle ("_ZN1t3foo17h730287e85a498454E", ST_DEMANGLE_SHORT, "t::foo");
  check_demangle ("_RINvCsjMaewn57Afh_1t3foomEB2_", ST_DEMANGLE_SHORT, "t::foo::<u32>");
  /* OCaml, as perf's own demangler.  */
  check_demangle ("camlStdlib__List__map_281", ST_DEMANGLE_SHORT, "Stdlib.List.map_281");
  /* C names, and --no-demangle.  */
  check_demangle ("main", ST_DEMANGLE_SHORT, NULL);
  check_demangle ("__libc_start_main@@GLIBC_2.34", ST_DEMANGLE_SHORT, NULL);
  check_demangle ("_Z9sort_themIlEvRSt6vectorIT_SaIS1_EE", ST_DEMANGLE_NONE, NULL);
  enum st_demangle_style style;
  assert_int_equal (st_demangle_parse_style (NULL, &style), 0);
  assert_int_equal (style, ST_DEMANGLE_SHORT);
  assert_int_equal (st_demangle_parse_style ("full", &style), 0);
  assert_int_equal (style, ST_DEMANGLE_FULL);
  assert_int_equal (st_demangle_parse_style ("long", &style), -EINVAL);
}

/* Of the aliases at one address, the name perf shows: libc's debug file
   (libc6-dbg) has __libc_start_main@@GLIBC_2.34 first and
   __libc_start_main@GLIBC_2.2.5 later, the same length: perf keeps the
   first; at free's address the longest name, cfree@GLIBC_2.2.5.  */
static void
test_versioned_names_as_perf (void **state)
{
  Dwfl *dwfl = dwfl_begin (&callbacks);
  Dwfl_Module *mod = dwfl_report_offline (dwfl, "libc", "/usr/lib/x86_64-linux-gnu/libc.so.6", -1);
  assert_non_null (mod);
  dwfl_report_end (dwfl, NULL, NULL);
  Dwarf_Addr bias;
  dwfl_module_getelf (mod, &bias);
  struct st_symtab *tab = st_symtab_build (mod, bias);
  assert_non_null (tab);
  const char *want[][2] = {
    { "__libc_start_main@GLIBC_2.2.5", "__libc_start_main@@GLIBC_2.34" },
    { "free", "cfree@GLIBC_2.2.5" },
    { "clock_gettime@GLIBC_2.2.5", "clock_gettime@@GLIBC_2.17" },
  };
  int n = dwfl_module_getsymtab (mod);
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
    {
      GElf_Addr addr = 0;
      for (int i = 1; i < n && addr == 0; i++)
        {
          GElf_Sym sym;
          GElf_Addr a;
          const char *name = dwfl_module_getsym_info (mod, i, &sym, &a, NULL, NULL, NULL);
          if (name != NULL && strcmp (name, want[w][0]) == 0)
            addr = a;
        }
      if (addr == 0)
        fail_msg ("no %s in libc's symbol table: is libc6-dbg installed?", want[w][0]);
      uint64_t off;
      const char *raw = NULL;
      const char *shown = st_symtab_lookup (tab, addr - bias + 1, &off, &raw);
      assert_non_null (shown);
      assert_string_equal (shown, want[w][1]);
      assert_string_equal (raw, want[w][1]);
      assert_int_equal (off, 1);
    }
  st_symtab_free (tab);
  dwfl_end (dwfl);
}

/* A static-pie's PLT holds its ifuncs' IRELATIVE entries, whose
   relocations name no symbol: each is called by its file offset (newer
   perf's offset_0x...@plt; perf 6.1 says a bare "@plt" for all of them),
   never "@plt" alone.  */
static void
test_plt_entry_without_symbol (void **state)
{
  char dir[] = "/tmp/eu-stacktrace-symbols.XXXXXX", cmd[512], path[128];
  assert_non_null (mkdtemp (dir));
  snprintf (path, sizeof path, "%s/static-pie", dir);
  snprintf (cmd, sizeof cmd, "printf '#include <string.h>\\nint main (int c, char **v) "
            "{ return (int) strlen (v[c - 1]); }\\n' | gcc -O2 -static-pie -x c -o %s -", path);
  assert_int_equal (system (cmd), 0);
  Dwfl *dwfl = dwfl_begin (&callbacks);
  Dwfl_Module *mod = dwfl_report_offline (dwfl, "static-pie", path, -1);
  assert_non_null (mod);
  dwfl_report_end (dwfl, NULL, NULL);
  Dwarf_Addr bias;
  Elf *elf = dwfl_module_getelf (mod, &bias);
  size_t shstrndx;
  assert_int_equal (elf_getshdrstrndx (elf, &shstrndx), 0);
  GElf_Shdr plt = { 0 };
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) != NULL
          && strcmp (elf_strptr (elf, shstrndx, shdr.sh_name), ".plt") == 0)
        plt = shdr;
    }
  assert_true (plt.sh_size >= 32);
  struct st_symtab *tab = st_symtab_build (mod, bias);
  assert_non_null (tab);
  uint64_t off;
  /* The first entry, past the 16-byte header, 5 bytes in.  */
  const char *name = st_symtab_lookup (tab, plt.sh_addr + 16 + 5, &off, NULL);
  char want[64];
  snprintf (want, sizeof want, "offset_%#llx@plt", (unsigned long long) plt.sh_offset + 16);
  assert_non_null (name);
  assert_string_equal (name, want);
  assert_int_equal (off, 5);
  st_symtab_free (tab);
  dwfl_end (dwfl);
  assert_int_equal (unlink (path), 0);
  assert_int_equal (rmdir (dir), 0);
  (void) state;
}

/* A crafted symbol table: its section says 12 MiB of symbols of one byte
   each (sh_entsize 1), 12.6 million, of which 3 are there (the rest is a
   hole).  The table is first allocated for at most FIRST_CAP_MAX symbols,
   not the file's word: uncapped, that word asked for 300 MB of names'
   pool alone (helper-78's 200 MB file: 10 GB of address space).  The
   build runs in a child whose address space may grow by 96 MB only.  */
#define CRAFTED_SYMTAB_BYTES (12u << 20)

static void
write_crafted_elf (const char *path)
{
  static const char strtab[] = "\0fn_a\0fn_b\0fn_c";
  static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  assert_true (fd >= 0);
  Elf64_Ehdr eh = {
    .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
    .e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
    .e_entry = 0x401000, .e_phoff = sizeof eh, .e_shoff = 0x2200,
    .e_ehsize = sizeof eh, .e_phentsize = sizeof (Elf64_Phdr), .e_phnum = 1,
    .e_shentsize = sizeof (Elf64_Shdr), .e_shnum = 5, .e_shstrndx = 4,
  };
  Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x1000,
                    .p_vaddr = 0x401000, .p_paddr = 0x401000, .p_filesz = 0x100,
                    .p_memsz = 0x100, .p_align = 0x1000 };
  Elf64_Shdr sh[5] = {
    { 0 },
    { .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
      .sh_addr = 0x401000, .sh_offset = 0x1000, .sh_size = 0x100, .sh_addralign = 16 },
    { .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = 0x3000,
      .sh_size = CRAFTED_SYMTAB_BYTES, .sh_link = 3, .sh_info = 1, .sh_addralign = 8,
      .sh_entsize = 1 },
    { .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = 0x2000, .sh_size = sizeof strtab,
      .sh_addralign = 1 },
    { .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = 0x2100, .sh_size = sizeof shstrtab,
      .sh_addralign = 1 },
  };
  Elf64_Sym sym[4] = { { 0 } };
  for (int i = 1; i <= 3; i++)
    sym[i] = (Elf64_Sym) { .st_name = (Elf64_Word) (1 + 5 * (i - 1)),
                           .st_info = ELF64_ST_INFO (STB_GLOBAL, STT_FUNC), .st_shndx = 1,
                           .st_value = 0x401000 + 0x10 * (Elf64_Addr) (i - 1), .st_size = 0x10 };
  static unsigned char code[0x100];
  memset (code, 0xc3, sizeof code);
  assert_int_equal (pwrite (fd, &eh, sizeof eh, 0), sizeof eh);
  assert_int_equal (pwrite (fd, &ph, sizeof ph, sizeof eh), sizeof ph);
  assert_int_equal (pwrite (fd, code, sizeof code, 0x1000), sizeof code);
  assert_int_equal (pwrite (fd, strtab, sizeof strtab, 0x2000), sizeof strtab);
  assert_int_equal (pwrite (fd, shstrtab, sizeof shstrtab, 0x2100), sizeof shstrtab);
  assert_int_equal (pwrite (fd, sh, sizeof sh, 0x2200), sizeof sh);
  assert_int_equal (pwrite (fd, sym, sizeof sym, 0x3000), sizeof sym);
  assert_int_equal (ftruncate (fd, 0x3000 + CRAFTED_SYMTAB_BYTES), 0);
  assert_int_equal (close (fd), 0);
}

/* The child's address space now, in bytes (VmSize), or 0.  */
static uint64_t
vm_size (void)
{
  FILE *f = fopen ("/proc/self/status", "re");
  char line[256];
  uint64_t kb = 0;
  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, "VmSize: %" SCNu64 " kB", &kb) == 1)
      break;
  if (f != NULL)
    fclose (f);
  return kb * 1024;
}

static void
test_crafted_symbol_count_is_not_allocated (void **state)
{
  (void) state;
  char path[64];
  snprintf (path, sizeof path, "/tmp/eu-stacktrace-symtab-%d", (int) getpid ());
  write_crafted_elf (path);
  pid_t child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    {
      Dwfl *dwfl = dwfl_begin (&callbacks);
      Dwfl_Module *mod = dwfl != NULL ? dwfl_report_offline (dwfl, "crafted", path, -1) : NULL;
      Dwarf_Addr bias;
      if (mod == NULL || dwfl_report_end (dwfl, NULL, NULL) != 0
          || dwfl_module_getelf (mod, &bias) == NULL)
        _exit (2);
      if (dwfl_module_getsymtab (mod) < (int) CRAFTED_SYMTAB_BYTES)
        _exit (3);   /* the file's word was not taken: nothing tested */
      uint64_t now = vm_size ();
      struct rlimit as = { now + (96u << 20), now + (96u << 20) };
      if (now == 0 || setrlimit (RLIMIT_AS, &as) != 0)
        _exit (4);
      struct st_symtab *tab = st_symtab_build (mod, bias);
      if (tab == NULL)
        _exit (5);   /* out of the address space allowed */
      uint64_t off;
      const char *name = st_symtab_lookup (tab, 0x401013, &off, NULL);
      _exit (st_symtab_size (tab) == 3 && name != NULL && strcmp (name, "fn_b") == 0
             && off == 3 ? 0 : 6);
    }
  int status;
  assert_int_equal (waitpid (child, &status, 0), child);
  assert_int_equal (unlink (path), 0);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_finds_own_function_with_offset),
    cmocka_unit_test (test_crafted_symbol_count_is_not_allocated),
    cmocka_unit_test (test_agrees_with_libdwfl_across_libc),
    cmocka_unit_test (test_demangles_as_perf),
    cmocka_unit_test (test_versioned_names_as_perf),
    cmocka_unit_test (test_plt_entry_without_symbol),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
