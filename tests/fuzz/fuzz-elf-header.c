/* Fuzz target: the ELF header check done before libelf reads a file a
 * user may have made (st_elf_check_header, src/basic/elf-begin.c): the
 * section and program header counts, through the extended numbering
 * (e_shnum 0 and e_phnum PN_XNUM, the real counts in section 0).
 *
 * The input is a whole file (in a memfd).  Checks beyond "no crash": the
 * check refuses with -E2BIG and a reason, or passes; a file it passes,
 * begun by libelf, has at most ST_ELF_MAX_SECTIONS sections and
 * ST_ELF_MAX_PROGRAM_HEADER_BYTES of program headers as libelf counts
 * them (libelf is the oracle: a layout the check reads otherwise than
 * libelf is a way past it).
 *
 * Corpus: tests/fuzz/corpus/elf-header/: an armhf shared library (ELF32)
 * from the arm-exidx corpus, x86-64 shared libraries built here, and
 * synth-* headers made by hand: counts at and past the bounds, in the
 * header and in section 0, both byte orders.  */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic/elf-begin.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  int fd = memfd_create ("fuzz-elf-header", MFD_CLOEXEC);
  if (fd < 0 || (size > 0 && write (fd, data, size) != (ssize_t) size))
    abort ();
  struct st_why why = { 0 };
  int r = st_elf_check_header (fd, &why);
  if (r < 0)
    {
      if (r != -E2BIG || strstr (why.text, "its ELF header counts") == NULL)
        {
          fprintf (stderr, "refused with %d: `%s'\n", r, why.text);
          abort ();
        }
      if (fuzz_verbose)
        fprintf (stderr, "refused: %s\n", why.text);
      close (fd);
      return 0;
    }
  elf_version (EV_CURRENT);
  Elf *elf = NULL;
  if (st_elf_begin_untrusted (fd, &elf, NULL) != 0)
    abort ();   /* the same file, the same answer */
  if (elf != NULL && elf_kind (elf) == ELF_K_ELF)
    {
      size_t shnum, phnum;
      int cls = gelf_getclass (elf);
      size_t phentsize = cls == ELFCLASS64 ? sizeof (Elf64_Phdr) : sizeof (Elf32_Phdr);
      if (elf_getshdrnum (elf, &shnum) == 0 && shnum > ST_ELF_MAX_SECTIONS)
        {
          fprintf (stderr, "passed, but libelf counts %zu sections\n", shnum);
          abort ();
        }
      if (elf_getphdrnum (elf, &phnum) == 0 && phnum > ST_ELF_MAX_PROGRAM_HEADER_BYTES / phentsize)
        {
          fprintf (stderr, "passed, but libelf counts %zu program headers\n", phnum);
          abort ();
        }
      if (fuzz_verbose >= 2)
        fprintf (stderr, "passed: %zu sections, %zu program headers\n", shnum, phnum);
    }
  st_elf_end_untrusted (elf);
  close (fd);
  return 0;
}
