#include "config.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/elf-begin.h"
#include "basic/frozen-copy.h"
#include "basic/untrusted.h"
#include "core/resolve/elf-file.h"
#include "core/resolve/inflate-bounds.h"
#include "core/resolve/file-shared.h"

const char *
st_found_by_name (enum st_found_by how)
{
  switch (how)
    {
    case ST_FOUND_HOST_PATH:
      return "host path";
    case ST_FOUND_VDSO:
      return "vdso";
    case ST_FOUND_NS_HELPER:
      return "namespace helper";
    case ST_FOUND_CONTAINER:
      return "container storage";
    case ST_FOUND_DEBUGINFOD:
      return "debuginfod";
    case ST_FOUND_SYSROOT:
      return "sysroot";
    case ST_FOUND_SEARCH_PATH:
      return "search path";
    case ST_FOUND_N:
      break;
    }
  return "?";
}

size_t
st_elf_read_build_id (Elf *elf, uint8_t out[ST_BUILD_ID_MAX])
{
  const void *id;
  ssize_t n = dwelf_elf_gnu_build_id (elf, &id);
  if (n <= 0)
    return 0;
  if (n > ST_BUILD_ID_MAX)
    n = ST_BUILD_ID_MAX;
  memcpy (out, id, n);
  return n;
}

bool
st_elf_fd_has_build_id (int fd, const uint8_t *id, size_t n)
{
  Elf *elf = NULL;
  (void) st_elf_begin_untrusted (fd, &elf, NULL);
  uint8_t have[ST_BUILD_ID_MAX];
  size_t len = elf != NULL && elf_kind (elf) == ELF_K_ELF ? st_elf_read_build_id (elf, have) : 0;
  st_elf_end_untrusted (elf);
  return len == n && memcmp (have, id, n) == 0;
}

struct st_elf_file *
st_elf_file_new (int fd, void *image, Elf *elf, const char *path, enum st_found_by found_by)
{
  struct st_elf_file *f = calloc (1, sizeof *f);
  if (f == NULL)
    return NULL;
  f->path = strdup (path);
  if (f->path == NULL)
    {
      free (f);
      return NULL;
    }
  f->refs = 1;
  f->fd = fd;
  f->image = image;
  f->elf = elf;
  f->found_by = found_by;
  f->debug_fd = -1;
  f->alt_fd = -1;
  f->debug_stand_in_fd = -2;
  f->dwarf_frame = ST_DWARF_NOT_ASKED;
  f->build_id_size = st_elf_read_build_id (elf, f->build_id);
  st_build_id_to_hex (f->build_id, f->build_id_size, f->build_id_hex);
  return f;
}

struct st_elf_file *
st_elf_file_ref (struct st_elf_file *f)
{
  f->refs++;
  return f;
}

void
st_elf_file_unref (struct st_elf_file *f)
{
  if (f == NULL || --f->refs > 0)
    return;
  if (f->gone != NULL)
    f->gone (f, f->gone_arg);
  else
    st_elf_file_free (f);
}

void
st_elf_file_free (struct st_elf_file *f)
{
  st_symtab_free (f->symtab);
  st_file_shared_put (f->shared);
  st_frozen_close (f->debug_fd);
  if (f->debug_stand_in_fd >= 0)
    close (f->debug_stand_in_fd);
  free (f->debug_path);
  st_frozen_close (f->alt_fd);
  free (f->alt_path);
  st_elf_end_untrusted (f->hidden_for_libdwfl);
  /* The vdso's Elf reads its image; every other one a file's frozen
     mapping (basic/elf-begin.h).  */
  if (f->image != NULL)
    elf_end (f->elf);
  else
    st_elf_end_untrusted (f->elf);
  if (f->fd >= 0)
    close (f->fd);
  free (f->image);
  free (f->path);
  free (f);
}

/* How well segment PH backs a mapping at START, file offset PGOFF, that is
   EXECUTABLE or not: 0 when it cannot (its file pages do not hold PGOFF, or
   the mapping's address is not congruent with the segment's), else higher
   for a better match.  lld puts the read-only and the executable segments
   in one file page: both hold the offset, only the flags tell.  */
static int
segment_match (const GElf_Phdr *ph, uint64_t start, uint64_t pgoff, bool executable,
               uint64_t page_size)
{
  uint64_t page_offset = ph->p_offset & -page_size;
  if (pgoff < page_offset || pgoff >= ph->p_offset + ph->p_filesz)
    return 0;
  if (((start - ph->p_vaddr) ^ (pgoff - ph->p_offset)) & (page_size - 1))
    return 0;
  return ((ph->p_flags & PF_X) != 0) == executable ? 2 : 1;
}

