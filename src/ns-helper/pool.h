/* The setns way's pool of namespace workers, on the opener's side.
 *
 * Forking a worker per job (setns, becoming the client, the sandbox it
 * inherits) made the setns way cost a millisecond a request.  A pooled
 * worker enters a mount namespace once and then serves every job for that
 * namespace with the very credentials, capabilities, Landlock ruleset and
 * seccomp filter a worker of one job has (broker.h, st_broker_spawn).
 *
 * Isolation: the pool lives in one connection's opener, whose client's
 * credentials were taken from the kernel before anything was read; its
 * workers are that client's and no other's (another client has another
 * connection, opener, broker and pool).  A worker is keyed by the mount
 * namespace (and the user namespace it entered first), and is bound to the
 * pinned process it was started for: it exits when that process exits, so
 * that it never holds on to a namespace that is going away, and is then
 * replaced.  While it runs it keeps its namespace alive, so that the
 * namespace's inode number, the key, cannot be taken by another.
 *
 * Bounds: ST_POOL_MAX workers per connection (the least recently used one
 * goes first), so at most ST_POOL_MAX times a user's connection slots
 * (slots.h) per user; each exits after ST_BROKER_WORKER_IDLE_S seconds
 * without a job, and with the opener.  */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns-helper/broker.h"
#include "ns-helper/pin.h"

#define ST_POOL_MAX 3   /* + opener, parser, resolver, broker, one one-job worker and one worker being let go: TasksMax=10 */

struct st_pool_key {
  dev_t dev, user_dev;      /* the mount and user namespaces */
  ino_t ino, user_ino;      /* (user_ino 0: none entered first) */
};

struct st_pool_worker {
  int sock;                 /* the opener's end; -1: a free entry */
  struct st_pool_key key;   /* the namespaces it entered */
  uint64_t last_use;
};

/* A namespace whose worker hung (a job not answered in
   ST_BROKER_JOB_TIMEOUT_S: a file system that does not answer): no worker
   is started there again until UNTIL (CLOCK_MONOTONIC seconds), so that
   each request does not wait as long and leave one more stuck worker.  */
#define ST_POOL_HUNG_S 60

struct st_pool {
  struct st_pool_worker w[ST_POOL_MAX];
  struct {
    struct st_pool_key key;
    long long until;        /* 0: a free entry */
  } hung[ST_POOL_MAX];
  uint64_t clock;
  unsigned long started, reused;
};

void st_pool_init (struct st_pool *pool);

/* st_broker_open's job for the pinned process PIN's mount namespace
   (entering USERNS_FD first unless it is -1), in a worker of the pool
   started through broker B when there is none for it yet.  Returns 0 or
   -errno: -ETIMEDOUT when the worker did not answer in time (it is given
   up and kills itself), -ETIME when one did so in this namespace less than
   ST_POOL_HUNG_S ago (nothing is tried).  */
int st_pool_open (struct st_pool *pool, struct st_broker *b, const struct st_pin *pin,
                  int userns_fd, const char *const *paths, size_t n, int *fds, int *errs);
