#include "config.h"

#include <gelf.h>

#include "core/resolve/elf-file.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/gopclntab.h"
#include "core/resolve/mapping.h"
#include "core/resolve/symbol-table.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/process.h"

struct build {
  Dwfl_Module *mod;
  struct st_elf_file *file;
  Dwfl *own;
};

/* The module to read FILE's symbols from: one like MOD in a Dwfl of its
   own (B->own), or NULL when that cannot be made (out of memory).  A
   stripped file's symbols are in its debug file, which libdwfl then loads
   and keeps with the module, and libdw 0.188 inflates every compressed
   section of it when the module's Dwarf is asked for: the unwinder does
   that wherever .eh_frame has no row (ld.so's _start, in nearly every
   process), about 70 ms for ld.so's on this project's VMs.  Read in a
   Dwfl of its own, the debug file goes with it; the process's module asks
   for it only for its Dwarf, and find-debuginfo.c serves it a stand-in
   without .debug_frame.  Never MOD itself: it may hold that stand-in
   already, and libdwfl would read its symbols from it (none).  */
static Dwfl_Module *
symbols_module (struct build *b)
{
  void **userdata;
  Dwarf_Addr low, high;
  dwfl_module_info (b->mod, &userdata, &low, &high, NULL, NULL, NULL, NULL);
  b->own = dwfl_begin (st_process_dwfl_callbacks ());
  if (b->own == NULL)
    return NULL;
  dwfl_report_begin (b->own);
  Dwfl_Module *own = dwfl_report_module (b->own, dwfl_module_info (b->mod, NULL, NULL, NULL,
                                                                   NULL, NULL, NULL, NULL),
                                         low, high);
  dwfl_report_end (b->own, NULL, NULL);
  void **own_userdata;
  if (own == NULL || dwfl_module_info (own, &own_userdata, NULL, NULL, NULL, NULL, NULL, NULL)
                         == NULL)
    return NULL;
  *own_userdata = *userdata;
  return own;
}

static struct st_symtab_data *
build_data (void *arg)
{
  struct build *b = arg;
  /* libdwfl inflates the MiniDebugInfo of a file without .symtab.  */
  st_elf_file_check_minidebuginfo (b->file);
  Dwfl_Module *mod = symbols_module (b);
  struct st_symtab_data *data = NULL;
  if (mod != NULL)
    {
      Dwarf_Addr bias = 0;
      dwfl_module_getelf (mod, &bias);
      b->file->symtab_building = true;   /* find-debuginfo.c: the real file */
      data = st_symtab_data_build (mod, bias);
      b->file->symtab_building = false;
    }
  dwfl_end (b->own);
  b->own = NULL;
  return data;
}

const struct st_symtab *
st_module_symtab (Dwfl_Module *mod, struct st_elf_file *file)
{
  if (file->symtab != NULL)
    return file->symtab;
  struct build b = { mod, file, NULL };
  if (file->shared == NULL)
    {
      file->symtab = st_symtab_own (build_data (&b));
      return file->symtab;
    }
  /* Another thread may have built it: one table for all.  */
  const struct st_symtab_data *data = st_file_shared_symtab (file->shared, build_data, &b);
  file->symtab = data != NULL ? st_symtab_view (data) : NULL;
  return file->symtab;
}

bool
st_module_in_entry_function (Dwfl_Module *mod, uint64_t lookup)
{
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  const struct st_mapping *m = *userdata;
  GElf_Ehdr ehdr;
  if (m == NULL || m->file == NULL || gelf_getehdr (m->file->elf, &ehdr) == NULL
      || ehdr.e_entry == 0)
    return false;
  const struct st_symtab *tab = st_module_symtab (mod, m->file);
  uint64_t offset;
  uint64_t addr = lookup - m->bias;
  /* A Thumb entry point has bit 0 set; its symbol's address does not.  */
  uint64_t entry = ehdr.e_machine == EM_ARM ? ehdr.e_entry & ~1ULL : ehdr.e_entry;
  return tab != NULL && st_symtab_lookup (tab, addr, &offset, NULL) != NULL
         && addr - offset == entry;
}

bool
st_module_is_go_outermost (Dwfl_Module *mod, uint64_t lookup)
{
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  const struct st_mapping *m = *userdata;
  if (m == NULL || m->file == NULL)
    return false;
  const struct st_symtab *tab = st_module_symtab (mod, m->file);
  uint64_t offset;
  return tab != NULL && st_symtab_is_go (tab)
         && st_gopclntab_is_outermost (st_symtab_lookup (tab, lookup - m->bias, &offset, NULL));
}
