/* st_elf_file_mapping_bias gives the load bias the kernel really used, for
 * every mapping of programs linked by GNU ld, gold and lld in the layouts
 * they make (PIE, non-PIE, -z separate-code, lld's read-only and executable
 * segments in one file page, --no-rosegment).  The programs are linked and
 * run at test time; the expected bias is independent of the function under
 * test: the address where a function and a constant really are in the
 * running program, minus their values in the file's symbol table.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <gelf.h>

#include "basic/elf-begin.h"
#include "core/resolve/elf-file.h"

static const char program[] =
  "#include <stdio.h>\n"
  "#include <unistd.h>\n"
  "const char marker_ro[64] = \"read-only data\";\n"
  "__attribute__ ((noinline)) int marker (int x) { return x * 3 + marker_ro[x & 7]; }\n"
  "int main (void) {\n"
  "  printf (\"%lx %lx\\n\", (unsigned long) &marker, (unsigned long) marker_ro);\n"
  "  fflush (stdout);\n"
  "  char c;\n"
  "  return read (0, &c, 1) < 0 ? marker (c) : 0;\n"
  "}\n";

struct layout {
  const char *name;
  const char *cc;            /* compiler and linker flags */
  bool ro_and_x_share_page;  /* a non-executable and an executable segment share a
                                file page: the case that broke (checked, not assumed) */
  bool pie;
};

static const struct layout layouts[] = {
  { "GNU ld, PIE", "gcc -fuse-ld=bfd -fpie -pie", false, true },
  { "GNU ld, non-PIE", "gcc -fuse-ld=bfd -fno-pie -no-pie", false, false },
  { "GNU ld, PIE, -z noseparate-code", "gcc -fuse-ld=bfd -fpie -pie -Wl,-z,noseparate-code",
    false, true },
  { "gold, PIE", "gcc -fuse-ld=gold -fpie -pie", false, true },
  { "gold, non-PIE", "gcc -fuse-ld=gold -fno-pie -no-pie", false, false },
  { "lld, PIE", "clang -fuse-ld=lld -fpie -pie", true, true },
  { "lld, non-PIE", "clang -fuse-ld=lld -fno-pie -no-pie", true, false },
  { "lld, PIE, -z separate-code", "clang -fuse-ld=lld -fpie -pie -Wl,-z,separate-code",
    false, true },
  { "lld, PIE, --no-rosegment", "clang -fuse-ld=lld -fpie -pie -Wl,--no-rosegment", true, true },
  { "lld, PIE, -z separate-loadable-segments",
    "clang -fuse-ld=lld -fpie -pie -Wl,-z,separate-loadable-segments", false, true },
  { "lld, PIE, compacted offsets (-z noseparate-code, 64 KiB max-page-size)",
    "clang -fuse-ld=lld -fpie -pie -Wl,-z,noseparate-code -Wl,-z,max-page-size=65536", true,
    true },
};

static char dir[] = "/tmp/test-load-bias.XXXXXX";

static int
setup (void **state)
{
  if (mkdtemp (dir) == NULL)
    return -1;
  char path[256];
  snprintf (path, sizeof path, "%s/prog.c", dir);
  FILE *f = fopen (path, "w");
  if (f == NULL)
    return -1;
  fputs (program, f);
  return fclose (f);
}

static int
teardown (void **state)
{
  char cmd[300];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system (cmd) == 0 ? 0 : -1;
}

/* The value of symbol NAME in ELF's .symtab.  */
static uint64_t
symbol_value (Elf *elf, const char *name)
{
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr sh;
      if (gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
        continue;
      Elf_Data *d = elf_getdata (scn, NULL);
      for (size_t i = 0; d != NULL && i < sh.sh_size / sh.sh_entsize; i++)
        {
          GElf_Sym sym;
          const char *s;
          if (gelf_getsym (d, i, &sym) != NULL
              && (s = elf_strptr (elf, sh.sh_link, sym.st_name)) != NULL && strcmp (s, name) == 0)
            return sym.st_value;
        }
    }
  fail_msg ("no symbol %s", name);
  return 0;
}

/* Whether a non-executable and an executable PT_LOAD share a file page.  */
static bool
ro_and_x_share_page (Elf *elf)
{
  size_t n;
  assert_int_equal (elf_getphdrnum (elf, &n), 0);
  const uint64_t page = (uint64_t) getpagesize ();
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      {
        GElf_Phdr a, b;
        if (gelf_getphdr (elf, i, &a) == NULL || gelf_getphdr (elf, j, &b) == NULL
            || a.p_type != PT_LOAD || b.p_type != PT_LOAD || (a.p_flags & PF_X)
            || !(b.p_flags & PF_X) || a.p_filesz == 0)
          continue;
        if (((a.p_offset + a.p_filesz - 1) & -page) == (b.p_offset & -page))
          return true;
      }
  return false;
}

/* How many PT_LOADs without PF_X hold file offset PGOFF in their pages.  */
static int
non_x_segments_holding (Elf *elf, uint64_t pgoff)
{
  size_t n;
  int count = 0;
  assert_int_equal (elf_getphdrnum (elf, &n), 0);
  for (size_t i = 0; i < n; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (elf, i, &ph) != NULL && ph.p_type == PT_LOAD && !(ph.p_flags & PF_X)
          && pgoff >= (ph.p_offset & -(uint64_t) getpagesize ())
          && pgoff < ph.p_offset + ph.p_filesz)
        count++;
    }
  return count;
}

