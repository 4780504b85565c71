/* Where is this mapping's ELF file?  One interface for every way of finding
 * it: a mapping goes in, an opened and verified st_elf_file comes out, or the
 * reason why not.  The steps are tried in order (today the host path, the
 * vdso, the namespace helper (the file in the process's own mount
 * namespace), and last debuginfod by build-id; container storage plugs in
 * before debuginfod),
 * and a file is accepted only when it is the one that was mapped: its
 * build-id, when the recording knew one, or else its inode, must match.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/resolve/elf-file.h"
#include "core/resolve/mapping.h"

struct st_resolver;

struct st_resolver *st_resolver_new (void);
void st_resolver_free (struct st_resolver *r);
/* What the resolver asks besides the host's own paths, each borrowed (it
   must outlive the resolver) and each NULL when that way is off.  */
struct st_debuginfod;
struct st_shared_files;
struct st_ns_client;
struct st_containers;
struct st_sysroot;
struct st_resolver_ways {
  /* Looked under first: the sysroot and search path, the files of the
     machine the recording came from.  */
  const struct st_sysroot *sysroot;
  /* After the host path fails: the namespace helper.  */
  struct st_ns_client *ns_client;
  /* After the helper: the host directories of the process's container
     (or, for a process that is gone, every container and image podman
     stores).  */
  struct st_containers *containers;
  /* The last step: the executable by build-id.  */
  struct st_debuginfod *debuginfod;
  /* The tables shared with the other threads' resolvers: each file found
     is given its entry there.  */
  struct st_shared_files *shared_files;
};
void st_resolver_set_ways (struct st_resolver *r, const struct st_resolver_ways *ways);
/* Calls FN for each file found under the sysroot or the search path and
   accepted by its name alone, the recording having no build-id for it.  */
void st_resolver_foreach_by_name (const struct st_resolver *r,
                                  void (*fn) (const char *path, void *arg), void *arg);

/* Modules found only in a removed container's own layer, or that were
   there and are gone.  */
unsigned st_resolver_upper_only (const struct st_resolver *r);
/* How many files no process maps any more a resolver keeps open (with
   their tables), the ones used last: a program that runs again and again
   (a compiler in a build) finds its files ready, while a run that meets
   ever new binaries (-a for days; a user running distinct copies of a
   program to bloat root's profiler) holds the files of the processes alive
   and this many more, not every file it ever met.  */
#define ST_RESOLVER_IDLE_KEPT 64
/* Files closed, with their tables, because no process mapped them any
   more and ST_RESOLVER_IDLE_KEPT others had been used since.  */
uint64_t st_resolver_let_go (const struct st_resolver *r);
/* How many answers "no file" a resolver keeps, the ones asked for last;
   older ones are forgotten, and looked for again if asked again.  Each is
   a path and a reason (about half a kilobyte): kept for every path ever
   missing, a user whose processes map ever new paths gone before they are
   resolved (copies of a program run and deleted, for days of -a) would
   grow root's profiler without bound.  */
#define ST_RESOLVER_MISSING_KEPT 256
/* Answers "no file" forgotten so far (st_resolver_foreach_answer no
   longer sees them).  */
uint64_t st_resolver_missing_forgotten (const struct st_resolver *r);
/* Adds to FOUND (by enum st_found_by) and *BY_NAME the paths whose
   answers went with the files let go (st_resolver_foreach_answer and
   st_resolver_foreach_by_name no longer see them; a path let go and found
   again counts twice).  */
void st_resolver_let_go_found (const struct st_resolver *r, unsigned found[ST_FOUND_N],
                               unsigned *by_name);
/* For an owner whose results outlive the next resolve (the unwinding
   threads of --jobs, whose samples are written later by another thread):
   a file whose last reference goes while STAMP is set (let go, rewritten
   in place, its last process gone) is kept, with the symbol names and
   build-id its frames point to, until st_resolver_release_parked is told
   that every result before STAMP is written (DONE >= STAMP).  */
void st_resolver_park (struct st_resolver *r, uint64_t stamp);
void st_resolver_release_parked (struct st_resolver *r, uint64_t done);

/* What resolving a mapping says besides its file.  */
struct st_container;
struct st_resolution {
  /* No file: a static or resolver-owned reason, valid until the next
     st_resolver_resolve (which may forget the answer: MISSING_KEPT).  */
  const char *why_not;
  /* The process was in no container when detected (it was gone before it
     was seen), and the file was found in a stored container's own layer:
     the process ran in that container.  The resolver changes no container
     table; labelling the process (st_containers_adopt) is the caller's.
     NULL otherwise, and for answers from the cache.  */
  const struct st_container *ran_in;
};

/* Returns a new reference to the mapping's file, or NULL with
   RES->why_not set; RES->ran_in as above.  Answers are cached: a file is
   looked for once per run.  */
struct st_elf_file *st_resolver_resolve (struct st_resolver *r,
                                         const struct st_mapping_request *req,
                                         struct st_resolution *res);

/* Before resolving the mappings REQS[0..N) of one process: those the
   namespace helper will be asked for (the process is in another mount
   namespace, and no step before the helper's finds them) are asked for
   at once (st_ns_client_prefetch), so that their requests overlap.
   Resolving them then finds the helper's answers ready.  */
void st_resolver_prefetch (struct st_resolver *r, const struct st_mapping_request *reqs,
                           size_t n);
/* Calls FN for each file looked for: FOUND_BY is the step that found it
   (enum st_found_by), or -1 with WHY saying why it was not found.  */
void st_resolver_foreach_answer (const struct st_resolver *r,
                                 void (*fn) (const char *path, int found_by, const char *why,
                                             void *arg),
                                 void *arg);