bool
st_elf_file_mapping_bias (const struct st_elf_file *f, uint64_t start, uint64_t pgoff,
                          bool executable, uint64_t *bias, uint64_t *low, uint64_t *high)
{
  GElf_Ehdr ehdr;
  size_t phnum;
  if (gelf_getehdr (f->elf, &ehdr) == NULL || elf_getphdrnum (f->elf, &phnum) != 0)
    return false;
  /* libelf reads the count from the file's mapping each time: what its
     owner writes there after the check (basic/elf-begin.h) would make
     this loop as long as the file allows, for every mapping of it.  */
  if (phnum > ST_ELF_MAX_PROGRAM_HEADER_BYTES / sizeof (Elf32_Phdr))
    phnum = ST_ELF_MAX_PROGRAM_HEADER_BYTES / sizeof (Elf32_Phdr);
  /* The kernel maps segments at page, not p_align, granularity.  */
  const uint64_t page_size = (uint64_t) getpagesize ();
  bool found_first = false;
  int best = 0;
  uint64_t first_vaddr = 0, end = 0;
  /* Without a backing segment: right for the usual layout, vaddr ==
     offset, and for an executable, which is where it was linked.  */
  *bias = ehdr.e_type == ET_EXEC ? 0 : start - pgoff;
  for (size_t i = 0; i < phnum; i++)
    {
      GElf_Phdr ph;
      if (gelf_getphdr (f->elf, i, &ph) == NULL || ph.p_type != PT_LOAD)
        continue;
      if (!found_first)
        {
          /* libdwfl derives the bias from the first segment's aligned
             address and the module's low address: keep them consistent. */
          first_vaddr = ph.p_align > 1 ? ph.p_vaddr & -ph.p_align : ph.p_vaddr;
          found_first = true;
        }
      if (ph.p_vaddr + ph.p_memsz > end)
        end = ph.p_vaddr + ph.p_memsz;
      /* The segment that backs this mapping fixes the bias exactly,
         whatever the gaps between segments (-z separate-code), and also
         for a second mapping of the same code elsewhere (V8's built-ins in
         node, an executable's text remapped).  */
      int match = segment_match (&ph, start, pgoff, executable, page_size);
      if (match > best)
        {
          *bias = start - (ph.p_vaddr + (pgoff - ph.p_offset));
          best = match;
        }
    }
  if (!found_first)
    return false;
  *low = *bias + first_vaddr;
  *high = *bias + end;
  return true;
}

/* Past this many inflated bytes, or for a file this large, the copy is not
   made, and libdw inflates the sections itself, as it would have: the
   copy saves time, never memory.  */
#define INFLATE_MAX ((uint64_t) 1 << 30)

int
st_elf_inflated_copy (int fd)
{
  Elf *elf = NULL;
  (void) st_elf_begin_untrusted (fd, &elf, NULL);
  uint64_t size = elf != NULL && elf_kind (elf) == ELF_K_ELF ? st_inflate_declared (elf, false, NULL) : 0;
  st_elf_end_untrusted (elf);
  if (size == 0 || size > INFLATE_MAX)
    return -1;
  /* The copy holds the whole file too: a sparse file of a terabyte with
     one small compressed section would fill memory with its holes.  */
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (uint64_t) st.st_size > INFLATE_MAX)
    return -1;
  /* A copy of a file others may write, inflated, is a copy held too,
     charged within their budget before it is made (basic/frozen-copy.h);
     past it, the copy it is made from is served as it is.  */
  uint64_t reserved = 0, owner = 0;
  if (st_frozen_copy_owner (fd, &owner))
    {
      reserved = (uint64_t) st.st_size + size;
      if (st_frozen_reserve (reserved, owner) < 0)
        return -1;
    }
  int copy = memfd_create ("eu-stacktrace-debuginfo", MFD_CLOEXEC);
  if (copy < 0)
    {
      st_frozen_release (reserved, owner);
      return -1;
    }
  if (!st_copy_fd (fd, copy, st.st_size))
    goto fail;
  /* What is inflated is the copy, which the file's owner may have
     changed before it was made: its header and sizes are checked again.  */
  Elf *again = NULL;
  (void) st_elf_begin_untrusted (copy, &again, NULL);
  size = again != NULL && elf_kind (again) == ELF_K_ELF
         && st_inflate_check_sections (again, NULL) == 0
           ? st_inflate_declared (again, false, NULL) : 0;
  st_elf_end_untrusted (again);
  if (size == 0 || size > INFLATE_MAX)
    goto fail;
  Elf *out = elf_begin (copy, ELF_C_RDWR, NULL);
  if (out == NULL)
    goto fail;
  bool ok = true;
  for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn (out, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      if (gelf_getshdr (scn, &shdr) == NULL)
        ok = false;
      else if ((shdr.sh_flags & SHF_COMPRESSED) && shdr.sh_type != SHT_NOBITS)
        ok = elf_compress (scn, 0, 0) >= 0;
    }
  ok = ok && elf_update (out, ELF_C_WRITE) >= 0;
  elf_end (out);
  if (!ok)
    goto fail;
  if (reserved > 0)
    {
      int r = st_frozen_adopt (copy, reserved, owner);
      reserved = 0;   /* given back by a failed adopt */
      if (r < 0)
        goto fail;
    }
  return copy;