static void
check_layout (const struct layout *l)
{
  char exe[256], cmd[1024];
  snprintf (exe, sizeof exe, "%s/prog-%td", dir, l - layouts);
  snprintf (cmd, sizeof cmd, "%s -O1 -o '%s' '%s/prog.c'", l->cc, exe, dir);
  print_message ("%s: %s\n", l->name, cmd);
  assert_int_equal (system (cmd), 0);

  int fd = open (exe, O_RDONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  Elf *elf = NULL;
  assert_int_equal (st_elf_begin_untrusted (fd, &elf, NULL), 0);
  assert_non_null (elf);
  struct st_elf_file *file = st_elf_file_new (fd, NULL, elf, exe, ST_FOUND_HOST_PATH);
  assert_non_null (file);
  GElf_Ehdr eh;
  assert_non_null (gelf_getehdr (elf, &eh));
  assert_int_equal (eh.e_type, l->pie ? ET_DYN : ET_EXEC);
  assert_int_equal (ro_and_x_share_page (elf), l->ro_and_x_share_page);

  /* Run it: it prints where marker and marker_ro are, then waits.  */
  int to_child[2], from_child[2];
  assert_int_equal (pipe (to_child), 0);
  assert_int_equal (pipe (from_child), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      dup2 (to_child[0], 0);
      dup2 (from_child[1], 1);
      /* Its stdin must end when the test closes its end.  */
      close (to_child[1]);
      close (from_child[0]);
      execl (exe, exe, (char *) NULL);
      _exit (127);
    }
  close (to_child[0]);
  close (from_child[1]);
  FILE *out = fdopen (from_child[0], "r");
  uint64_t code_at, data_at;
  assert_int_equal (fscanf (out, "%" SCNx64 " %" SCNx64, &code_at, &data_at), 2);
  uint64_t want = code_at - symbol_value (elf, "marker");
  assert_int_equal (data_at - symbol_value (elf, "marker_ro"), want);
  if (!l->pie)
    assert_int_equal (want, 0);

  char maps_path[64], line[1024];
  snprintf (maps_path, sizeof maps_path, "/proc/%d/maps", (int) pid);
  FILE *maps = fopen (maps_path, "r");
  assert_non_null (maps);
  int checked = 0, executable = 0;
  while (fgets (line, sizeof line, maps) != NULL)
    {
      uint64_t start, end, pgoff;
      char perms[8], path[512] = "";
      if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %511s", &start, &end,
                  perms, &pgoff, path) < 4 || strcmp (path, exe) != 0)
        continue;
      bool x = perms[2] == 'x';
      /* RELRO: the start of the read-write segment, made read-only after
         relocation, shares its file page with the read-only segment's end;
         from the address and offset alone the two are one.  Only
         executable mappings reach the unwinder.  */
      if (!x && non_x_segments_holding (elf, pgoff) > 1)
        continue;
      uint64_t bias, low, high;
      assert_true (st_elf_file_mapping_bias (file, start, pgoff, x, &bias, &low, &high));
      print_message ("  %s %s pgoff %#" PRIx64 ": bias %#" PRIx64 ", want %#" PRIx64 "\n",
                     perms, exe, pgoff, bias, want);
      assert_int_equal (bias, want);
      assert_true (low <= start && end <= high + (uint64_t) getpagesize ());
      checked++;
      executable += x;
    }
  fclose (maps);
  assert_true (checked >= 1);
  assert_int_equal (executable, 1);

  close (to_child[1]);
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  fclose (out);
  st_elf_file_unref (file);
}

static void
test_bias_of_every_mapping_in_every_layout (void **state)
{
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    check_layout (&layouts[i]);
}

/* The same code mapped a second time elsewhere (as V8 maps node's
   built-ins) has its own bias: the one that puts its file offset at its
   address.  */
static void
test_second_mapping_of_the_same_code (void **state)
{
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
    {
      char exe[256];
      snprintf (exe, sizeof exe, "%s/prog-%zu", dir, i);
      int fd = open (exe, O_RDONLY | O_CLOEXEC);
      assert_true (fd >= 0);
      Elf *elf = NULL;
  assert_int_equal (st_elf_begin_untrusted (fd, &elf, NULL), 0);
      struct st_elf_file *file = st_elf_file_new (fd, NULL, elf, exe, ST_FOUND_HOST_PATH);
      assert_non_null (file);
      size_t n;
      assert_int_equal (elf_getphdrnum (elf, &n), 0);
      for (size_t k = 0; k < n; k++)
        {
          GElf_Phdr ph;
          assert_non_null (gelf_getphdr (elf, k, &ph));
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
          const uint64_t page = (uint64_t) getpagesize ();
          uint64_t pgoff = ph.p_offset & -page, elsewhere = 0x7f0000000000;
          /* The mapping starts at the page holding this file offset.  */
          uint64_t vaddr_of_page = ph.p_vaddr - (ph.p_offset - pgoff);
          uint64_t bias, low, high;
          assert_true (st_elf_file_mapping_bias (file, elsewhere, pgoff, true, &bias, &low, &high));
          assert_int_equal (bias, elsewhere - vaddr_of_page);
        }
      st_elf_file_unref (file);
    }
}

int
main (void)
{
  elf_version (EV_CURRENT);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_bias_of_every_mapping_in_every_layout),
    cmocka_unit_test (test_second_mapping_of_the_same_code),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
