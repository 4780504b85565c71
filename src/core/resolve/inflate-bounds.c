#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
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

/* A GNU compressed section: .zNAME (libdw takes .zdebug_info and
   .zgnu_debugaltlink alike) holding "ZLIB", the inflated size (8 bytes,
   big-endian) and a zlib stream.  Its inflated size, or false.  */
static bool
gnu_compressed (Elf_Scn *scn, const GElf_Shdr *shdr, const char *name, uint64_t *size)
{
  if (name == NULL || strncmp (name, ".z", 2) != 0 || shdr->sh_type == SHT_NOBITS)
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
  /* Sections may overlap: the same compressed bytes count once.  */
  size_t file_size = 0;
  if (elf_rawfile (elf, &file_size) != NULL && in_file > file_size)
    in_file = file_size;
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

/* The bytes of an inflated ELF image that its checks read (the header,
   the section headers), kept as the image streams by.  */
struct header_capture {
  unsigned char ehdr[64];
  size_t ehdr_len;
  bool table_known;
  uint64_t table_at;          /* UINT64_MAX: none */
  unsigned char *table;       /* TABLE_CAP bytes from TABLE_AT */
  size_t table_cap, table_len;
};

/* Copies what of [AT, AT + N) falls in [FROM, FROM + CAP) to TO.  */
static void
keep_range (unsigned char *to, size_t cap, size_t *len, uint64_t from, const uint8_t *p, size_t n,
            uint64_t at)
{
  /* AT + N is within the image (at most 256 MiB): no overflow.  */
  if (from == UINT64_MAX || at + n <= from || (at >= from && at - from >= cap))
    return;
  uint64_t lo = at > from ? at : from;
  uint64_t hi = at + n - from < cap ? at + n : from + cap;
  memcpy (to + (lo - from), p + (lo - at), hi - lo);
  if (hi - from > *len)
    *len = hi - from;
}

static void
capture (struct header_capture *c, const uint8_t *p, size_t n, uint64_t at)
{
  keep_range (c->ehdr, sizeof c->ehdr, &c->ehdr_len, 0, p, n, at);
  if (!c->table_known && c->ehdr_len == sizeof c->ehdr)
    {
      c->table_known = true;
      if (st_elf_header_section_table (c->ehdr, c->ehdr_len, &c->table_at, &c->table_cap))
        c->table = calloc (1, c->table_cap);
      if (c->table == NULL)
        c->table_at = UINT64_MAX;
    }
  if (c->table != NULL)
    keep_range (c->table, c->table_cap, &c->table_len, c->table_at, p, n, at);
}

int
st_inflate_check_minidebuginfo (Elf *elf, struct st_why *why)
{
  Elf_Scn *scn = find_minidebuginfo (elf);
  Elf_Data *raw = scn != NULL ? elf_rawdata (scn, NULL) : NULL;
  if (raw == NULL || raw->d_buf == NULL || raw->d_size == 0)
    return 1;
  /* libdwfl inflates what it reads then, with no bound: the bytes counted
     here must be those, which st_elf_begin_untrusted copied (up to
     ST_ELF_MAX_FROZEN).  */
  if (raw->d_size > ST_ELF_MAX_FROZEN)
    return st_why_set (why, E2BIG, "its MiniDebugInfo (.gnu_debugdata) takes over %zu MiB",
                       ST_ELF_MAX_FROZEN >> 20);
  const uint64_t max = st_inflate_max (raw->d_size, ST_MINIDEBUGINFO_CEILING);
  lzma_stream z = LZMA_STREAM_INIT;
  /* As libdwfl decodes it (libdwfl/gzip.c): xz or lzma, one stream.  */
  if (lzma_auto_decoder (&z, ST_MINIDEBUGINFO_MEMLIMIT, 0) != LZMA_OK)
    return 0;   /* cannot tell: libdwfl would fail the same way */
  uint8_t out[64 << 10];
  uint64_t inflated = 0;
  /* libdwfl reads the image with elf_memory: its header's counts too, and
     inflates its compressed symbol tables with no bound of ours.  */
  struct header_capture head = { .table_at = UINT64_MAX };
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
  _cleanup_free_ unsigned char *table = head.table;
  if (r == LZMA_MEMLIMIT_ERROR)
    return st_why_set (why, E2BIG,
                       "its MiniDebugInfo (.gnu_debugdata) needs more than %u MiB to inflate",
                       ST_MINIDEBUGINFO_MEMLIMIT >> 20);
  if (inflated > max)
    return st_why_set (why, E2BIG,
                       "its MiniDebugInfo (.gnu_debugdata, %llu bytes) inflates past %llu MiB",
                       (unsigned long long) raw->d_size, (unsigned long long) (max >> 20));
  struct st_why inner = { 0 };
  if (st_elf_check_header_bytes (head.ehdr, head.ehdr_len, head.table, head.table_len, &inner) < 0
      || st_elf_check_no_compressed (head.ehdr, head.ehdr_len, head.table, head.table_len,
                                     &inner) < 0)
    return st_why_set (why, E2BIG, "its MiniDebugInfo (.gnu_debugdata): %s", inner.text);
  return 0;
}

/* The offset in ELF's section name table of an empty name: the NUL that
   ends the table's own name (offset 0 is empty only by convention), or
   false.  */
static bool
empty_name (Elf *elf, size_t shstrndx, GElf_Word *at)
{
  GElf_Shdr shdr;
  Elf_Scn *scn = elf_getscn (elf, shstrndx);
  const char *name = scn != NULL && gelf_getshdr (scn, &shdr) != NULL
                       ? elf_strptr (elf, shstrndx, shdr.sh_name) : NULL;
  if (name == NULL)
    return false;
  *at = shdr.sh_name + (GElf_Word) strlen (name);
  return true;
}

Elf *
st_inflate_hidden (int fd, bool minidebuginfo)
{
  /* A private mapping: the section headers change in this process's copy
     of them only (frozen copies: basic/elf-begin.h).  */
  Elf *elf = NULL;
  if (st_elf_begin_untrusted (fd, &elf, NULL) < 0 || elf == NULL)
    return NULL;
  bool compressed = st_inflate_check_sections (elf, NULL) < 0;
  size_t shstrndx;
  GElf_Word empty;
  if (elf_kind (elf) != ELF_K_ELF || elf_getshdrstrndx (elf, &shstrndx) != 0
      || !empty_name (elf, shstrndx, &empty))
    {
      st_elf_end_untrusted (elf);
      return NULL;
    }
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) == NULL || shdr.sh_type == SHT_NOBITS)
        continue;
      const char *name = elf_strptr (elf, shstrndx, shdr.sh_name);
      uint64_t size;
      bool hide = (minidebuginfo && name != NULL && strcmp (name, ".gnu_debugdata") == 0)
                  || (compressed && ((shdr.sh_flags & SHF_COMPRESSED)
                                     || gnu_compressed (scn, &shdr, name, &size)));
      if (!hide)
        continue;
      /* libdw skips a NOBITS section, libdwfl finds .gnu_debugdata by its
         name and symbol tables by their type, and libelf inflates only
         what has SHF_COMPRESSED (or a GNU name): no name, no bits.  */
      shdr.sh_name = empty;
      shdr.sh_type = SHT_NOBITS;
      shdr.sh_flags &= ~(GElf_Xword) SHF_COMPRESSED;
      if (!gelf_update_shdr (scn, &shdr))
        {
          st_elf_end_untrusted (elf);
          return NULL;
        }
    }
  return elf;
}
