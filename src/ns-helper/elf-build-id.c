#include "config.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "basic/io.h"
#include "ns-helper/elf-build-id.h"

#define MAX_PHNUM 256
#define MAX_NOTE_SEGMENT (64 * 1024)

/* Integers of the file's byte order.  */
struct reader {
  bool swap;
};

/* u16, u32, u64: an integer of that width at P, in the file's order.  */
#define READER(bits) \
  static uint##bits##_t \
  u##bits (const struct reader *r, const void *p) \
  { \
    uint##bits##_t v; \
    memcpy (&v, p, sizeof v); \
    return r->swap ? __builtin_bswap##bits (v) : v; \
  }
READER (16)
READER (32)
READER (64)
#undef READER

/* Looks for NT_GNU_BUILD_ID among the notes in BUF.  */
static int
scan_notes (const struct reader *r, const uint8_t *buf, size_t len, size_t align,
            uint8_t out[ST_ELF_BUILD_ID_MAX])
{
  size_t pos = 0;
  while (len - pos >= 12)
    {
      uint32_t namesz = u32 (r, buf + pos);
      uint32_t descsz = u32 (r, buf + pos + 4);
      uint32_t type = u32 (r, buf + pos + 8);
      pos += 12;
      size_t name_padded = ((size_t) namesz + align - 1) & ~(align - 1);
      size_t desc_padded = ((size_t) descsz + align - 1) & ~(align - 1);
      if (name_padded > len - pos)
        return 0;
      const uint8_t *name = buf + pos;
      pos += name_padded;
      if (descsz > len - pos)
        return 0;
      if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp (name, "GNU", 4) == 0
          && descsz > 0 && descsz <= ST_ELF_BUILD_ID_MAX)
        {
          memcpy (out, buf + pos, descsz);
          return descsz;
        }
      if (desc_padded > len - pos)
        return 0;
      pos += desc_padded;
    }
  return 0;
}

/* The file's first bytes, read at once: the header, the program headers
   and the notes are there in nearly every file, so that one pread serves
   them all (each read is a system call in the helper's opener, on the
   round trip of every request).  */
#define HEAD_SIZE 4096

struct head {
  int fd;
  size_t len;               /* < HEAD_SIZE: the whole file */
  uint8_t buf[HEAD_SIZE];
};

/* SIZE bytes at OFFSET: from the head when they are all in it, else read.
   Returns how many, as st_pread_full does.  */
static ssize_t
read_at (const struct head *h, void *buf, size_t size, uint64_t offset)
{
  if (offset <= h->len && size <= h->len - offset)
    {
      memcpy (buf, h->buf + offset, size);
      return (ssize_t) size;
    }
  return st_pread_full (h->fd, buf, size, offset);
}

int
st_elf_fd_build_id (int fd, uint8_t out[ST_ELF_BUILD_ID_MAX])
{
  struct head head;
  head.fd = fd;
  ssize_t n = st_pread_full (fd, head.buf, sizeof head.buf, 0);
  if (n < 0)
    return n;
  head.len = (size_t) n;
  const unsigned char *ehdr = head.buf;
  if ((size_t) n > sizeof (Elf64_Ehdr))
    n = sizeof (Elf64_Ehdr);
  if ((size_t) n < EI_NIDENT || memcmp (ehdr, ELFMAG, SELFMAG) != 0)
    return -ENOEXEC;
  bool is64 = ehdr[EI_CLASS] == ELFCLASS64;
  if (!is64 && ehdr[EI_CLASS] != ELFCLASS32)
    return -ENOEXEC;
  if (ehdr[EI_DATA] != ELFDATA2LSB && ehdr[EI_DATA] != ELFDATA2MSB)
    return -ENOEXEC;
  struct reader r = {
    .swap = (ehdr[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER == __LITTLE_ENDIAN),
  };
  size_t ehdr_size = is64 ? sizeof (Elf64_Ehdr) : sizeof (Elf32_Ehdr);
  if ((size_t) n < ehdr_size)
    return -ENOEXEC;

  uint64_t phoff = is64 ? u64 (&r, ehdr + offsetof (Elf64_Ehdr, e_phoff))
                        : u32 (&r, ehdr + offsetof (Elf32_Ehdr, e_phoff));
  uint16_t phentsize = u16 (&r, ehdr + (is64 ? offsetof (Elf64_Ehdr, e_phentsize)
                                             : offsetof (Elf32_Ehdr, e_phentsize)));
  uint16_t phnum = u16 (&r, ehdr + (is64 ? offsetof (Elf64_Ehdr, e_phnum)
                                         : offsetof (Elf32_Ehdr, e_phnum)));
  size_t phdr_size = is64 ? sizeof (Elf64_Phdr) : sizeof (Elf32_Phdr);
  if (phnum == 0 || phnum > MAX_PHNUM || phentsize < phdr_size)
    return 0;

  for (uint16_t i = 0; i < phnum; i++)
    {
      unsigned char ph[sizeof (Elf64_Phdr)];
      uint64_t at = phoff + (uint64_t) i * phentsize;
      if (read_at (&head, ph, phdr_size, at) != (ssize_t) phdr_size)
        return 0;
      uint32_t type = u32 (&r, ph);
      if (type != PT_NOTE)
        continue;
      uint64_t offset, filesz, align;
      if (is64)
        {
          offset = u64 (&r, ph + offsetof (Elf64_Phdr, p_offset));
          filesz = u64 (&r, ph + offsetof (Elf64_Phdr, p_filesz));
          align = u64 (&r, ph + offsetof (Elf64_Phdr, p_align));
        }
      else
        {
          offset = u32 (&r, ph + offsetof (Elf32_Phdr, p_offset));
          filesz = u32 (&r, ph + offsetof (Elf32_Phdr, p_filesz));
          align = u32 (&r, ph + offsetof (Elf32_Phdr, p_align));
        }
      if (filesz == 0 || filesz > MAX_NOTE_SEGMENT)
        continue;
      /* Notes are 4-byte aligned except in PT_NOTE segments aligned to 8.  */
      size_t note_align = align == 8 ? 8 : 4;
      uint8_t buf[MAX_NOTE_SEGMENT];
      ssize_t got = read_at (&head, buf, filesz, offset);
      if (got <= 0)
        continue;
      int size = scan_notes (&r, buf, got, note_align, out);
      if (size > 0)
        return size;
    }
  return 0;
}
