/* A file's compressed contents bounded before libdwfl and libdw inflate
 * them (core/resolve/inflate-bounds.c): the bound's shape; an ELF file
 * whose .gnu_debugdata (made here with liblzma) inflates within it passes,
 * one past it is refused, one with none or a damaged stream is libdwfl's;
 * compressed sections (SHF_COMPRESSED made by libelf, a GNU .zdebug_
 * header made by hand) within and past it; the hidden Elf names neither
 * and leaves the file as it was.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <lzma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/elf-begin.h"
#include "basic/sigbus-guard.h"
#include "core/resolve/inflate-bounds.h"

/* NBYTES zero bytes, xz-compressed; *SIZE gets the compressed size.  */
static uint8_t *
xz_of_zeros (size_t nbytes, size_t *size)
{
  uint8_t *in = calloc (1, nbytes ? nbytes : 1);
  size_t cap = nbytes / 100 + 4096;
  uint8_t *out = malloc (cap);
  assert_non_null (in);
  assert_non_null (out);
  *size = 0;
  assert_int_equal (lzma_easy_buffer_encode (0, LZMA_CHECK_CRC64, NULL, in, nbytes, out, size,
                                             cap),
                    LZMA_OK);
  free (in);
  return out;
}

/* A new ELF64 file (unlinked, open: *FD) for libelf to write, its header
   (*EHDR) that of an x86-64 shared object.  */
static Elf *
elf_file_new (int *fd, Elf64_Ehdr **ehdr)
{
  char path[] = "/tmp/test-inflate-bounds.XXXXXX";
  *fd = mkstemp (path);
  assert_true (*fd >= 0);
  unlink (path);
  Elf *elf = elf_begin (*fd, ELF_C_WRITE, NULL);
  assert_non_null (elf);
  *ehdr = elf64_newehdr (elf);
  assert_non_null (*ehdr);
  (*ehdr)->e_ident[EI_DATA] = ELFDATA2LSB;
  (*ehdr)->e_type = ET_DYN;
  (*ehdr)->e_machine = EM_X86_64;
  (*ehdr)->e_version = EV_CURRENT;
  return elf;
}

/* An ELF64 file (unlinked, open) whose section name table is NAMES
   (NAMES_LEN bytes; its own name at SHSTRTAB_NAME) and whose one other
   section, named at NAME, holds SIZE bytes of DATA (none when DATA is
   NULL), compressed by libelf when COMPRESS.  */
static int
elf_one_section (const char *names, size_t names_len, GElf_Word shstrtab_name, GElf_Word name,
                 const void *data, size_t size, bool compress)
{
  int fd;
  Elf64_Ehdr *ehdr;
  Elf *elf = elf_file_new (&fd, &ehdr);
  Elf_Scn *strscn = elf_newscn (elf);
  Elf_Data *d = elf_newdata (strscn);
  d->d_buf = (void *) names;
  d->d_size = names_len;
  d->d_type = ELF_T_BYTE;
  Elf64_Shdr *sh = elf64_getshdr (strscn);
  sh->sh_name = shstrtab_name;
  sh->sh_type = SHT_STRTAB;
  ehdr->e_shstrndx = elf_ndxscn (strscn);
  if (data != NULL)
    {
      Elf_Scn *scn = elf_newscn (elf);
      d = elf_newdata (scn);
      d->d_buf = (void *) data;
      d->d_size = size;
      d->d_type = ELF_T_BYTE;
      sh = elf64_getshdr (scn);
      sh->sh_name = name;
      sh->sh_type = SHT_PROGBITS;
      if (compress)
        assert_int_equal (elf_compress (scn, ELFCOMPRESS_ZLIB, 0), 1);
    }
  assert_true (elf_update (elf, ELF_C_WRITE) > 0);
  elf_end (elf);
  return fd;
}

/* An ELF64 file (unlinked, open) with a .gnu_debugdata of DATA, or none
   when DATA is NULL.  */
static int
elf_with (const uint8_t *data, size_t size)
{
  static const char names[] = "\0.shstrtab\0.gnu_debugdata";
  return elf_one_section (names, sizeof names, 1, 11, data, size, false);
}

static int
check_fd (int fd, struct st_why *why)
{
  Elf *elf = NULL;
  assert_int_equal (st_elf_begin_untrusted (fd, &elf, NULL), 0);
  assert_non_null (elf);
  int r = st_inflate_check_minidebuginfo (elf, why);
  st_elf_end_untrusted (elf);
  return r;
}

