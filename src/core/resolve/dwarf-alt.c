#include "config.h"

#include <elf.h>
#include <errno.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/resolve/dwarf-alt.h"

/* The stand-in's file: an ELF header, three section headers (none, the
   name table, a .debug_line of four zero bytes: dwarf_begin_elf wants
   .debug_info, .debug_line or .debug_frame to exist), their contents.
   No .debug_str and no .debug_info: every alt form read through it finds
   nothing.  */
static const char section_names[] = "\0.shstrtab\0.debug_line";
#define NAME_SHSTRTAB 1
#define NAME_DEBUG_LINE 11

struct image {
  Elf64_Ehdr ehdr;
  Elf64_Shdr shdr[3];
  char names[sizeof section_names];
  unsigned char debug_line[4];
};

struct st_dwarf_alt_stand_in {
  struct image image;   /* libelf reads it in place: it lives as long */
  Elf *elf;
  Dwarf *dw;
};

static void
fill_image (struct image *im)
{
  memset (im, 0, sizeof *im);
  memcpy (im->ehdr.e_ident, ELFMAG, SELFMAG);
  im->ehdr.e_ident[EI_CLASS] = ELFCLASS64;
  im->ehdr.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
  im->ehdr.e_ident[EI_VERSION] = EV_CURRENT;
  im->ehdr.e_type = ET_REL;
  im->ehdr.e_version = EV_CURRENT;
  im->ehdr.e_ehsize = sizeof im->ehdr;
  im->ehdr.e_shoff = offsetof (struct image, shdr);
  im->ehdr.e_shentsize = sizeof im->shdr[0];
  im->ehdr.e_shnum = 3;
  im->ehdr.e_shstrndx = 1;
  memcpy (im->names, section_names, sizeof section_names);
  im->shdr[1] = (Elf64_Shdr) {
    .sh_name = NAME_SHSTRTAB,
    .sh_type = SHT_STRTAB,
    .sh_offset = offsetof (struct image, names),
    .sh_size = sizeof im->names,
    .sh_addralign = 1,
  };
  im->shdr[2] = (Elf64_Shdr) {
    .sh_name = NAME_DEBUG_LINE,
    .sh_type = SHT_PROGBITS,
    .sh_offset = offsetof (struct image, debug_line),
    .sh_size = sizeof im->debug_line,
    .sh_addralign = 1,
  };
}

int
st_dwarf_alt_stand_in_new (struct st_dwarf_alt_stand_in **out)
{
  *out = NULL;
  struct st_dwarf_alt_stand_in *s = calloc (1, sizeof *s);
  if (s == NULL)
    return -ENOMEM;
  fill_image (&s->image);
  s->elf = elf_memory ((char *) &s->image, sizeof s->image);
  s->dw = s->elf != NULL ? dwarf_begin_elf (s->elf, DWARF_C_READ, NULL) : NULL;
  if (s->dw == NULL)
    {
      st_dwarf_alt_stand_in_free (s);
      return -EIO;
    }
  *out = s;
  return 0;
}

void
st_dwarf_alt_stand_in_free (struct st_dwarf_alt_stand_in *s)
{
  if (s == NULL)
    return;
  dwarf_end (s->dw);
  elf_end (s->elf);
  free (s);
}

void
st_dwarf_alt_settle (struct st_dwarf_alt_stand_in *s, Dwarf *main, bool given)
{
  if (!given)
    dwarf_setalt (main, s->dw);
  /* Set either way by now: dwarf_getalt returns it without looking.  */
  Dwarf *alt = dwarf_getalt (main);
  if (alt != NULL && alt != s->dw)
    dwarf_setalt (alt, s->dw);
}

void
st_dwarf_alt_stand_in_give (struct st_dwarf_alt_stand_in *s, Dwarf *main)
{
  /* dwarf_setalt takes no ownership (dwarf_end of MAIN ends only an alt
     that libdw opened itself), and libdwfl's own dwarf_setalt, for the
     file the callback found, replaces it.  */
  dwarf_setalt (main, s->dw);
}
