/* An opened ELF file that one or more processes map, shared between their
 * Dwfls.  Keyed in the resolver's cache by build-id (or path and inode when
 * the file has none), so libc is opened, checked and symbolized once per
 * run, not once per process.  */
#pragma once

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/build-id.h"
#include "core/event.h"
#include "core/resolve/symbol-table.h"

struct st_file_shared;

/* How a mapping's file was found: the steps of the resolver chain.  */
enum st_found_by {
  ST_FOUND_HOST_PATH,
  ST_FOUND_VDSO,
  ST_FOUND_NS_HELPER,       /* opened in the process's mount namespace */
  ST_FOUND_CONTAINER,       /* in the container's storage on the host */
  ST_FOUND_DEBUGINFOD,      /* the executable, by build-id, from a server */
  ST_FOUND_SYSROOT,         /* under --sysroot, the recording machine's tree */
  ST_FOUND_SEARCH_PATH,     /* by its name in a --search-path directory */
  ST_FOUND_N
};

const char *st_found_by_name (enum st_found_by how);

/* Whether a module's Dwarf opens, and has a .debug_frame.  */
enum st_dwarf_frame {
  ST_DWARF_NOT_ASKED = -1,
  ST_DWARF_NONE,            /* it does not open */
  ST_DWARF_WITHOUT_FRAME,
  ST_DWARF_WITH_FRAME,
};

struct st_elf_file {
  unsigned refs;
  int fd;                   /* -1 for in-memory images */
  Elf *elf;                 /* our reference; Dwfls get elf_begin() dups */
  void *image;              /* in-memory copy (the vdso), or NULL */
  Elf *hidden_for_libdwfl;  /* with .gnu_debugdata hidden, made once, or NULL */
  char *path;               /* where it was found */
  uint8_t build_id[ST_BUILD_ID_MAX];
  uint8_t build_id_size;
  char build_id_hex[2 * ST_BUILD_ID_MAX + 1];
  enum st_found_by found_by;
  pid_t ns_pid;             /* ST_FOUND_NS_HELPER: whose namespace has it */
  struct st_symtab *symtab; /* this thread's view, made on first use */
  /* The tables every thread shares for this file (file-shared.h), or
     NULL: then SYMTAB owns its table.  */
  struct st_file_shared *shared;
  /* libdwfl's answer for this file's separate debug file, found once and
     served (a dup) to every later process that maps the file, with its
     compressed sections already inflated (find-debuginfo.c).  */
  bool symtab_building;     /* libdwfl's requests now are for symtab */
  /* Its .gnu_debugdata inflates past its bound (inflate-bounds.h):
     libdwfl gets it hidden.  (Compressed sections past theirs are hidden
     in ELF itself: resolver.c.)  */
  bool minidebuginfo_checked, hide_minidebuginfo;
  bool debug_searched;
  bool debug_inflate_tried;
  bool debug_has_frame;     /* the debug file has a .debug_frame */
  int debug_stand_in_fd;    /* st_elf_dwarf_stand_in of it, -2: not made */
  int debug_fd;             /* -1: none */
  char *debug_path;
  /* The dwz file that the Dwarf of this file's modules names
     (.gnu_debugaltlink), found once and served alike.  */
  bool alt_searched;
  int alt_fd;               /* -1: none */
  char *alt_path;
  /* What libdwfl finds of the Dwarf of this file's modules: like the
     debug file it follows, one answer per file and thread
     (core/unwind/unwind-rows.c).  */
  enum st_dwarf_frame dwarf_frame;
  /* When set, the last reference calls GONE (F, GONE_ARG) instead of
     freeing F: its owner frees it (st_elf_file_free) when nothing can
     name it any more (resolve/resolver.h: st_resolver_park).  */
  void (*gone) (struct st_elf_file *f, void *arg);
  void *gone_arg;
};

/* The Elf libdwfl gets for F (its find_elf callback; libdwfl ends it):
   a clone of F's, or when F's MiniDebugInfo is past its bound, one in
   which it is hidden; NULL when that cannot be made (no file rather than
   that one).  */
Elf *st_elf_file_for_libdwfl (struct st_elf_file *f);
/* Before libdwfl reads F's symbols: whether its MiniDebugInfo inflates
   within bounds (once; it is inflated to tell).  */
void st_elf_file_check_minidebuginfo (struct st_elf_file *f);

/* Takes ownership of FD (or IMAGE) and ELF.  */
struct st_elf_file *st_elf_file_new (int fd, void *image, Elf *elf, const char *path,
                                     enum st_found_by found_by);
struct st_elf_file *st_elf_file_ref (struct st_elf_file *f);
void st_elf_file_unref (struct st_elf_file *f);
/* Frees F, whatever its references: for the owner a GONE hook told.  */
void st_elf_file_free (struct st_elf_file *f);

/* The load bias of a mapping of F that starts at START with file offset
   PGOFF, EXECUTABLE (PROT_EXEC) or not: what to add to the file's addresses
   to get the process's, from the segment that backs the mapping (its file
   range, its flags, its address modulo the page).  Also the range [*LOW,
   *HIGH) the whole file then covers.  Returns false when F has no loadable
   segments.  */
bool st_elf_file_mapping_bias (const struct st_elf_file *f, uint64_t start, uint64_t pgoff,
                               bool executable, uint64_t *bias, uint64_t *low, uint64_t *high);

/* A copy of the ELF file FD in memory (a memfd) with its compressed
   sections inflated, for libdw to map again and again without inflating
   them each time; -1 when FD has no compressed section or the copy cannot
   be made.  FD stays open.  */
int st_elf_inflated_copy (int fd);

/* A small ELF file (a memfd) with the ELF header and program headers of
   the debug file FD and one tiny DWARF section: libdw opens a Dwarf from it
   as from FD, with no .debug_frame and nothing else to read, and costs a
   page to map.  -1 when it cannot be made.  */
int st_elf_dwarf_stand_in (int fd);

/* Reads the GNU build-id note of ELF into OUT.  Returns its size, or 0.  */
size_t st_elf_read_build_id (Elf *elf, uint8_t out[ST_BUILD_ID_MAX]);
/* Whether the ELF file FD (begun as untrusted) has the build-id ID, N
   bytes (N > 0).  */
bool st_elf_fd_has_build_id (int fd, const uint8_t *id, size_t n);

