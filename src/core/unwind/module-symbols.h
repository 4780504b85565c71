/* The symbols of a module that a process table reported to libdwfl: its
 * file's sorted symbol table (core/resolve/symbol-table.h), built on first
 * use and kept with the file, so that every process mapping it shares one.
 * The unwinder (dwfl-unwind.c) and the symbolizer both ask, so it sits
 * below them: neither includes the other.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct st_elf_file;
struct st_symtab;

/* The symbol table of FILE, which MOD (a module of a Dwfl) stands for.  */
const struct st_symtab *st_module_symtab (Dwfl_Module *mod, struct st_elf_file *file);

/* True when LOOKUP lies in the function at its module's ELF entry point
   (_start).  Some entry points (ld.so's) have no CFI to say they are the
   outermost frame; reaching one is still the end of the stack.  MOD's
   userdata is its struct st_mapping (core/resolve/mapping.h).  */
bool st_module_in_entry_function (Dwfl_Module *mod, uint64_t lookup);

/* True when LOOKUP lies in a Go function past which Go's own traceback
   does not go (st_gopclntab_is_outermost), in a module named from its
   .gopclntab.  */
bool st_module_is_go_outermost (Dwfl_Module *mod, uint64_t lookup);