static void
test_bound (void **state)
{
  assert_int_equal (st_inflate_max (1000, ST_MINIDEBUGINFO_CEILING), 16u << 20);
  assert_int_equal (st_inflate_max (1u << 20, ST_MINIDEBUGINFO_CEILING), 64u << 20);
  assert_int_equal (st_inflate_max (100u << 20, ST_MINIDEBUGINFO_CEILING), 256u << 20);
  assert_int_equal (st_inflate_max (UINT64_MAX, ST_MINIDEBUGINFO_CEILING), 256u << 20);
  assert_true (st_inflate_max (100u << 20, 0) == 6400ull << 20);
  assert_true (st_inflate_max (UINT64_MAX, 0) == UINT64_MAX);
}

static void
test_within_passes_past_refused (void **state)
{
  elf_version (EV_CURRENT);
  size_t size;
  /* 8 MiB: under the 16 MiB floor.  */
  uint8_t *small = xz_of_zeros (8u << 20, &size);
  int fd = elf_with (small, size);
  struct st_why why = { 0 };
  assert_int_equal (check_fd (fd, &why), 0);
  close (fd);
  free (small);
  /* 64 MiB of zeros in a few KB: past it.  */
  uint8_t *bomb = xz_of_zeros (64u << 20, &size);
  print_message ("64 MiB of zeros in %zu bytes of xz\n", size);
  fd = elf_with (bomb, size);
  assert_int_equal (check_fd (fd, &why), -E2BIG);
  assert_non_null (strstr (why.text, "inflates past 16 MiB"));
  /* Hidden: libdwfl finds no .gnu_debugdata by its name, and the file
     itself still has it.  */
  Elf *hidden = st_inflate_hidden (fd, true);
  assert_non_null (hidden);
  assert_int_equal (st_inflate_check_minidebuginfo (hidden, NULL), 1);
  st_elf_end_untrusted (hidden);
  assert_int_equal (check_fd (fd, NULL), -E2BIG);
  close (fd);
  free (bomb);
}

static void
test_none_or_damaged_is_libdwfl_s (void **state)
{
  elf_version (EV_CURRENT);
  int fd = elf_with (NULL, 0);
  assert_int_equal (check_fd (fd, NULL), 1);
  close (fd);
  static const uint8_t junk[] = "not an xz stream at all";
  fd = elf_with (junk, sizeof junk);
  assert_int_equal (check_fd (fd, NULL), 0);
  close (fd);
}

/* An ELF64 file (unlinked, open) with a section .debug_info of NBYTES
   zeros, compressed by libelf (SHF_COMPRESSED, zlib).  */
static int
elf_with_compressed (size_t nbytes)
{
  static const char names[] = "\0.shstrtab\0.debug_info";
  void *zeros = calloc (1, nbytes);
  assert_non_null (zeros);
  int fd = elf_one_section (names, sizeof names, 1, 11, zeros, nbytes, true);
  free (zeros);
  return fd;
}

static bool
has_section (Elf *elf, const char *name)
{
  size_t shstrndx;
  assert_int_equal (elf_getshdrstrndx (elf, &shstrndx), 0);
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      const char *n;
      if (gelf_getshdr (scn, &shdr) != NULL && (n = elf_strptr (elf, shstrndx, shdr.sh_name))
          && strcmp (n, name) == 0)
        return true;
    }
  return false;
}

static int
check_sections_fd (int fd, struct st_why *why)
{
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  assert_non_null (elf);
  int r = st_inflate_check_sections (elf, why);
  elf_end (elf);
  return r;
}

static void
test_compressed_sections (void **state)
{
  elf_version (EV_CURRENT);
  struct st_why why = { 0 };
  int fd = elf_with_compressed (8u << 20);
  assert_int_equal (check_sections_fd (fd, &why), 0);
  close (fd);
  fd = elf_with_compressed (64u << 20);
  assert_int_equal (check_sections_fd (fd, &why), -E2BIG);
  assert_non_null (strstr (why.text, "say they inflate to 64 MiB, past 16 MiB"));
  Elf *hidden = st_inflate_hidden (fd, false);
  assert_non_null (hidden);
  /* libdw looks for .debug_info by its name.  */
  assert_false (has_section (hidden, ".debug_info"));
  assert_true (has_section (hidden, ".shstrtab"));
  st_elf_end_untrusted (hidden);
  assert_int_equal (check_sections_fd (fd, NULL), -E2BIG);   /* the file unchanged */
  close (fd);
  /* A GNU section: "ZLIB", 1 GiB big-endian, then a stream never read.  */
  static const uint8_t gnu[] = { 'Z', 'L', 'I', 'B', 0, 0, 0, 0, 0x40, 0, 0, 0, 0x78, 0x9c };
  fd = elf_with (gnu, sizeof gnu);   /* .gnu_debugdata: not a .zdebug name */
  assert_int_equal (check_sections_fd (fd, NULL), 0);
  close (fd);
}

