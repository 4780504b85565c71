/* The header check before libelf (basic/elf-begin.c): counts up to the
 * bounds pass, one more is refused, through the extended numbering too
 * (e_shnum 0 and e_phnum PN_XNUM, the count in section 0), in both
 * classes and both byte orders; a real ELF file and a file that is no ELF
 * pass.  The files are sparse: only the headers are written.  */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/elf-begin.h"
#include "unit/test-rewriter.h"

/* Stores V in N bytes at P in the given byte order.  */
static void
put (unsigned char *p, size_t n, uint64_t v, bool big)
{
  for (size_t i = 0; i < n; i++)
    p[big ? n - 1 - i : i] = (unsigned char) (v >> (8 * i));
}

#define PUT(buf, type, field, v, big) \
  put ((buf) + offsetof (type, field), sizeof ((type *) 0)->field, (v), (big))

/* A sparse ELF file of the class and order given, whose header counts
   SHNUM sections and PHNUM program headers; past the ELF header's fields
   they go to section 0 (sh_size, sh_info).  Returns its fd.  */
static int
crafted (bool is64, bool big, uint64_t shnum, uint64_t phnum)
{
  char path[] = "/tmp/test-elf-begin.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  unlink (path);
  unsigned char ehdr[sizeof (Elf64_Ehdr)] = { 0 };
  memcpy (ehdr, ELFMAG, SELFMAG);
  ehdr[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
  ehdr[EI_DATA] = big ? ELFDATA2MSB : ELFDATA2LSB;
  ehdr[EI_VERSION] = EV_CURRENT;
  const uint64_t shoff = 4096;
  bool ext_sh = shnum >= SHN_LORESERVE, ext_ph = phnum >= PN_XNUM;
  if (is64)
    {
      PUT (ehdr, Elf64_Ehdr, e_type, ET_DYN, big);
      PUT (ehdr, Elf64_Ehdr, e_machine, EM_X86_64, big);
      PUT (ehdr, Elf64_Ehdr, e_phoff, sizeof (Elf64_Ehdr), big);
      PUT (ehdr, Elf64_Ehdr, e_shoff, shoff, big);
      PUT (ehdr, Elf64_Ehdr, e_phentsize, sizeof (Elf64_Phdr), big);
      PUT (ehdr, Elf64_Ehdr, e_phnum, ext_ph ? PN_XNUM : phnum, big);
      PUT (ehdr, Elf64_Ehdr, e_shentsize, sizeof (Elf64_Shdr), big);
      PUT (ehdr, Elf64_Ehdr, e_shnum, ext_sh ? 0 : shnum, big);
    }
  else
    {
      PUT (ehdr, Elf32_Ehdr, e_type, ET_DYN, big);
      PUT (ehdr, Elf32_Ehdr, e_machine, EM_386, big);
      PUT (ehdr, Elf32_Ehdr, e_phoff, sizeof (Elf32_Ehdr), big);
      PUT (ehdr, Elf32_Ehdr, e_shoff, shoff, big);
      PUT (ehdr, Elf32_Ehdr, e_phentsize, sizeof (Elf32_Phdr), big);
      PUT (ehdr, Elf32_Ehdr, e_phnum, ext_ph ? PN_XNUM : phnum, big);
      PUT (ehdr, Elf32_Ehdr, e_shentsize, sizeof (Elf32_Shdr), big);
      PUT (ehdr, Elf32_Ehdr, e_shnum, ext_sh ? 0 : shnum, big);
    }
  assert_int_equal (pwrite (fd, ehdr, sizeof ehdr, 0), (ssize_t) sizeof ehdr);
  unsigned char shdr[sizeof (Elf64_Shdr)] = { 0 };
  if (is64)
    {
      PUT (shdr, Elf64_Shdr, sh_size, ext_sh ? shnum : 0, big);
      PUT (shdr, Elf64_Shdr, sh_info, ext_ph ? phnum : 0, big);
    }
  else
    {
      PUT (shdr, Elf32_Shdr, sh_size, ext_sh ? shnum : 0, big);
      PUT (shdr, Elf32_Shdr, sh_info, ext_ph ? phnum : 0, big);
    }
  assert_int_equal (pwrite (fd, shdr, sizeof shdr, shoff), (ssize_t) sizeof shdr);
  assert_int_equal (ftruncate (fd, (off_t) (shoff + (shnum + 1) * sizeof (Elf64_Shdr)
                                            + phnum * sizeof (Elf64_Phdr))), 0);
  return fd;
}

/* The check's answer for a crafted file.  */
static int
check (bool is64, bool big, uint64_t shnum, uint64_t phnum)
{
  int fd = crafted (is64, big, shnum, phnum);
  struct st_why why = { 0 };
  int r = st_elf_check_header (fd, &why);
  if (r < 0)
    assert_non_null (strstr (why.text, "its ELF header counts"));
  close (fd);
  return r;
}

static void
test_counts_bounded_in_every_layout (void **state)
{
  const uint64_t max_ph64 = ST_ELF_MAX_PROGRAM_HEADER_BYTES / sizeof (Elf64_Phdr);
  const uint64_t max_ph32 = ST_ELF_MAX_PROGRAM_HEADER_BYTES / sizeof (Elf32_Phdr);
  for (int big = 0; big <= 1; big++)
    {
      /* Sections.  */
      assert_int_equal (check (true, big, ST_ELF_MAX_SECTIONS, 1), 0);
      assert_int_equal (check (true, big, ST_ELF_MAX_SECTIONS + 1, 1), -E2BIG);
      assert_int_equal (check (false, big, ST_ELF_MAX_SECTIONS, 1), 0);
      assert_int_equal (check (false, big, ST_ELF_MAX_SECTIONS + 1, 1), -E2BIG);
      /* Past the header's 16 bits: the count in section 0.  */
      assert_int_equal (check (true, big, 20000000, 1), -E2BIG);
      assert_int_equal (check (false, big, 20000000, 1), -E2BIG);
      /* Program headers: 64 KiB of them, whichever their size.  */
      assert_int_equal (check (true, big, 3, max_ph64), 0);
      assert_int_equal (check (true, big, 3, max_ph64 + 1), -E2BIG);
      assert_int_equal (check (false, big, 3, max_ph32), 0);
      assert_int_equal (check (false, big, 3, max_ph32 + 1), -E2BIG);
      assert_int_equal (check (true, big, 3, 20000000), -E2BIG);
      assert_int_equal (check (false, big, 3, 20000000), -E2BIG);
    }
}

static void
test_real_and_foreign_files_pass (void **state)
{
  /* This program: checked, then begun by libelf.  */
  int fd = open ("/proc/self/exe", O_RDONLY);
  assert_true (fd >= 0);
  Elf *elf = NULL;
  elf_version (EV_CURRENT);
  assert_int_equal (st_elf_begin_untrusted (fd, &elf, NULL), 0);
  assert_non_null (elf);
  assert_int_equal (elf_kind (elf), ELF_K_ELF);
  st_elf_end_untrusted (elf);
  close (fd);
  /* A file that is no ELF file is libelf's to say so.  */
  char path[] = "/tmp/test-elf-begin.XXXXXX";
  fd = mkstemp (path);
  assert_true (fd >= 0);
  unlink (path);
  assert_int_equal (write (fd, "#!/bin/sh\n", 10), 10);
  assert_int_equal (st_elf_check_header (fd, NULL), 0);
  /* A refused file is not begun.  */
  int bomb = crafted (true, false, 20000000, 1);
  elf = (Elf *) 1;
  assert_int_equal (st_elf_begin_untrusted (bomb, &elf, NULL), -E2BIG);
  assert_null (elf);
  close (bomb);
  close (fd);
}

/* A section name table marked compressed is refused: libelf inflates it
   whole at the first elf_strptr, before any bound applies.  Its index in
   the header, or past 65,279 sections in section 0's sh_link.  */
static void
test_compressed_names_refused (void **state)
{
  for (int xindex = 0; xindex <= 1; xindex++)
    {
      char path[] = "/tmp/test-elf-begin.XXXXXX";
      int fd = mkstemp (path);
      assert_true (fd >= 0);
      unlink (path);
      Elf64_Ehdr ehdr = { .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                          .e_shoff = 4096, .e_shentsize = sizeof (Elf64_Shdr), .e_shnum = 3,
                          .e_shstrndx = xindex ? SHN_XINDEX : 2 };
      memcpy (ehdr.e_ident, ELFMAG, SELFMAG);
      ehdr.e_ident[EI_CLASS] = ELFCLASS64;
      ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
      ehdr.e_ident[EI_VERSION] = EV_CURRENT;
      Elf64_Shdr shdrs[3] = { { .sh_link = xindex ? 2 : 0 },
                              { .sh_type = SHT_PROGBITS },
                              { .sh_type = SHT_STRTAB, .sh_flags = SHF_COMPRESSED } };
      assert_int_equal (pwrite (fd, &ehdr, sizeof ehdr, 0), (ssize_t) sizeof ehdr);
      assert_int_equal (pwrite (fd, shdrs, sizeof shdrs, 4096), (ssize_t) sizeof shdrs);
      struct st_why why = { 0 };
      assert_int_equal (st_elf_check_header (fd, &why), -E2BIG);
      assert_string_equal (why.text, "its section name table is compressed");
      /* Not compressed: passes.  */
      shdrs[2].sh_flags = 0;
      assert_int_equal (pwrite (fd, shdrs, sizeof shdrs, 4096), (ssize_t) sizeof shdrs);
      assert_int_equal (st_elf_check_header (fd, NULL), 0);
      close (fd);
    }
}

/* The file's owner rewrites a count while the profiler reads the file:
   libelf's counts are ones the check passed, however the writes fall.  A
   child writes BENIGN and BOMB (LEN bytes) at AT of FD in turn, as fast as
   it can, while the file is begun again and again, until each answer has
   come 100 times.  Before the copy of what the check reads
   (basic/elf-begin.h), libelf read the header again after the check and
   met a count the check never saw.  */
static void
race (int fd, off_t at, const void *benign, const void *bomb, size_t len)
{
  elf_version (EV_CURRENT);
  pid_t kid = rewriter_start (fd, at, benign, bomb, len);
  assert_true (kid >= 0);
  const size_t max_phnum = ST_ELF_MAX_PROGRAM_HEADER_BYTES / sizeof (Elf64_Phdr);
  unsigned passed = 0, refused = 0, i;
  size_t shnum = 0, phnum = 0;
  bool begun = true;
  for (i = 0; i < 100000 && (passed < 100 || refused < 100); i++)
    {
      Elf *elf = NULL;
      if (st_elf_begin_untrusted (fd, &elf, NULL) < 0)
        {
          refused++;
          continue;
        }
      begun = elf != NULL && elf_getshdrnum (elf, &shnum) == 0 && elf_getphdrnum (elf, &phnum) == 0;
      st_elf_end_untrusted (elf);
      if (!begun || shnum > ST_ELF_MAX_SECTIONS || phnum > max_phnum)
        break;
      passed++;
    }
  rewriter_stop (kid);
  close (fd);
  assert_true (begun);
  if (shnum > ST_ELF_MAX_SECTIONS || phnum > max_phnum)
    fail_msg ("begin %u: the check passed, libelf counts %zu sections, %zu program headers", i,
              shnum, phnum);
  /* Both sides of the writes were met: the race ran.  */
  assert_true (passed >= 100);
  assert_true (refused >= 100);
}

/* e_shnum: 1 (section 0 alone), or 0 (the count in section 0: 100,000).  */
static void
test_section_count_rewritten (void **state)
{
  (void) state;
  const unsigned char one[2] = { 1, 0 }, zero[2] = { 0, 0 };
  race (crafted (true, false, 100000, 1), offsetof (Elf64_Ehdr, e_shnum), one, zero, 2);
}

/* Section 0's sh_size, with e_shnum 0: 10, or 100,000.  */
static void
test_extended_section_count_rewritten (void **state)
{
  (void) state;
  uint64_t ten = 10, many = 100000;
  race (crafted (true, false, 100000, 1), 4096 + offsetof (Elf64_Shdr, sh_size), &ten, &many,
        sizeof ten);
}

/* e_phnum: 1, or PN_XNUM (the count in section 0's sh_info: 100,000).  */
static void
test_program_header_count_rewritten (void **state)
{
  (void) state;
  const unsigned char one[2] = { 1, 0 }, xnum[2] = { 0xff, 0xff };
  race (crafted (true, false, 3, 100000), offsetof (Elf64_Ehdr, e_phnum), one, xnum, 2);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_counts_bounded_in_every_layout),
    cmocka_unit_test (test_real_and_foreign_files_pass),
    cmocka_unit_test (test_compressed_names_refused),
    cmocka_unit_test (test_section_count_rewritten),
    cmocka_unit_test (test_extended_section_count_rewritten),
    cmocka_unit_test (test_program_header_count_rewritten),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
