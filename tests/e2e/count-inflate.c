/* An LD_PRELOAD library for tests/e2e/ld-so-dwarf.sh: counts the sections
 * libelf is asked to decompress (elf_compress and elf_compress_gnu with
 * type or compress 0), which libdw does for every compressed section of a
 * file when it opens the file's Dwarf.  libdw calls them through its PLT,
 * so a preloaded definition sees them; the real ones do the work.  At exit
 * a process that counted any appends its count to the file
 * INFLATE_COUNT_FILE names (timeout(1), preloaded too, counts none).  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long inflated;

int
elf_compress (Elf_Scn *scn, int type, unsigned int flags)
{
  static int (*real) (Elf_Scn *, int, unsigned int);
  if (real == NULL)
    real = (int (*) (Elf_Scn *, int, unsigned int)) dlsym (RTLD_NEXT, "elf_compress");
  if (type == 0)
    __atomic_add_fetch (&inflated, 1, __ATOMIC_RELAXED);
  return real (scn, type, flags);
}

int
elf_compress_gnu (Elf_Scn *scn, int compress, unsigned int flags)
{
  static int (*real) (Elf_Scn *, int, unsigned int);
  if (real == NULL)
    real = (int (*) (Elf_Scn *, int, unsigned int)) dlsym (RTLD_NEXT, "elf_compress_gnu");
  if (compress == 0)
    __atomic_add_fetch (&inflated, 1, __ATOMIC_RELAXED);
  return real (scn, compress, flags);
}

__attribute__ ((destructor)) static void
report (void)
{
  const char *path = getenv ("INFLATE_COUNT_FILE");
  FILE *f = path != NULL && inflated > 0 ? fopen (path, "ae") : NULL;
  if (f == NULL)
    return;
  fprintf (f, "%lu\n", inflated);
  fclose (f);
}
