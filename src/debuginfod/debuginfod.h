/* The debuginfod client: separate debuginfo (for its .debug_frame and its
 * symbol table) and executables, by build-id, from the servers of
 * DEBUGINFOD_URLS or --debuginfod=URLS, through libdebuginfod 0.188.
 *
 * Two callers: the resolver chain's last step asks for the executable of
 * a mapping whose file cannot be found, and the find_debuginfo chain's last
 * step asks for the debuginfo of a module that lacks CFI (or, with
 * --debuginfod-symbols, a symbol table).  Everything is bounded: each
 * build-id is asked for once per run (answers, good or bad, are kept), a
 * request that gets no answer within the timeout is abandoned and the
 * servers are not asked again, and once the run-wide budget is spent no
 * more requests are made.  The summary says what was fetched and what
 * failed, by reason.
 *
 * One client serves every unwinding thread, under a lock: a build-id is
 * fetched once whichever thread needs it first, and the budget is the
 * run's.  Nothing of libdw is shared: callers get a file descriptor of
 * their own.  */
#pragma once

#include <signal.h>

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/why.h"

struct st_debuginfod_options {
  const char *urls;        /* servers, separated by spaces, as DEBUGINFOD_URLS */
  unsigned timeout;        /* seconds a request may wait for an answer */
  unsigned budget;         /* seconds of requests for the whole run */
  bool symbols;            /* also fetch debuginfo for the symbol table of
                              modules that have CFI but are stripped */
  bool progress;           /* show progress on standard error (a terminal) */
  /* When *STOP_NOW becomes non-zero (the run must end at once), a request
     in flight is cancelled within a second and no new one is made.  */
  volatile sig_atomic_t *stop_now;
};

struct st_debuginfod;

/* Call it before any thread starts (it prepares the environment, see
   env.c).  0, -ENOMEM, or -ENOENT when libdebuginfod cannot be loaded
   (said on stderr).  */
int st_debuginfod_new (const struct st_debuginfod_options *opts, struct st_debuginfod **out);
void st_debuginfod_free (struct st_debuginfod *d);

/* What a module's separate debuginfo would give it.  */
enum {
  ST_DEBUGINFOD_WANT_CFI = 1,      /* the file has no .eh_frame, no .debug_frame */
  ST_DEBUGINFOD_WANT_SYMTAB = 2,   /* the file has no .symtab (stripped) */
};

/* The ST_DEBUGINFOD_WANT_* flags for ELF, a module's own file: 0 when its
   debuginfo is not worth a request (it has CFI, and symbols are either
   there or not asked for).  */
unsigned st_debuginfod_debuginfo_wanted (const struct st_debuginfod *d, Elf *elf);

/* The separate debuginfo of BUILD_ID, for MODULE (a name for messages and
   the summary), which wants WANT from it.  Returns a new read-only file
   descriptor, with *PATH (when PATH is not NULL) a malloc'ed copy of its
   path, or -errno with WHY (may be NULL) saying why not.  */
int st_debuginfod_find_debuginfo (struct st_debuginfod *d, const uint8_t *build_id,
                                  size_t build_id_size, const char *module, unsigned want,
                                  char **path, struct st_why *why);

/* The executable (or shared library) of BUILD_ID, for the mapping of
   MODULE.  Same conventions.  */
int st_debuginfod_find_executable (struct st_debuginfod *d, const uint8_t *build_id,
                                   size_t build_id_size, const char *module,
                                   struct st_why *why);

/* The debuginfod part of the --stats summary.  */
void st_debuginfod_print_summary (struct st_debuginfod *d, FILE *out);

/* libdwfl's own debuginfod use is switched off around a host lookup (a
   dwfl_standard_find_debuginfo call) by these two; see env.c.  */
void st_debuginfod_env_begin_host (void);
void st_debuginfod_env_end_host (void);
