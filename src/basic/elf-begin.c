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

/* The section and program header counts FD's header says, through the
   extended numbering; false when FD is no ELF file (libelf says so).  */
static bool
header_counts (int fd, uint64_t *sections, uint64_t *phdr_bytes)
{
  unsigned char ehdr[sizeof (Elf64_Ehdr)];
  ssize_t got = st_pread_full (fd, ehdr, sizeof ehdr, 0);
  if (got < EI_NIDENT || memcmp (ehdr, ELFMAG, SELFMAG) != 0)
    return false;
  bool is64 = ehdr[EI_CLASS] == ELFCLASS64;
  bool big = ehdr[EI_DATA] == ELFDATA2MSB;
  if ((!is64 && ehdr[EI_CLASS] != ELFCLASS32)
      || (size_t) got < (is64 ? sizeof (Elf64_Ehdr) : sizeof (Elf32_Ehdr)))
    return false;
#define EHDR(name) \
  (is64 ? field (ehdr + offsetof (Elf64_Ehdr, name), sizeof ((Elf64_Ehdr *) 0)->name, big) \
        : field (ehdr + offsetof (Elf32_Ehdr, name), sizeof ((Elf32_Ehdr *) 0)->name, big))
  uint64_t shoff = EHDR (e_shoff), shnum = EHDR (e_shnum), phnum = EHDR (e_phnum);
#undef EHDR
  /* Past 65,534 program headers the real count is in section 0's sh_info,
     which libelf reads only when the whole section header table is in the
     file: either way there are more than any bound here allows.  */
  if (phnum == PN_XNUM)
    phnum = UINT32_MAX;
  /* Past 65,279 sections the real count is in section 0's sh_size.  */
  if (shnum == 0 && shoff != 0)
    {
      unsigned char shdr[sizeof (Elf64_Shdr)];
      size_t size = is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr);
      if (st_pread_full (fd, shdr, size, shoff) == (ssize_t) size)
        {
#define SHDR(name) \
  (is64 ? field (shdr + offsetof (Elf64_Shdr, name), sizeof ((Elf64_Shdr *) 0)->name, big) \
        : field (shdr + offsetof (Elf32_Shdr, name), sizeof ((Elf32_Shdr *) 0)->name, big))
          shnum = SHDR (sh_size);
#undef SHDR
        }
    }
  *sections = shnum;
  *phdr_bytes = phnum * (is64 ? sizeof (Elf64_Phdr) : sizeof (Elf32_Phdr));
  return true;
}

int
st_elf_check_header (int fd, struct st_why *why)
{
  uint64_t sections, phdr_bytes;
  if (!header_counts (fd, &sections, &phdr_bytes))
    return 0;
  if (sections > ST_ELF_MAX_SECTIONS)
    return st_why_set (why, E2BIG, "its ELF header counts %llu sections (at most %d are read)",
                       (unsigned long long) sections, ST_ELF_MAX_SECTIONS);
  if (phdr_bytes > ST_ELF_MAX_PROGRAM_HEADER_BYTES)
    return st_why_set (why, E2BIG,
                       "its ELF header counts %llu bytes of program headers (at most %d are read)",
                       (unsigned long long) phdr_bytes, ST_ELF_MAX_PROGRAM_HEADER_BYTES);
  return 0;
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
