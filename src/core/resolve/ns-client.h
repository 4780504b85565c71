/* The namespace helper's client: asks eu-stacktrace-ns-helper (src/ns-helper/)
 * for the file a process in another mount namespace maps, or for its
 * separate debuginfo, when the host path is wrong or missing.
 *
 * --ns-helper picks the helper: "spawn" starts one over a socketpair (it
 * has the privileges eu-stacktrace has), a socket path connects to a
 * running one (the system service, which has privileges of its own),
 * "auto" takes the system socket when it exists and spawns otherwise, and
 * "none" asks no helper.  A spawned helper that dies is started again (a
 * few times); without a helper the run carries on, and the files it could
 * not open are reported like any other missing file.
 *
 * Answers are cached per (mount namespace, path, build-id or inode):
 * the helper is never asked twice for the same file, and a file it found
 * is shared (dup) by every unwinder.
 *
 * One client serves all the unwinding threads of a run (--jobs), behind
 * one lock: requests are rare (once per distinct file), so the lock costs
 * nothing, while a connection per thread would ask N helpers the same
 * questions, as each unwinder resolves every file its samples meet.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "basic/why.h"
#include "core/resolve/mapping.h"

struct st_ns_client;

/* Is MODE a valid --ns-helper argument?  */
bool st_ns_client_mode_valid (const char *mode);

/* A client for MODE (connected at its first request) in *OUT: 0, with
   *OUT NULL for "none", or -ENOMEM.  */
int st_ns_client_new (const char *mode, struct st_ns_client **out);
/* Closes the connection and waits for a spawned helper.  */
void st_ns_client_free (struct st_ns_client *c);

/* Opens the file REQ describes as its process sees it.  Returns a new
   descriptor (read-only, a regular ELF file with REQ's build-id when it
   has one), or -errno with WHY (may be NULL).  *WAY names how the helper
   opened it.  */
int st_ns_client_open (struct st_ns_client *c, const struct st_mapping_request *req,
                       const char **way, struct st_why *why);

/* Opens the separate debuginfo of PATH (with BUILD_ID, whose .gnu_debuglink
   name is DEBUGLINK or NULL) in the mount namespace of process PID.
   Returns a descriptor, with *FOUND_PATH (malloc'd) where it was, or
   -errno with WHY.  */
int st_ns_client_open_debuginfo (struct st_ns_client *c, pid_t pid, const char *path,
                                 const uint8_t *build_id, size_t build_id_size,
                                 const char *debuglink, char **found_path, const char **way,
                                 struct st_why *why);

/* Answers a client keeps, each with its descriptor: the ones asked for
   last (and those of files the helper failed on, never asked again).  An
   answer forgotten is asked of the helper again when needed.  */
#define ST_NS_CACHE_KEPT 256

/* At most this many files of one process are asked for at once.  */
#define ST_NS_PREFETCH_MAX 16

/* Whether st_ns_client_prefetch would send anything: as root, to a
   helper spawned or to be spawned (not a service).  Cheap: for the
   caller to check before it looks for what to ask.  */
bool st_ns_client_batches (struct st_ns_client *c);

/* Asks the helper at once for the files REQS[0..N) map (one process's,
   which the host does not have), as root and from a spawned helper only:
   their requests overlap, where one at a time each would wait for the
   helper's processes to wake.  What is found is cached for
   st_ns_client_open; anything else is left for it to ask again.  */
void st_ns_client_prefetch (struct st_ns_client *c, const struct st_mapping_request *reqs,
                            size_t n);

/* Spawns the helper now, with no request: its start, a few processes set
   up in 10-70 ms, then overlaps with the run instead of making the first
   request wait.  For a run that will likely need it (live, as root).  A
   service (a socket) is not connected to ahead: it hangs up on an idle
   connection.  A failure is left for the first request to meet and
   report.  */
void st_ns_client_prepare (struct st_ns_client *c);

/* The --stats lines: requests, ways, round trips, restarts.  */
void st_ns_client_print_summary (struct st_ns_client *c, FILE *out);
