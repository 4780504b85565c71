#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <string.h>

#include "basic/elf-begin.h"
#include "core/resolve/inflate-bounds.h"

uint64_t
st_inflate_max (uint64_t compressed, uint64_t ceiling)
{
  const uint64_t floor = 16u << 20;
  uint64_t max = compressed > UINT64_MAX / 64 ? UINT64_MAX : 64 * compressed;
  if (max < floor)
    max = floor;
  return ceiling != 0 && max > ceiling ? ceiling : max;
}

/* A GNU compressed section: .zdebug_NAME holding "ZLIB", the inflated
   size (8 bytes, big-endian) and a zlib stream.  Its inflated size, or
   false.  */
static bool
gnu_compressed (Elf_Scn *scn, const GElf_Shdr *shdr, const char *name, uint64_t *size)
{
  if (name == NULL || strncmp (name, ".zdebug", 7) != 0 || shdr->sh_type == SHT_NOBITS)
    return false;
  Elf_Data *raw = elf_rawdata (scn, NULL);
  const unsigned char *p = raw != NULL ? raw->d_buf : NULL;
  if (p == NULL || raw->d_size < 12 || memcmp (p, "ZLIB", 4) != 0)
    return false;
  *size = 0;
  for (int i = 4; i < 12; i++)
    *size = *size << 8 | p[i];
  return true;
}

uint64_t
st_inflate_declared (Elf *elf, bool gnu, uint64_t *compressed)
{
  uint64_t total = 0, in_file = 0;
  size_t shstrndx = 0;
  if (gnu && elf_getshdrstrndx (elf, &shstrndx) != 0)
    gnu = false;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) == NULL || shdr.sh_type == SHT_NOBITS)
        continue;
      uint64_t size;
      if (shdr.sh_flags & SHF_COMPRESSED)
        {
          GElf_Chdr chdr;
          if (gelf_getchdr (scn, &chdr) == NULL)
            return UINT64_MAX;
          size = chdr.ch_size;
        }
      else if (!gnu || !gnu_compressed (scn, &shdr, elf_strptr (elf, shstrndx, shdr.sh_name),
                                        &size))
        continue;
      if (total + size < total)
        return UINT64_MAX;
      total += size;
      in_file += shdr.sh_size;
    }
  if (compressed != NULL)
    *compressed = in_file;
  return total;
}

int
st_inflate_check_sections (Elf *elf, struct st_why *why)
{
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    return 0;
  uint64_t compressed = 0, declared = st_inflate_declared (elf, true, &compressed);
  uint64_t max = st_inflate_max (compressed, 0);
  if (declared <= max)
    return 0;
  if (declared == UINT64_MAX)
    return st_why_set (why, E2BIG, "a compressed section's header cannot be read");
  return st_why_set (why, E2BIG,
                     "its compressed sections (%llu bytes) say they inflate to %llu MiB, "
                     "past %llu MiB",
                     (unsigned long long) compressed, (unsigned long long) (declared >> 20),
                     (unsigned long long) (max >> 20));
}

/* ELF's section named .gnu_debugdata, or NULL.  */
static Elf_Scn *
find_minidebuginfo (Elf *elf)
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

/* The bytes of an inflated ELF image that its header check reads (the
   header, section 0's header), kept as the image streams by.  */
struct header_capture {
  unsigned char ehdr[64], section0[64];
  size_t ehdr_len, section0_len;
  bool section0_known;
  uint64_t section0_at;       /* UINT64_MAX: not needed */
};

/* Copies what of [AT, AT + N) falls in [FROM, FROM + 64) to TO.  */
static void
keep_range (unsigned char *to, size_t *len, uint64_t from, const uint8_t *p, size_t n,
            uint64_t at)
{
  if (from == UINT64_MAX || at + n <= from || at >= from + 64)
    return;
  uint64_t lo = at > from ? at : from, hi = at + n < from + 64 ? at + n : from + 64;
  memcpy (to + (lo - from), p + (lo - at), hi - lo);
  if (hi - from > *len)
    *len = hi - from;
}

static void
capture (struct header_capture *c, const uint8_t *p, size_t n, uint64_t at)
{
  keep_range (c->ehdr, &c->ehdr_len, 0, p, n, at);
  if (!c->section0_known && c->ehdr_len == sizeof c->ehdr)
    {
      c->section0_known = true;
      c->section0_at = st_elf_header_section0_at (c->ehdr, c->ehdr_len);
    }
  if (c->section0_known)
    keep_range (c->section0, &c->section0_len, c->section0_at, p, n, at);
}

int
st_inflate_check_minidebuginfo (Elf *elf, struct st_why *why)
{
  Elf_Scn *scn = find_minidebuginfo (elf);
  Elf_Data *raw = scn != NULL ? elf_rawdata (scn, NULL) : NULL;
  if (raw == NULL || raw->d_buf == NULL || raw->d_size == 0)
    return 1;
  const uint64_t max = st_inflate_max (raw->d_size, ST_MINIDEBUGINFO_CEILING);
  lzma_stream z = LZMA_STREAM_INIT;
  /* As libdwfl decodes it (libdwfl/gzip.c): xz or lzma, one stream.  */
  if (lzma_auto_decoder (&z, ST_MINIDEBUGINFO_MEMLIMIT, 0) != LZMA_OK)
    return 0;   /* cannot tell: libdwfl would fail the same way */
  uint8_t out[64 << 10];
  uint64_t inflated = 0;
  /* libdwfl reads the image with elf_memory: its header's counts too.  */
  struct header_capture head = { .section0_at = UINT64_MAX };
  z.next_in = raw->d_buf;
  z.avail_in = raw->d_size;
  lzma_ret r;
  do
    {
      z.next_out = out;
      z.avail_out = sizeof out;
      r = lzma_code (&z, z.avail_in == 0 ? LZMA_FINISH : LZMA_RUN);
      capture (&head, out, sizeof out - z.avail_out, inflated);
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
  struct st_why inner = { 0 };
  if (st_elf_check_header_bytes (head.ehdr, head.ehdr_len, head.section0, head.section0_len,
                                 &inner) < 0)
    return st_why_set (why, E2BIG, "its MiniDebugInfo (.gnu_debugdata): %s", inner.text);
  return 0;
}

Elf *
st_inflate_hidden (int fd, bool minidebuginfo, bool compressed)
{
  /* A private mapping: the section headers change in this process's copy
     of their page only.  */
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP_PRIVATE, NULL);
  size_t shstrndx;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF || elf_getshdrstrndx (elf, &shstrndx) != 0)
    {
      elf_end (elf);
      return NULL;
    }
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) == NULL)
        continue;
      const char *name = elf_strptr (elf, shstrndx, shdr.sh_name);
      uint64_t size;
      bool hide = (minidebuginfo && name != NULL && strcmp (name, ".gnu_debugdata") == 0)
                  || (compressed && shdr.sh_type != SHT_NOBITS
                      && ((shdr.sh_flags & SHF_COMPRESSED)
                          || gnu_compressed (scn, &shdr, name, &size)));
      if (!hide)
        continue;
      /* Offset 0 of the section name table is the empty name.  */
      shdr.sh_name = 0;
      if (!gelf_update_shdr (scn, &shdr))
        {
          elf_end (elf);
          return NULL;
        }
    }
  return elf;
}