fail:
  st_frozen_release (reserved, owner);
  close (copy);
  return -1;
}

/* SCN holds the SIZE bytes at BUF (kept, not copied), as a section of TYPE
   named at offset NAME of the section name table.  */
static bool
fill_section (Elf_Scn *scn, void *buf, size_t size, GElf_Word type, GElf_Word name)
{
  Elf_Data *d = elf_newdata (scn);
  GElf_Shdr sh;
  if (d == NULL || gelf_getshdr (scn, &sh) == NULL)
    return false;
  d->d_buf = buf;
  d->d_size = size;
  d->d_type = ELF_T_BYTE;
  d->d_align = 1;
  sh.sh_type = type;
  sh.sh_name = name;
  return gelf_update_shdr (scn, &sh) != 0;
}

/* More than a 64-bit address space (2^57 with 5-level pages) holds.  */
#define STAND_IN_SIZE ((off_t) 1 << 60)

int
st_elf_dwarf_stand_in (int fd)
{
  static char shstrtab[] = "\0.shstrtab\0.debug_line";
  static char debug_line[4];
  Elf *in = NULL;
  (void) st_elf_begin_untrusted (fd, &in, NULL);
  GElf_Ehdr ehdr;
  size_t phnum;
  int cls = in != NULL ? gelf_getclass (in) : ELFCLASSNONE;
  if (cls == ELFCLASSNONE || gelf_getehdr (in, &ehdr) == NULL || elf_getphdrnum (in, &phnum) != 0)
    {
      st_elf_end_untrusted (in);
      return -1;
    }
  int copy = memfd_create ("eu-stacktrace-dwarf-stand-in", MFD_CLOEXEC);
  Elf *out = copy >= 0 ? elf_begin (copy, ELF_C_WRITE, NULL) : NULL;
  bool ok = out != NULL && gelf_newehdr (out, cls) != NULL
            && (phnum == 0 || gelf_newphdr (out, phnum) != NULL);
  for (size_t i = 0; ok && i < phnum; i++)
    {
      GElf_Phdr ph;
      ok = gelf_getphdr (in, i, &ph) != NULL && gelf_update_phdr (out, i, &ph);
    }
  Elf_Scn *names = ok ? elf_newscn (out) : NULL;
  Elf_Scn *line = names != NULL ? elf_newscn (out) : NULL;
  ok = line != NULL && fill_section (names, shstrtab, sizeof shstrtab, SHT_STRTAB, 1)
       && fill_section (line, debug_line, sizeof debug_line, SHT_PROGBITS, 11);
  if (ok)
    {
      GElf_Ehdr oe;
      ok = gelf_getehdr (out, &oe) != NULL;
      if (ok)
        {
          memcpy (oe.e_ident, ehdr.e_ident, EI_NIDENT);
          oe.e_type = ehdr.e_type;
          oe.e_machine = ehdr.e_machine;
          oe.e_version = ehdr.e_version;
          oe.e_entry = ehdr.e_entry;
          oe.e_flags = ehdr.e_flags;
          oe.e_shstrndx = elf_ndxscn (names);
          ok = gelf_update_ehdr (out, &oe) && elf_update (out, ELF_C_WRITE) >= 0;
        }
    }
  elf_end (out);
  st_elf_end_untrusted (in);
  /* Sparse past what any address space maps: libelf's mmap of it fails
     and it reads the few bytes it needs instead.  A mapping costs a page
     fault and an munmap in every process (each ~100 us on a VM), reading
     costs neither.  */
  if (ok)
    ok = ftruncate (copy, STAND_IN_SIZE) == 0;
  if (!ok)
    {
      if (copy >= 0)
        close (copy);
      return -1;
    }
  return copy;
}

/* Records F's contents that will not be read (once per file and thread;
   --stats lists them).  */
static void
refuse (struct st_elf_file *f, const char *what, const struct st_why *why)
{
  st_untrusted_refuse (f->path, what, why->text);
}

Elf *
st_elf_file_for_libdwfl (struct st_elf_file *f)
{
  if (!f->hide_minidebuginfo)
    return elf_begin (-1, ELF_C_READ_MMAP, f->elf);
  /* Made once: its mapping goes with the file, after every Dwfl that
     holds a reference to it.  */
  if (f->hidden_for_libdwfl == NULL && f->fd >= 0)
    f->hidden_for_libdwfl = st_inflate_hidden (f->fd, true);
  return f->hidden_for_libdwfl != NULL ? elf_begin (-1, ELF_C_READ_MMAP, f->hidden_for_libdwfl)
                                       : NULL;
}

void
st_elf_file_check_minidebuginfo (struct st_elf_file *f)
{
  if (f->minidebuginfo_checked)
    return;
  f->minidebuginfo_checked = true;
  struct st_why why = { 0 };
  if (st_inflate_check_minidebuginfo (f->elf, &why) < 0)
    {
      f->hide_minidebuginfo = true;
      refuse (f, "symbols from .dynsym only", &why);
    }
}
