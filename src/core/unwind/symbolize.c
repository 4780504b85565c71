#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>

#include "core/resolve/dwarf-alt.h"
#include "core/resolve/find-debuginfo.h"
#include "core/unwind/module-spans.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/symbolize.h"

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

/* MOD's Dwarf and its dwz file, before their DIEs are read: libdw may
   look for no file by itself (core/resolve/dwarf-alt.h).  Once per module
   and Dwfl.  */
static void
settle_alt (Dwfl_Module *mod)
{
  void **userdata;
  Dwarf_Addr bias;
  if (dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) == NULL
      || *userdata == NULL)
    return;
  struct st_mapping *m = *userdata;
  if (m->alt_settled || m->finder == NULL || m->finder->alt_stand_in == NULL)
    return;
  Dwarf *dw = dwfl_module_getdwarf (mod, &bias);
  if (dw == NULL)
    return;
  st_dwarf_alt_settle (m->finder->alt_stand_in, dw, m->alt_given);
  m->alt_settled = true;
}

/* Adds the inlined calls at LOOKUP (innermost first) before FRAME's own.  */
static size_t
add_inline_frames (Dwfl_Module *mod, uint64_t lookup, const struct st_frame *base,
                   struct st_frame *out, size_t max)
{
  settle_alt (mod);
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

/* The libdwfl module of M's file.  A mapping of the same code elsewhere
   (another bias) has no module of its own: the file's first module
   serves for its symbol table, but its addresses are not M's, so
   *OWN_ADDRESSES is false and no inline frames come from it.  Asked of
   the process's module ranges (module-spans.h), not of its mappings: a
   process may have 65,530, and this runs for each frame with --inline.  */
static Dwfl_Module *
module_of (Dwfl *dwfl, const struct st_process *p, const struct st_mapping *m, uint64_t lookup,
           bool *own_addresses)
{
  *own_addresses = true;
  uint64_t low;
  if (m->reported || p->spans == NULL || !st_module_spans_first (p->spans, m->file, &low))
    return dwfl_addrmodule (dwfl, lookup);
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, low);
  void **userdata;
  const struct st_mapping *o = NULL;
  if (mod != NULL && dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) != NULL)
    o = *userdata;
  if (o != NULL && o->file == m->file && o->bias != m->bias)
    {
      *own_addresses = false;
      return mod;
    }
  return dwfl_addrmodule (dwfl, lookup);
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
      /* Every mapping of the file is symbolized, each with its own bias,
         from the file's one table: a module's text may be mapped more than
         once (node).  */
      if (m != NULL && m->file != NULL && m->has_bias)
        {
          f.build_id = m->file->build_id_size ? m->file->build_id_hex : NULL;
          f.has_elf_address = true;
          f.elf_address = f.pc - m->bias;
          Dwfl_Module *mod = NULL;
          bool own_addresses = false;
          if ((m->file->symtab == NULL || opts->inline_frames) && dwfl != NULL)
            mod = module_of (dwfl, p, m, lookup, &own_addresses);
          const struct st_symtab *tab = m->file->symtab;
          if (tab == NULL && mod != NULL)
            tab = st_module_symtab (mod, m->file);
          if (p->jit != NULL)
            f.symbol = st_jit_map_lookup_dump (p->jit, lookup, &f.offset);
          if (f.symbol == NULL && tab != NULL)
            f.symbol = st_symtab_lookup (tab, lookup - m->bias, &f.offset, &f.raw_symbol);
          if (opts->inline_frames && mod != NULL && own_addresses)
            n += add_inline_frames (mod, lookup, &f, out + n, max - n - 1);
        }
      /* Code outside every ELF file may be a JIT's, and so may code in
         one without a symbol (V8's built-ins, embedded in node's .text,
         are named only in its jitdump): the JIT's maps name it.  */
      if (f.symbol == NULL && p->jit != NULL)
        {
          f.symbol = st_jit_map_lookup (p->jit, lookup, &f.offset);
          if (f.symbol != NULL && f.module == NULL)
            f.module = "[jit]";
        }
      out[n++] = f;
    }
  return n;
}
