/* A mapping of a process's file: what the recording said of it (the
 * request the resolver answers) and, once resolved, the file found for it.
 * A libdwfl module's userdata is its struct st_mapping, which
 * find-debuginfo.c reads; the process table (core/unwind/process.h) keeps
 * them.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/event.h"

struct st_elf_file;
struct st_debuginfo_finder;

struct st_mapping_request {
  pid_t pid;
  const char *path;              /* as the process sees it */
  uint64_t start, end, pgoff;
  bool has_dev_ino;
  uint32_t maj, min;
  uint64_t ino;
  const uint8_t *build_id;       /* expected, when the recording knew it */
  size_t build_id_size;
};

struct st_mapping {
  uint64_t start, end, pgoff;
  const char *path;           /* counted (process.c: counted_hold): valid as long as the
                                 mapping, and parked beyond it for results at -j N */
  bool has_dev_ino;
  uint32_t maj, min;
  uint64_t ino;
  uint8_t build_id[ST_BUILD_ID_MAX];
  uint8_t build_id_size;
  /* Filled in when the mapping is first reported to a Dwfl.  */
  bool resolved;
  struct st_elf_file *file;   /* NULL: not found (--stats says why) */
  uint64_t bias;              /* file address + bias = process address */
  bool has_bias;              /* bias is known: the mapping can be symbolized */
  bool reported;              /* a module of the current Dwfl points here */
  bool offered;               /* the current Dwfl was offered it (a module, or none) */
  /* Its module's Dwarf in the current Dwfl (core/resolve/dwarf-alt.h):
     given the stand-in dwz file when libdwfl asked for one, and settled
     before its DIEs are first read.  */
  bool alt_given, alt_settled;
  const struct st_debuginfo_finder *finder;  /* for the module's find_debuginfo */
  /* The process whose mapping it is: live, the copies of its debug files
     are charged to its user (find-debuginfo.c).  */
  pid_t pid;
};