/* An ELF64 file (unlinked, open) whose compressed .debug_info (48 KiB: a
   quarter noise, so it stays over 12 KiB) starts on a page of its own, apart from
   the pages the header check freezes anyway (the header, the name table
   and, after the sections, the section header table): a 16 KiB .pad
   comes before it.  */
static int
elf_compressed_apart (void)
{
  static const char names[] = "\0.shstrtab\0.debug_info\0.pad";
  static uint8_t pad[16 << 10], noise[48 << 10];
  uint64_t x = 88172645463325252u;   /* xorshift64: zlib cannot shrink it */
  for (size_t i = 0; i < sizeof noise / 4; i++)
    {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      noise[i] = (uint8_t) x;
    }
  int fd;
  Elf64_Ehdr *ehdr;
  Elf *elf = elf_file_new (&fd, &ehdr);
  const struct { const void *buf; size_t size; GElf_Word name, type; } parts[] = {
    { names, sizeof names, 1, SHT_STRTAB },
    { pad, sizeof pad, 23, SHT_PROGBITS },
    { noise, sizeof noise, 11, SHT_PROGBITS },
  };
  for (size_t i = 0; i < 3; i++)
    {
      Elf_Scn *scn = elf_newscn (elf);
      Elf_Data *d = elf_newdata (scn);
      d->d_buf = (void *) parts[i].buf;
      d->d_size = parts[i].size;
      d->d_type = ELF_T_BYTE;
      Elf64_Shdr *sh = elf64_getshdr (scn);
      sh->sh_name = parts[i].name;
      sh->sh_type = parts[i].type;
      if (i == 0)
        ehdr->e_shstrndx = elf_ndxscn (scn);
      if (i == 2)
        assert_int_equal (elf_compress (scn, ELFCOMPRESS_ZLIB, 0), 1);
    }
  assert_true (elf_update (elf, ELF_C_WRITE) > 0);
  elf_end (elf);
  return fd;
}

/* The file's owner rewrites a compressed section's declared size while
   the profiler reads the file: what libelf reads when it inflates the
   section (gelf_getchdr, as elf_compress reads it) is what the check
   passed.  A child writes 48 KiB and 1 TiB as the section's ch_size in
   turn (with pwrite, or TRUNCATING: cutting the file short before the
   section's page and writing the rest again, which takes back a private
   mapping's copies of the pages cut) while the file is begun and checked
   again and again, until each answer has come 100 times; each time the
   check passes, the size is read 1,000 times more.  Before the header of
   every compressed section was copied with the file's header
   (basic/elf-begin.h), the second read met the size the check never saw.  */
