/* Per-module symbol tables, built once and searched by binary search.
 *
 * dwfl_module_addrname/addrsym scan the symbol table linearly on every call
 * (~130 us per frame against libc); a sorted table answers in ~50 ns.
 * Addresses are in the ELF file's own address space (before load bias), so
 * one table serves every process that maps the file, and every unwinding
 * thread.  Names are copied: the Elf they came from may belong to a Dwfl
 * that is freed before we are.  Names are demangled (demangle.h) once per
 * symbol and thread, on its first lookup.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/* A table's symbols and names: immutable once built, so that every
   unwinding thread may read one table of a file (resolve/file-shared.h).  */
struct st_symtab_data;
/* One thread's view of a table: its lookups' memo and demangled names.  */
struct st_symtab;

/* Builds the table of MOD's functions (from .symtab, the separate debug
   file's .symtab, or .dynsym, whichever libdwfl finds).  BIAS is MOD's main
   file load bias.  Returns NULL on allocation failure only: a module without
   symbols gets an empty table.  */
struct st_symtab_data *st_symtab_data_build (Dwfl_Module *mod, Dwarf_Addr bias);
void st_symtab_data_free (struct st_symtab_data *data);
/* A view of DATA, which must outlive it; NULL without memory.  */
struct st_symtab *st_symtab_view (const struct st_symtab_data *data);
/* A view that owns DATA (freed here when no view can be made).  */
struct st_symtab *st_symtab_own (struct st_symtab_data *data);
/* st_symtab_data_build and a view that owns what it built.  */
struct st_symtab *st_symtab_build (Dwfl_Module *mod, Dwarf_Addr bias);
void st_symtab_free (struct st_symtab *tab);

/* The name of the function containing ELF_ADDR, as shown (demangled in
   st_demangle_style ()), and the offset into it; or NULL.  RAW (may be
   NULL) receives the name in the file (mangled), which is the shown one
   when demangling changed nothing.  */
const char *st_symtab_lookup (const struct st_symtab *tab, uint64_t elf_addr,
                              uint64_t *offset, const char **raw);
/* True when the table's file is a Go program (it has a .gopclntab).  */
bool st_symtab_is_go (const struct st_symtab *tab);
size_t st_symtab_size (const struct st_symtab *tab);
