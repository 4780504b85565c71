#include "config.h"

#include <gelf.h>

#include "core/resolve/elf-file.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/gopclntab.h"
#include "core/resolve/mapping.h"
#include "core/resolve/symbol-table.h"
#include "core/unwind/module-symbols.h"

struct build {
  Dwfl_Module *mod;
  struct st_elf_file *file;
};

static struct st_symtab_data *
build_data (void *arg)
{
  struct build *b = arg;
  Dwarf_Addr bias = 0;
  dwfl_module_getelf (b->mod, &bias);
  b->file->symtab_building = true;   /* find-debuginfo.c: no inflating */
  struct st_symtab_data *data = st_symtab_data_build (b->mod, bias);
  b->file->symtab_building = false;
  return data;
}

const struct st_symtab *
st_module_symtab (Dwfl_Module *mod, struct st_elf_file *file)
{
  if (file->symtab != NULL)
    return file->symtab;
  if (file->shared == NULL)
    {
      Dwarf_Addr bias = 0;
      dwfl_module_getelf (mod, &bias);
      file->symtab_building = true;
      file->symtab = st_symtab_build (mod, bias);
      file->symtab_building = false;
      return file->symtab;
    }
  /* Another thread may have built it: then this thread's Dwfl never loads
     the file's symbols, nor the raw debug file for them (find-debuginfo.c
     serves the stand-in once the table is there), whose compressed
     sections libdw would inflate again.  */
  struct build b = { mod, file };
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
