/* Where is a module's separate debug file?  libdwfl asks (its
 * find_debuginfo callback) when it needs DWARF: the .debug_frame CFI of a
 * module without .eh_frame, --inline, or the symbol table of a stripped
 * file.  Like the resolver, a chain of steps tried in order, the first
 * file found wins:
 *
 *   the namespace helper: for a file the helper opened, the debug file as
 *       the process's own mount namespace has it (src/ns-helper/debuginfo.h
 *       lists the places)
 *   host: build-id and debuglink paths under /usr/lib/debug and next to
 *       the file, as dwfl_standard_find_debuginfo has them, but each opened
 *       as untrusted and checked (core/resolve/debuginfo-host.h)
 *   debuginfod: by build-id, only for a module whose file lacks what the
 *       debug file would give: CFI, or with --debuginfod-symbols a symbol
 *       table  */
#pragma once

#include <elfutils/libdwfl.h>

struct st_debuginfod;
struct st_dwarf_alt_stand_in;
struct st_ns_client;

/* What the steps may use.  One per unwinder; each mapping that a module
   stands for points at its unwinder's (struct st_mapping.finder).  */
struct st_debuginfo_finder {
  struct st_debuginfod *debuginfod;   /* NULL: off */
  struct st_ns_client *ns_client;     /* NULL: off */
  /* A module's Dwarf serves the unwinder's CFI only (no inline frames): a
     debug file without .debug_frame is of no more use once the file's
     symbol table is built.  */
  bool cfi_only;
  /* The processes run now (-p, -a, a command): a copy of a debug file is
     charged to the user of the process that maps its module (one owner for
     all processes gone by then), else to the file's owner
     (basic/frozen-copy.h).  */
  bool live;
  /* Given to each module's Dwarf that has a dwz file to look for, before
     the steps look (dwarf-alt.h says why); NULL: none.  */
  struct st_dwarf_alt_stand_in *alt_stand_in;
};

/* The Dwfl_Callbacks.find_debuginfo of every Dwfl: the module's userdata
   is its struct st_mapping.  */
int st_find_debuginfo (Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                       const char *file_name, const char *debuglink_file,
                       GElf_Word debuglink_crc, char **debuginfo_file_name);

/* FD, a debug or dwz file a step found (NAME for messages), as libdwfl may
   have it, or -1 (FD closed, the refusal recorded for --stats): a file
   someone other than our user may write (any file, with ALWAYS_COPY: one
   from another mount namespace) is replaced by a sealed copy
   (basic/frozen-copy.h: libelf reads the fd again after our checks), and
   what is served is checked: an ELF file, its header's counts
   (basic/elf-begin.h) and what its compressed sections inflate to
   (inflate-bounds.h) within bounds.  A copy made here is charged to OWNER
   (st_freeze's).  Close what it returns with st_frozen_close.  */
int st_debug_file_admit (int fd, const char *name, bool always_copy, uint64_t owner);
