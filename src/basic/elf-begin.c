#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/array.h"
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
/* Reads LEN bytes at OFF into BUF: the count (short at the end of the
   file), or -1.  */
typedef ssize_t (*read_at_fn) (void *ctx, void *buf, size_t len, uint64_t off);

static bool
names_compressed (read_at_fn read_at, void *ctx, const unsigned char *ehdr, size_t len)
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
      if (shoff == 0 || read_at (ctx, shdr, size, shoff) != (ssize_t) size)
        return false;
      index = SHDR (sh_link);
    }
  if (shoff == 0 || index == 0 || index > ST_ELF_MAX_SECTIONS
      || read_at (ctx, shdr, size, shoff + index * size) != (ssize_t) size)
    return false;
  return (SHDR (sh_flags) & SHF_COMPRESSED) != 0;
#undef SHDR
}
#undef EHDR

/* The check of st_elf_check_header, on what READ_AT reads.  */
static int
check_header (read_at_fn read_at, void *ctx, struct st_why *why)
{
  unsigned char ehdr[sizeof (Elf64_Ehdr)], section0[sizeof (Elf64_Shdr)];
  ssize_t got = read_at (ctx, ehdr, sizeof ehdr, 0);
  if (got <= 0)
    return 0;
  uint64_t at = st_elf_header_section0_at (ehdr, (size_t) got);
  ssize_t got0 = at != UINT64_MAX ? read_at (ctx, section0, sizeof section0, at) : 0;
  int r = st_elf_check_header_bytes (ehdr, (size_t) got, section0, got0 > 0 ? (size_t) got0 : 0,
                                     why);
  if (r == 0 && names_compressed (read_at, ctx, ehdr, (size_t) got))
    r = st_why_set (why, E2BIG, "its section name table is compressed");
  return r;
}

static ssize_t
read_fd (void *ctx, void *buf, size_t len, uint64_t off)
{
  return st_pread_full (*(const int *) ctx, buf, len, (off_t) off);
}

int
st_elf_check_header (int fd, struct st_why *why)
{
  return check_header (read_fd, &fd, why);
}

/* The file mapped whole and private, and the runs of its pages replaced by
   copies read at the check.  */
struct frozen {
  int fd;
  unsigned char *map;
  size_t size;
  size_t page;
  struct run { uint64_t first, end; } *runs;
  size_t n_runs, cap_runs;
  /* A copy failed: pages may hold neither the file nor a copy of it, and
     what the check read may not be what libelf would read.  The file is
     refused.  */
  bool failed;
};

/* Runs of copied pages at most (each splits the mapping: two more areas
   of the address space): room for the header, the tables, the names, 32
   compressed sections and a MiniDebugInfo, each in a run or two.  */
#define MAX_RUNS 80

static bool
is_frozen (const struct frozen *z, uint64_t page_at)
{
  for (size_t i = 0; i < z->n_runs; i++)
    if (page_at >= z->runs[i].first && page_at < z->runs[i].end)
      return true;
  return false;
}

/* Replaces the pages of Z's mapping that hold [OFF, OFF + LEN) by
   anonymous pages holding what the file holds now (pread): nothing done
   to the file later reaches them, a truncation included (which takes a
   private mapping's copied file pages back).  A page already replaced is
   left as it is: read again, it could differ.  On any failure Z->failed
   is set.  */
