/* The process table: what each sampled process had mapped, and one cached
 * Dwfl per process.
 *
 * Only executable file mappings matter to the unwinder.  Each becomes a
 * libdwfl module whose file comes from the resolver; the Dwfl is attached
 * once (dwfl_attach_state) and reused for every sample of the process.  New
 * mappings are reported incrementally; a mapping that goes away, or an exec,
 * rebuilds the Dwfl; an exit frees it.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/resolve/elf-file.h"
#include "core/event.h"
#include "core/resolve/find-debuginfo.h"
#include "core/resolve/jit-map.h"
#include "core/resolve/mapping.h"
#include "core/resolve/resolver.h"

struct st_module_spans;
struct st_unwind_slot;

struct st_process_table;
struct st_process {
  pid_t pid;
  struct st_process_table *table;   /* the table it is in */
  /* The bytes of the paths its mappings name (NUL included), at most
     ST_PROCESS_PATH_BYTES: see st_process_table_mmap.  */
  size_t path_bytes;
  const char *comm;           /* comm_buf, or NULL: not named yet */
  char comm_buf[ST_COMM_SIZE];
  struct st_mapping **maps;   /* executable file mappings, sorted by start */
  size_t n_maps, cap_maps;
  Dwfl *dwfl;
  struct st_module_spans *spans;  /* the Dwfl's modules' ranges (NULL: none yet) */
  size_t n_modules;           /* the Dwfl's, at most ST_PROCESS_MAX_MODULES */
  bool dwfl_attached;
  bool needs_report;          /* new mappings to report */
  bool jit_dumps_refused;     /* it mapped jitdumps past those its map reads */
  struct st_unwind_slot *slot;/* what the Dwfl callbacks read from */
  struct st_jit_map *jit;     /* names of its JIT code, read on demand */
  /* Set by st_process_dwfl when resolving a file told which container the
     process, gone before it was detected, ran in (struct st_resolution);
     the unwinder labels it and clears this.  */
  const struct st_container *ran_in;
};

struct st_process_table;

/* The bytes of paths one process's executable mappings may name.  A user's
   process may hold 65,530 mappings (vm.max_map_count) under distinct paths
   of 4 KiB, a quarter of a gigabyte per unwinding thread of root's
   profiler for a few megabytes of the user's kernel memory; real programs
   name tens of kilobytes (a browser: 300 files of 60 bytes).  Mappings
   beyond it are not tracked (their frames are not symbolized), and a
   warning says so once.  */
#define ST_PROCESS_PATH_BYTES (4u << 20)

/* The modules of one process's Dwfl.  libdwfl 0.188 looks through all of
   a Dwfl's modules for each one reported (dwfl_report_module), so a Dwfl
   of M modules costs M^2/2 steps to make: a user's process mapping a
   one-page ELF file 65,530 times, each a module, took 9 s per rebuild
   (measured with libdw alone), and a mapping over one of them makes the
   next sample rebuild.  Real programs have hundreds (a browser: 300).
   Mappings past this get no module (their frames are not symbolized), and
   --stats counts them.  */
#define ST_PROCESS_MAX_MODULES 2048

/* 0 or -ENOMEM.  */
int st_process_table_new (struct st_resolver *resolver, struct st_process_table **out);
/* Where modules' find_debuginfo looks (NULL: the host only).  F must
   outlive the table.  */
void st_process_table_set_debuginfo_finder (struct st_process_table *t,
                                            const struct st_debuginfo_finder *f);
void st_process_table_free (struct st_process_table *t);

/* For a table whose results are written later, by another thread: a
   mapping's path that nothing holds any more, and the JIT names of a
   process gone, are kept until
   st_process_table_release_parked says every result before STAMP is
   written (DONE >= STAMP), as the resolver keeps files (resolver.h:
   st_resolver_park).  Without it a path goes with its last mapping.  */
void st_process_table_park (struct st_process_table *t, uint64_t stamp);
void st_process_table_release_parked (struct st_process_table *t, uint64_t done);
/* Mappings not kept: their process was over ST_PROCESS_PATH_BYTES.  */
uint64_t st_process_table_mappings_refused (const struct st_process_table *t);
/* Mappings given no module: their process's Dwfl had ST_PROCESS_MAX_MODULES.  */
uint64_t st_process_table_modules_refused (const struct st_process_table *t);
/* Processes that mapped more jitdump files than their JIT map reads.  */
uint64_t st_process_table_jit_dumps_refused (const struct st_process_table *t);
/* The users' budgets for the JIT files its processes' maps read (NULL:
   none, the default); it must outlive the table, whose maps give back to
   it as they go.  */
void st_process_table_set_jit_budget (struct st_process_table *t, struct st_jit_budget *b);
/* The distinct paths held, and those parked.  */
size_t st_process_table_counted_held (const struct st_process_table *t);
/* The JIT maps whose names are parked (tests).  */
size_t st_process_table_jit_names_parked (const struct st_process_table *t);

/* Event handlers.  */
int st_process_table_mmap (struct st_process_table *t, const struct st_mmap_event *m);
int st_process_table_comm (struct st_process_table *t, const struct st_comm_event *c);
int st_process_table_fork (struct st_process_table *t, const struct st_task_event *f);
int st_process_table_exit (struct st_process_table *t, const struct st_task_event *e);
/* A build-id the recording knew for FILENAME (pid -1: any process).  */
int st_process_table_build_id (struct st_process_table *t, const struct st_build_id_event *b);

/* The process, created empty when unknown.  NULL only on allocation
   failure.  */
struct st_process *st_process_table_get (struct st_process_table *t, pid_t pid);
/* The name of a thread (its last COMM), or of its process, or NULL.  */
const char *st_process_table_comm_of (struct st_process_table *t, pid_t pid, pid_t tid);

/* Makes P's Dwfl current with its mappings.  Returns the Dwfl, or NULL when
   no module could be reported (no file of the process was found).  */
Dwfl *st_process_dwfl (struct st_process_table *t, struct st_process *p);
/* The callbacks of those Dwfls: a module's userdata is its struct
   st_mapping, which names the file and its finder.  */
const Dwfl_Callbacks *st_process_dwfl_callbacks (void);

/* The executable mapping containing ADDR, or NULL.  */
const struct st_mapping *st_process_find_mapping (const struct st_process *p, uint64_t addr);

size_t st_process_table_count (const struct st_process_table *t);
