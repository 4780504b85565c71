#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>

#include "core/unwind/symbolize.h"

/* The module's symbol table, built on first use and kept with the file so
   that every process mapping it shares one.  */
static const struct st_symtab *
module_symtab (Dwfl_Module *mod, struct st_elf_file *file)
{
  if (file->symtab == NULL)
    {
      Dwarf_Addr bias = 0;
      dwfl_module_getelf (mod, &bias);
      file->symtab_building = true;   /* find-debuginfo.c: no inflating */
      file->symtab = st_symtab_build (mod, bias);
      file->symtab_building = false;
    }
  return file->symtab;
}

bool
st_symbolize_in_entry_function (Dwfl_Module *mod, uint64_t lookup)
{
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  const struct st_mapping *m = *userdata;
  GElf_Ehdr ehdr;
  if (m == NULL || m->file == NULL || gelf_getehdr (m->file->elf, &ehdr) == NULL
      || ehdr.e_entry == 0)
    return false;
  const struct st_symtab *tab = module_symtab (mod, m->file);
  uint64_t offset;
  uint64_t addr = lookup - m->bias;
  return tab != NULL && st_symtab_lookup (tab, addr, &offset, NULL) != NULL
         && addr - offset == ehdr.e_entry;
}

/* The name of an inlined subroutine's abstract origin.  */
static const char *
inline_name (Dwarf_Die *die)
{
  Dwarf_Attribute attr;
  Dwarf_Die origin;
  if (dwarf_attr_integrate (die, DW_AT_abstract_origin, &attr) != NULL
      && dwarf_formref_die (&attr, &origin) != NULL)
    {
      const char *name = dwarf_diename (&origin);
      Dwarf_Attribute linkage;
      const char *mangled = dwarf_formstring (dwarf_attr_integrate (&origin, DW_AT_linkage_name,
                                                                    &linkage));
      return mangled ? mangled : name;
    }
  return dwarf_diename (die);
}

/* Adds the inlined calls at LOOKUP (innermost first) before FRAME's own.  */
static size_t
add_inline_frames (Dwfl_Module *mod, uint64_t lookup, const struct st_frame *base,
                   struct st_frame *out, size_t max)
{
  Dwarf_Addr bias;
  Dwarf_Die *cu = dwfl_module_addrdie (mod, lookup, &bias);
  if (cu == NULL)
    return 0;
  Dwarf_Die *scopes = NULL;
  int n = dwarf_getscopes (cu, lookup - bias, &scopes);
  size_t added = 0;
  for (int i = 0; i < n && added < max; i++)
    {
      if (dwarf_tag (&scopes[i]) != DW_TAG_inlined_subroutine)
        continue;
      out[added] = *base;
      out[added].inlined = true;
      out[added].symbol = inline_name (&scopes[i]);
      out[added].offset = 0;
      added++;
    }
  free (scopes);
  return added;
}

size_t
st_symbolize (const struct st_symbolize_options *opts, Dwfl *dwfl, const struct st_process *p,
              const struct st_raw_frame *raw, size_t n_raw, struct st_frame *out, size_t max)
{
  size_t n = 0;
  for (size_t i = 0; i < n_raw && n < max; i++)
    {
      struct st_frame f = { .pc = raw[i].pc, .activation = raw[i].activation };
      /* A return address points after the call: look up the call itself.  */
      uint64_t lookup = f.activation ? f.pc : f.pc - 1;
      /* Our own sorted mappings answer which file; libdwfl's module is
         needed only to build a symbol table once, or for inline frames.  */
      const struct st_mapping *m = st_process_find_mapping (p, lookup);
      if (m != NULL)
        f.module = m->path;
      if (m != NULL && m->file != NULL && m->reported)
        {
          f.build_id = m->file->build_id_size ? m->file->build_id_hex : NULL;
          f.has_elf_address = true;
          f.elf_address = f.pc - m->bias;
          Dwfl_Module *mod = NULL;
          if ((m->file->symtab == NULL || opts->inline_frames) && dwfl != NULL)
            mod = dwfl_addrmodule (dwfl, lookup);
          const struct st_symtab *tab = m->file->symtab;
          if (tab == NULL && mod != NULL)
            tab = module_symtab (mod, m->file);
          if (tab != NULL)
            f.symbol = st_symtab_lookup (tab, lookup - m->bias, &f.offset, &f.raw_symbol);
          if (opts->inline_frames && mod != NULL)
            n += add_inline_frames (mod, lookup, &f, out + n, max - n - 1);
        }
      out[n++] = f;
    }
  return n;
}