static void
freeze (struct frozen *z, uint64_t off, uint64_t len)
{
  if (z->failed || off >= z->size || len == 0)
    return;
  if (len > z->size - off)
    len = z->size - off;
  uint64_t first = off & ~(uint64_t) (z->page - 1);
  uint64_t end = (off + len + z->page - 1) & ~(uint64_t) (z->page - 1);
  for (uint64_t p = first; p < end && !z->failed;)
    {
      if (is_frozen (z, p))
        {
          p += z->page;
          continue;
        }
      uint64_t q = p;
      while (q < end && !is_frozen (z, q))
        q += z->page;
      if (z->n_runs == MAX_RUNS
          || (z->n_runs == z->cap_runs
              && ST_GROW (z->runs, z->cap_runs, z->n_runs, 8) < 0))
        {
          z->failed = true;
          break;
        }
      void *at = z->map + p;
      uint64_t want = (q < z->size ? q : z->size) - p;
      if (mmap (at, q - p, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
            != at
          || st_pread_full (z->fd, at, want, (off_t) p) != (ssize_t) want)
        {
          z->failed = true;
          break;
        }
      z->runs[z->n_runs].first = p;
      z->runs[z->n_runs].end = q;
      z->n_runs++;
      p = q;
    }
}

/* read_at_fn of a frozen mapping: what it reads is frozen first.  */
static ssize_t
read_frozen (void *ctx, void *buf, size_t len, uint64_t off)
{
  struct frozen *z = ctx;
  if (off >= z->size)
    return 0;
  if (len > z->size - off)
    len = z->size - off;
  freeze (z, off, len);
  if (z->failed)
    return -1;
  memcpy (buf, z->map + off, len);
  return (ssize_t) len;
}

/* Compressed sections whose headers are frozen at most; a file with more
   (linked programs have a dozen debug sections) is not read.  */
#define MAX_COMPRESSED 32
/* The section name table is frozen whole: at most this long.  */
#define MAX_NAMES 65536

/* Freezes what libelf reads again after the check, by the (checked)
   header of Z: the section and program header tables, the section name
   table, and the header of each compressed section (libelf allocates what
   it says when it inflates the section).  0, or -E2BIG when there is more
   than the bounds above.  */
static int
freeze_tables (struct frozen *z)
{
  const unsigned char *ehdr = z->map;
  size_t len = z->size < sizeof (Elf64_Ehdr) ? z->size : sizeof (Elf64_Ehdr);
  bool is64, big;
  if (!header_kind (ehdr, len, &is64, &big))
    return 0;
#define EHDR(name) \
  (is64 ? field (ehdr + offsetof (Elf64_Ehdr, name), sizeof ((Elf64_Ehdr *) 0)->name, big) \
        : field (ehdr + offsetof (Elf32_Ehdr, name), sizeof ((Elf32_Ehdr *) 0)->name, big))
  uint64_t shoff = EHDR (e_shoff), phoff = EHDR (e_phoff);
  uint64_t shnum = EHDR (e_shnum), phnum = EHDR (e_phnum), shstrndx = EHDR (e_shstrndx);
#undef EHDR
  size_t shsize = is64 ? sizeof (Elf64_Shdr) : sizeof (Elf32_Shdr);
  size_t phsize = is64 ? sizeof (Elf64_Phdr) : sizeof (Elf32_Phdr);
  if (phoff != 0)
    freeze (z, phoff, phnum * phsize);
  if (shoff == 0 || shoff >= z->size || z->size - shoff < shsize)
    return 0;
  /* Section 0 (frozen by the check) holds the counts past 16 bits.  */
  const unsigned char *table = z->map + shoff;
#define SHDR(i, name) \
  (is64 ? field (table + (i) * shsize + offsetof (Elf64_Shdr, name), \
                 sizeof ((Elf64_Shdr *) 0)->name, big) \
        : field (table + (i) * shsize + offsetof (Elf32_Shdr, name), \
                 sizeof ((Elf32_Shdr *) 0)->name, big))
  if (shnum == 0)
    shnum = SHDR (0, sh_size);
  if (shstrndx == SHN_XINDEX)
    shstrndx = SHDR (0, sh_link);
  if (shnum > ST_ELF_MAX_SECTIONS)
    return -E2BIG;   /* the check let it through: cannot be */
  if (shnum > (z->size - shoff) / shsize)
    shnum = (z->size - shoff) / shsize;   /* libelf reads none of a table cut short */
  freeze (z, shoff, shnum * shsize);
  const unsigned char *names = NULL;
  uint64_t names_size = 0;
  if (shstrndx != 0 && shstrndx < shnum && SHDR (shstrndx, sh_type) != SHT_NOBITS)
    {
      uint64_t at = SHDR (shstrndx, sh_offset);
      names_size = SHDR (shstrndx, sh_size);
      if (names_size > MAX_NAMES)
        return -E2BIG;
      freeze (z, at, names_size);
      if (at < z->size && names_size <= z->size - at)
        names = z->map + at;
    }
  unsigned compressed = 0;
  for (uint64_t i = 1; i < shnum; i++)
    {
      if (SHDR (i, sh_type) == SHT_NOBITS)
        continue;
      uint64_t name = SHDR (i, sh_name);
      bool gnu = names != NULL && names_size >= 2 && name <= names_size - 2
                 && names[name] == '.' && names[name + 1] == 'z';
      if (!(SHDR (i, sh_flags) & SHF_COMPRESSED) && !gnu)
        continue;
      if (++compressed > MAX_COMPRESSED)
        return -E2BIG;
      /* Elf64_Chdr, or "ZLIB" and the size: 24 bytes at most.  */
      freeze (z, SHDR (i, sh_offset), sizeof (Elf64_Chdr));
    }
  /* libdwfl inflates a MiniDebugInfo whole, with no bound: what the
     bound counts (core/resolve/inflate-bounds.h) must be what it reads.
     A larger one follows the file, and inflate-bounds.c does not let it
     be read.  */
  for (uint64_t i = 1; names != NULL && i < shnum; i++)
    {
      uint64_t name = SHDR (i, sh_name), size = SHDR (i, sh_size);
      if (SHDR (i, sh_type) != SHT_NOBITS && name < names_size
          && names_size - name > sizeof ".gnu_debugdata" - 1
          && memcmp (names + name, ".gnu_debugdata", sizeof ".gnu_debugdata") == 0
          && size <= ST_ELF_MAX_FROZEN)
        freeze (z, SHDR (i, sh_offset), size);
    }
#undef SHDR
  return 0;
}

int
st_elf_begin_untrusted (int fd, Elf **elf, struct st_why *why)
{
  *elf = NULL;
  struct stat st;
  if (fstat (fd, &st) != 0)
    return st_why_set (why, errno, "cannot stat it: %s", strerror (errno));
  if (st.st_size <= 0 || (uint64_t) st.st_size > SIZE_MAX)
    return 0;   /* nothing libelf would read as ELF */
  struct frozen z = { .fd = fd, .size = (size_t) st.st_size,
                      .page = (size_t) sysconf (_SC_PAGESIZE) };
  /* Writable, as libdwfl relocates an ET_REL file's sections in place
     (nothing reaches the file); not charged against the machine's memory
     commit: only the copied pages take memory.  */
  z.map = mmap (NULL, z.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
  if (z.map == MAP_FAILED)
    return st_why_set (why, errno, "cannot map it: %s", strerror (errno));
  /* Everything the check reads is frozen as it reads it: libelf reads
     the counts the check saw, whatever the owner writes in between.  */
  int r = check_header (read_frozen, &z, why);
  if (r == 0 && freeze_tables (&z) < 0)
    r = st_why_set (why, E2BIG,
                    "it has more than %d compressed sections or a section name table over %d "
                    "bytes",
                    MAX_COMPRESSED, MAX_NAMES);
  if (r == 0 && z.failed)
    r = st_why_set (why, EIO, "its header and tables could not be copied (a read or a mapping "
                              "failed, or over %d parts)", MAX_RUNS);
  free (z.runs);
  if (r < 0)
    {
      munmap (z.map, z.size);
      return r;
    }
  *elf = elf_memory ((char *) z.map, z.size);
  if (*elf == NULL)
    munmap (z.map, z.size);
  return 0;
}

void
st_elf_end_untrusted (Elf *elf)
{
  if (elf == NULL)
    return;
  size_t size = 0;
  char *map = elf_rawfile (elf, &size);
  /* Another reference (a clone libdwfl still holds) keeps the mapping:
     it is then left mapped rather than pulled from under it.  */
  if (elf_end (elf) == 0 && map != NULL)
    munmap (map, size);
}
