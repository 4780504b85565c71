#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "basic/elf-begin.h"
#include "basic/io.h"

/* An integer of N bytes (2, 4, 8) at P in the file's byte order.  */
static uint64_t
field (const unsigned char *p, size_t n, bool big_endian)
{
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= (uint64_t) p[big_endian ? n - 1 - i : i] << (8 * i);
  return v;
}

/* Whether EHDR (LEN bytes) is an ELF header libelf reads: its class, its
   byte order.  */
static bool
header_kind (const unsigned char *ehdr, size_t len, bool *is64, bool *big)
{
  if (len < EI_NIDENT || memcmp (ehdr, ELFMAG, SELFMAG) != 0)
    return false;
  *is64 = ehdr[EI_CLASS] == ELFCLASS64;
  *big = ehdr[EI_DATA] == ELFDATA2MSB;
  return (*is64 || ehdr[EI_CLASS] == ELFCLASS32)
         && len >= (*is64 ? sizeof (Elf64_Ehdr) : sizeof (Elf32_Ehdr));
}

#define EHDR(name) \
  (is64 ? field (ehdr + offsetof (Elf64_Ehdr, name), sizeof ((Elf64_Ehdr *) 0)->name, big) \
        : field (ehdr + offsetof (Elf32_Ehdr, name), sizeof ((Elf32_Ehdr *) 0)->name, big))

uint64_t
st_elf_header_section0_at (const unsigned char *ehdr, size_t len)
{
  bool is64, big;
  if (!header_kind (ehdr, len, &is64, &big))
    return UINT64_MAX;
  /* Past 65,279 sections the real count is in section 0's sh_size.  */
  uint64_t shoff = EHDR (e_shoff);
  return EHDR (e_shnum) == 0 && shoff != 0 ? shoff : UINT64_MAX;
}

int
st_elf_check_header_bytes (const unsigned char *ehdr, size_t ehdr_len,
                           const unsigned char *section0, size_t section0_len,
                           struct st_why *why)
{
  bool is64, big;
  if (!header_kind (ehdr, ehdr_len, &is64, &big))
    return 0;   /* no ELF file: libelf says so */
  uint64_t shnum = EHDR (e_shnum), phnum = EHDR (e_phnum);
  /* Past 65,534 program headers the real count is in section 0's sh_info,
     which libelf reads only when the whole section header table is in the
     file: either way there are more than any bound here allows.  */
  if (phnum == PN_XNUM)
    phnum = UINT32_MAX;
  if (shnum == 0 && section0 != NULL
      && section0_len >= (is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr)))
    shnum = is64 ? field (section0 + offsetof (Elf64_Shdr, sh_size), 8, big)
                 : field (section0 + offsetof (Elf32_Shdr, sh_size), 4, big);
  uint64_t phdr_bytes = phnum * (is64 ? sizeof (Elf64_Phdr) : sizeof (Elf32_Phdr));
  if (shnum > ST_ELF_MAX_SECTIONS)
    return st_why_set (why, E2BIG, "its ELF header counts %llu sections (at most %d are read)",
                       (unsigned long long) shnum, ST_ELF_MAX_SECTIONS);
  if (phdr_bytes > ST_ELF_MAX_PROGRAM_HEADER_BYTES)
    return st_why_set (why, E2BIG,
                       "its ELF header counts %llu bytes of program headers (at most %d are read)",
                       (unsigned long long) phdr_bytes, ST_ELF_MAX_PROGRAM_HEADER_BYTES);
  return 0;
}

bool
st_elf_header_section_table (const unsigned char *ehdr, size_t len, uint64_t *at, size_t *bytes)
{
  bool is64, big;
  if (!header_kind (ehdr, len, &is64, &big) || EHDR (e_shoff) == 0)
    return false;
  *at = EHDR (e_shoff);
  *bytes = ST_ELF_MAX_SECTIONS * (is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr));
  return true;
}

int
st_elf_check_no_compressed (const unsigned char *ehdr, size_t len, const unsigned char *table,
                            size_t table_len, struct st_why *why)
{
  bool is64, big;
  if (!header_kind (ehdr, len, &is64, &big))
    return 0;
  size_t size = is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr);
  /* The table's own entries only: what follows it is other data.  */
  uint64_t count = EHDR (e_shnum);
  if (count == 0 && table_len >= size)
    count = is64 ? field (table + offsetof (Elf64_Shdr, sh_size), 8, big)
                 : field (table + offsetof (Elf32_Shdr, sh_size), 4, big);
  for (size_t i = 0; i < count && (i + 1) * size <= table_len; i++)
    {
      uint64_t flags = is64 ? field (table + i * size + offsetof (Elf64_Shdr, sh_flags), 8, big)
                            : field (table + i * size + offsetof (Elf32_Shdr, sh_flags), 4, big);
      if (flags & SHF_COMPRESSED)
        return st_why_set (why, E2BIG, "its section %zu is compressed", i);
    }
  return 0;
}

/* Whether FD's section name table (its header EHDR, LEN bytes) is marked
   compressed: libelf inflates it whole at the first elf_strptr, before
   any bound here could be applied.  */
static bool
names_compressed (int fd, const unsigned char *ehdr, size_t len)
{
  bool is64, big;
  if (!header_kind (ehdr, len, &is64, &big))
    return false;
  uint64_t shoff = EHDR (e_shoff), index = EHDR (e_shstrndx);
  size_t size = is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr);
  unsigned char shdr[sizeof (Elf64_Shdr)];
#define SHDR(name) \
  (is64 ? field (shdr + offsetof (Elf64_Shdr, name), sizeof ((Elf64_Shdr *) 0)->name, big) \
        : field (shdr + offsetof (Elf32_Shdr, name), sizeof ((Elf32_Shdr *) 0)->name, big))
  /* Past 65,279 sections the index is in section 0's sh_link.  */
  if (index == SHN_XINDEX)
    {
      if (shoff == 0 || st_pread_full (fd, shdr, size, shoff) != (ssize_t) size)
        return false;
      index = SHDR (sh_link);
    }
  if (shoff == 0 || index == 0 || index > ST_ELF_MAX_SECTIONS
      || st_pread_full (fd, shdr, size, shoff + index * size) != (ssize_t) size)
    return false;
  return (SHDR (sh_flags) & SHF_COMPRESSED) != 0;
#undef SHDR
}
#undef EHDR

int
st_elf_check_header (int fd, struct st_why *why)
{
  unsigned char ehdr[sizeof (Elf64_Ehdr)], section0[sizeof (Elf64_Shdr)];
  ssize_t got = st_pread_full (fd, ehdr, sizeof ehdr, 0);
  if (got <= 0)
    return 0;
  uint64_t at = st_elf_header_section0_at (ehdr, (size_t) got);
  ssize_t got0 = at != UINT64_MAX ? st_pread_full (fd, section0, sizeof section0, at) : 0;
  int r = st_elf_check_header_bytes (ehdr, (size_t) got, section0, got0 > 0 ? (size_t) got0 : 0,
                                     why);
  if (r == 0 && names_compressed (fd, ehdr, (size_t) got))
    r = st_why_set (why, E2BIG, "its section name table is compressed");
  return r;
}

int
st_elf_begin_untrusted (int fd, Elf **elf, struct st_why *why)
{
  *elf = NULL;
  int r = st_elf_check_header (fd, why);
  if (r < 0)
    return r;
  *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  return 0;
}
