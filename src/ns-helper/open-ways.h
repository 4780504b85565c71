/* The ways the helper opens a process's file, tried in order, each checked
 * (check.h) before its descriptor is handed out:
 *
 *   map_files  /proc/PID/map_files/START-END: the very file mapped there,
 *              even deleted or replaced since (CAP_CHECKPOINT_RESTORE, and
 *              only while the process runs), opened here, in the opener;
 *              only for a client at ST_AUTH_MAPPED (auth.h)
 *   openat2    the path under the process's root directory, with
 *              RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: absolute symlinks,
 *              `..' and /proc magic links all stay inside its root (also
 *              after it exits: the pinned namespace keeps its mounts); in
 *              the resolver, with the client's credentials (broker.h)
 *   setns      the path in a worker that entered its mount namespace
 *              (broker.h), for when its root cannot be reached from here;
 *              the worker opens with the client's credentials too; one
 *              worker per namespace serves every request while the
 *              process runs (pool.h)
 *
 * A request may name the ways it allows (the tests use this to try each).  */
#pragma once

#include <stdbool.h>

#include "ns-helper/auth.h"
#include "ns-helper/broker.h"
#include "ns-helper/check.h"
#include "ns-helper/pin.h"
#include "ns-helper/pool.h"
#include "ns-helper/protocol.h"

struct st_ways {
  struct st_broker *resolver;
  struct st_broker *broker;
  struct st_pool *pool;     /* the broker's workers, one per namespace */
  /* The broker may enter any mount namespace (CAP_SYS_ADMIN); otherwise
     it enters the user namespace that owns it first.  */
  bool privileged;
  /* A client that is not root, of a privileged helper: its uid, for the
     user namespaces it owns; -1 otherwise.  */
  long client_uid;
  /* The same client, whose right to map_files is checked again after the
     open (auth.h, st_auth_still_mapped); NULL otherwise.  */
  const struct st_peer *limited_peer;
  /* The opener's own /proc/self/fd, for map_files's reopens (check.h).  */
  int fd_dir;
};

struct st_found {
  struct st_checked file;
  enum st_nsh_way way;
  char path[ST_NSH_PATH_MAX];     /* the path it has in the process's root */
};

/* The file REQ->path that the pinned process maps.  Returns 0, or -errno
   with WHY saying what each way met.  */
int st_open_mapping (const struct st_ways *ways, const struct st_pin *pin, int level,
                     const struct st_nsh_request *req, struct st_found *found, char *why,
                     size_t why_size);

/* The separate debuginfo of REQ->path (with REQ->build_id), looked for in
   the process's root (debuginfo.h).  */
int st_open_debuginfo (const struct st_ways *ways, const struct st_pin *pin,
                       const struct st_nsh_request *req, struct st_found *found, char *why,
                       size_t why_size);