static void
chdr_race (bool truncating)
{
  elf_version (EV_CURRENT);
  assert_int_equal (st_sigbus_guard (), 0);   /* pages of a file cut short */
  int fd = elf_compressed_apart ();
  Elf *probe = elf_begin (fd, ELF_C_READ, NULL);
  GElf_Shdr shdr;
  assert_non_null (gelf_getshdr (elf_getscn (probe, 3), &shdr));
  assert_true (shdr.sh_flags & SHF_COMPRESSED);
  GElf_Ehdr ehdr;
  assert_non_null (gelf_getehdr (probe, &ehdr));
  elf_end (probe);
  /* Apart indeed: not on the first pages, nor on the table's.  */
  assert_true (shdr.sh_offset >= 8192 && ehdr.e_shoff - shdr.sh_offset >= 8192);
  const off_t at = (off_t) (shdr.sh_offset + offsetof (Elf64_Chdr, ch_size));
  const uint64_t values[2] = { 48u << 10, (uint64_t) 1 << 40 };
  const off_t cut = (off_t) (shdr.sh_offset & ~(uint64_t) 4095);
  off_t end = lseek (fd, 0, SEEK_END);
  unsigned char *tail = malloc ((size_t) (end - cut));
  assert_non_null (tail);
  assert_int_equal (pread (fd, tail, (size_t) (end - cut), cut), end - cut);
  pid_t kid = fork ();
  assert_true (kid >= 0);
  if (kid == 0)
    {
      /* Ends with the test, however that ends.  */
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0)
        _exit (1);
      for (unsigned n = 0;; n++)
        {
          const uint64_t *v = &values[n & 1];
          memcpy (tail + (at - cut), v, sizeof *v);
          if (getppid () == 1
              || (truncating ? ftruncate (fd, cut) != 0
                                 || pwrite (fd, tail, (size_t) (end - cut), cut) != end - cut
                             : pwrite (fd, v, sizeof *v, at) != (ssize_t) sizeof *v))
            _exit (1);
        }
    }
  unsigned passed = 0, refused = 0, i;
  uint64_t inflates_to = 0;
  for (i = 0; i < 100000 && (passed < 100 || refused < 100); i++)
    {
      Elf *elf = NULL;
      /* Cut short, the file may be no ELF file or fail its copy.  */
      if (st_elf_begin_untrusted (fd, &elf, NULL) < 0 || elf == NULL
          || st_inflate_check_sections (elf, NULL) < 0 || elf_getscn (elf, 3) == NULL)
        refused++;
      else
        {
          /* Read again and again, as the writer writes on: each read is
             one libelf could make when it inflates.  A truncation that
             meets a read ends in a page of zeros (the SIGBUS guard): the
             reads pause now and then for the writer to cut the file and
             write it again between two of them.  */
          for (unsigned k = 0; k < 1000 && inflates_to <= st_inflate_max (1, 0); k++)
            {
              if (truncating && k % 50 == 0)
                usleep (300);
              GElf_Chdr chdr;
              inflates_to = gelf_getchdr (elf_getscn (elf, 3), &chdr) != NULL ? chdr.ch_size : 0;
            }
          passed++;
        }
      st_elf_end_untrusted (elf);
      if (inflates_to > st_inflate_max (1, 0))
        break;
    }
  /* The writer goes before any assertion can end the test.  */
  kill (kid, SIGKILL);
  waitpid (kid, NULL, 0);
  close (fd);
  free (tail);
  if (inflates_to > st_inflate_max (1, 0))
    fail_msg ("begin %u: the check passed, libelf would inflate %llu bytes", i,
              (unsigned long long) inflates_to);
  assert_true (passed >= 100);
  assert_true (refused >= 100);
}

static void
test_compressed_size_rewritten (void **state)
{
  (void) state;
  chdr_race (false);
}

static void
test_compressed_size_rewritten_after_truncation (void **state)
{
  (void) state;
  chdr_race (true);
}

/* The image MiniDebugInfo holds is read by libdwfl with elf_memory, which
   believes its header: 1 MiB (so within every bound) whose header counts
   419,428 sections in section 0 is refused as a file would be.  */
