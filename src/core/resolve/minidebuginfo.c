#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <string.h>

#include "core/resolve/minidebuginfo.h"

uint64_t
st_minidebuginfo_max (uint64_t compressed)
{
  const uint64_t floor = 16u << 20, ceiling = 256u << 20;
  if (compressed > ceiling / 64)
    return ceiling;
  return 64 * compressed > floor ? 64 * compressed : floor;
}

/* ELF's section named .gnu_debugdata, or NULL.  */
static Elf_Scn *
find_section (Elf *elf)
{
  size_t shstrndx;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF || elf_getshdrstrndx (elf, &shstrndx) != 0)
    return NULL;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      const char *name;
      if (gelf_getshdr (scn, &shdr) != NULL
          && (name = elf_strptr (elf, shstrndx, shdr.sh_name)) != NULL
          && strcmp (name, ".gnu_debugdata") == 0)
        return scn;
    }
  return NULL;
}

int
st_minidebuginfo_check (Elf *elf, struct st_why *why)
{
  Elf_Scn *scn = find_section (elf);
  Elf_Data *raw = scn != NULL ? elf_rawdata (scn, NULL) : NULL;
  if (raw == NULL || raw->d_buf == NULL || raw->d_size == 0)
    return 1;
  const uint64_t max = st_minidebuginfo_max (raw->d_size);
  lzma_stream z = LZMA_STREAM_INIT;
  /* As libdwfl decodes it (libdwfl/gzip.c): xz or lzma, one stream.  */
  if (lzma_auto_decoder (&z, ST_MINIDEBUGINFO_MEMLIMIT, 0) != LZMA_OK)
    return 0;   /* cannot tell: libdwfl would fail the same way */
  uint8_t out[64 << 10];
  uint64_t inflated = 0;
  z.next_in = raw->d_buf;
  z.avail_in = raw->d_size;
  lzma_ret r;
  do
    {
      z.next_out = out;
      z.avail_out = sizeof out;
      r = lzma_code (&z, z.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
      inflated += sizeof out - z.avail_out;
    }
  while (r == LZMA_OK && inflated <= max);
  lzma_end (&z);
  if (r == LZMA_MEMLIMIT_ERROR)
    return st_why_set (why, E2BIG,
                       "its MiniDebugInfo (.gnu_debugdata) needs more than %u MiB to inflate",
                       ST_MINIDEBUGINFO_MEMLIMIT >> 20);
  if (inflated > max)
    return st_why_set (why, E2BIG,
                       "its MiniDebugInfo (.gnu_debugdata, %llu bytes) inflates past %llu MiB",
                       (unsigned long long) raw->d_size, (unsigned long long) (max >> 20));
  return 0;
}

Elf *
st_minidebuginfo_hidden (int fd)
{
  /* A private mapping: the section header is changed in this process's
     copy of the page only.  */
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP_PRIVATE, NULL);
  Elf_Scn *scn = find_section (elf);
  GElf_Shdr shdr;
  if (scn == NULL || gelf_getshdr (scn, &shdr) == NULL)
    {
      elf_end (elf);
      return NULL;
    }
  /* Offset 0 of the section name table is the empty name.  */
  shdr.sh_name = 0;
  if (!gelf_update_shdr (scn, &shdr) || find_section (elf) != NULL)
    {
      elf_end (elf);
      return NULL;
    }
  return elf;
}