static void
test_minidebuginfo_image_counts (void **state)
{
  elf_version (EV_CURRENT);
  size_t nbytes = 1u << 20;
  uint8_t *image = calloc (1, nbytes);
  assert_non_null (image);
  memcpy (image, ELFMAG, SELFMAG);
  image[EI_CLASS] = ELFCLASS64;
  image[EI_DATA] = ELFDATA2LSB;
  image[EI_VERSION] = EV_CURRENT;
  Elf64_Ehdr ehdr;
  memcpy (&ehdr, image, sizeof ehdr);
  ehdr.e_type = ET_DYN;
  ehdr.e_machine = EM_X86_64;
  ehdr.e_shoff = 4096;
  ehdr.e_shentsize = sizeof (Elf64_Shdr);
  ehdr.e_shnum = 0;
  memcpy (image, &ehdr, sizeof ehdr);
  Elf64_Shdr section0 = { .sh_size = 419428 };
  memcpy (image + 4096, &section0, sizeof section0);
  size_t cap = nbytes, size = 0;
  uint8_t *xz = malloc (cap);
  assert_int_equal (lzma_easy_buffer_encode (0, LZMA_CHECK_CRC64, NULL, image, nbytes, xz, &size,
                                             cap),
                    LZMA_OK);
  int fd = elf_with (xz, size);
  struct st_why why = { 0 };
  assert_int_equal (check_fd (fd, &why), -E2BIG);
  assert_non_null (strstr (why.text, "counts 419428 sections"));
  close (fd);
  /* The same image counting 40 sections passes.  */
  section0.sh_size = 40;
  memcpy (image + 4096, &section0, sizeof section0);
  size = 0;
  assert_int_equal (lzma_easy_buffer_encode (0, LZMA_CHECK_CRC64, NULL, image, nbytes, xz, &size,
                                             cap),
                    LZMA_OK);
  fd = elf_with (xz, size);
  assert_int_equal (check_fd (fd, NULL), 0);
  close (fd);
  /* With a section marked compressed (libdwfl would inflate a compressed
     .symtab of the image with no bound of ours): refused.  */
  ehdr.e_shnum = 2;
  memcpy (image, &ehdr, sizeof ehdr);
  section0.sh_size = 0;
  Elf64_Shdr compressed = { .sh_type = SHT_SYMTAB, .sh_flags = SHF_COMPRESSED };
  memcpy (image + 4096, &section0, sizeof section0);
  memcpy (image + 4096 + sizeof section0, &compressed, sizeof compressed);
  size = 0;
  assert_int_equal (lzma_easy_buffer_encode (0, LZMA_CHECK_CRC64, NULL, image, nbytes, xz, &size,
                                             cap),
                    LZMA_OK);
  fd = elf_with (xz, size);
  assert_int_equal (check_fd (fd, &why), -E2BIG);
  assert_non_null (strstr (why.text, "its section 1 is compressed"));
  close (fd);
  free (xz);
  free (image);
}

/* The second section of ELF: its header.  */
static GElf_Shdr
second_section (Elf *elf)
{
  GElf_Shdr shdr;
  assert_non_null (gelf_getshdr (elf_getscn (elf, 2), &shdr));
  return shdr;
}

/* Ways around the first hiding (the second review): a bomb named at
   offset 0 of a name table whose byte 0 is not NUL (hiding by naming it
   0 left its name), and a GNU .zgnu_debugaltlink (libdw inflates any
   .zNAME of a DWARF section).  Hidden now means empty: NOBITS, not
   marked compressed, and libdw finds no debug section in it.  */
static void
test_hidden_is_empty_whatever_its_name (void **state)
{
  elf_version (EV_CURRENT);
  static const char names[] = ".debug_info\0.shstrtab";
  void *zeros = calloc (1, 64u << 20);
  int fd = elf_one_section (names, sizeof names, 12, 0, zeros, 64u << 20, true);
  free (zeros);
  struct st_why why = { 0 };
  assert_int_equal (check_sections_fd (fd, &why), -E2BIG);
  Elf *hidden = st_inflate_hidden (fd, false);
  assert_non_null (hidden);
  GElf_Shdr shdr = second_section (hidden);
  assert_int_equal (shdr.sh_type, SHT_NOBITS);
  assert_false (shdr.sh_flags & SHF_COMPRESSED);
  size_t shstrndx;
  assert_int_equal (elf_getshdrstrndx (hidden, &shstrndx), 0);
  assert_string_equal (elf_strptr (hidden, shstrndx, shdr.sh_name), "");
  /* libdw: no debug section left to read (it skips NOBITS ones).  */
  assert_null (dwarf_begin_elf (hidden, DWARF_C_READ, NULL));
  st_elf_end_untrusted (hidden);
  close (fd);

  static const char gnu_names[] = "\0.shstrtab\0.zgnu_debugaltlink";
  static const uint8_t gnu[] = { 'Z', 'L', 'I', 'B', 0, 0, 0, 0, 0x40, 0, 0, 0, 0x78, 0x9c };
  fd = elf_one_section (gnu_names, sizeof gnu_names, 1, 11, gnu, sizeof gnu, false);
  assert_int_equal (check_sections_fd (fd, &why), -E2BIG);
  assert_non_null (strstr (why.text, "inflate to 1024 MiB"));
  close (fd);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_bound),
    cmocka_unit_test (test_within_passes_past_refused),
    cmocka_unit_test (test_none_or_damaged_is_libdwfl_s),
    cmocka_unit_test (test_compressed_sections),
    cmocka_unit_test (test_compressed_size_rewritten),
    cmocka_unit_test (test_compressed_size_rewritten_after_truncation),
    cmocka_unit_test (test_minidebuginfo_image_counts),
    cmocka_unit_test (test_hidden_is_empty_whatever_its_name),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
