/* The two processes that open a path the client named: each understands
 * one fixed binary job from the opener, "open these paths in this root (or
 * this mount namespace)", and sends back, for each path, a descriptor
 * reopened read-only with its own credentials, or an errno.
 *
 *   resolver  (ST_BROKER_IN_ROOT) openat2 with RESOLVE_IN_ROOT |
 *             RESOLVE_NO_MAGICLINKS under a process's root directory (a
 *             descriptor the opener pinned), in the resolver itself.
 *   broker    (ST_BROKER_SETNS) entering a mount namespace takes
 *             CAP_SYS_ADMIN (and CAP_SYS_CHROOT), the broadest capability
 *             there is; only this process keeps it.  Jobs run in workers
 *             it forks, single-threaded as joining a user namespace
 *             requires: unshare(CLONE_FS), setns, then openat2 under the
 *             namespace's root, so that symlinks and `..' stay inside.  A
 *             pooled worker (pool.h) does that once and serves the jobs of
 *             its namespace; a worker of one job serves a process that
 *             exited (its pinned namespace) and the test builds' probes.
 *
 * Both are forked by the opener before it drops its capabilities, and are
 * landlocked (landlock.h).  For a client that is not root, of a privileged
 * helper, the resolver runs with the client's uid, gid and groups and no
 * capability, and each worker takes them on after setns (or before, to
 * enter a user namespace the client owns): the kernel then judges every
 * directory on the way and the file itself (the read-only reopen) by the
 * client's permissions.  The opener checks what comes back (check.h):
 * regular, read-only, ELF, build-id.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ns-helper/sandbox.h"

#define ST_BROKER_MAX_PATHS 8
/* A pooled worker (pool.h) that has served no job for this long exits.  */
#define ST_BROKER_WORKER_IDLE_S 30
/* A job not answered in this long is given up by the opener (a process
   stuck on a hung file system: a FUSE daemon that never answers).  The
   worker that runs it is killed by its own timer (SIGALRM, which ends
   the killable wait of a FUSE request the daemon has not read; not the
   uninterruptible one after it read it) ST_BROKER_JOB_GRACE_S later:
   the broker may not signal a worker that became the client, and a timer
   of its own needs no permission.  */
#define ST_BROKER_JOB_TIMEOUT_S 10
#define ST_BROKER_JOB_GRACE_S 2

enum st_broker_kind {
  ST_BROKER_IN_ROOT,        /* the resolver */
  ST_BROKER_SETNS,          /* the setns broker */
};

struct st_broker {
  int sock;                 /* -1: not running */
  pid_t pid;
  enum st_broker_kind kind;
  uint64_t root_id;         /* the resolver: the root it keeps (job_header) */
};

/* Forks the process of KIND.  In the child, every descriptor but its end
   of the socket and stderr is closed, and the sandbox entered (sandbox.h)
   with CLIENT (NULL: the helper's own credentials); the child never
   returns.  */
int st_broker_start (struct st_broker *b, enum st_broker_kind kind,
                     const struct st_sandbox_client *client);

/* Opens each of PATHS (at most ST_BROKER_MAX_PATHS, each absolute) under
   the root directory FD (resolver) or inside the mount namespace FD
   (broker, entering the user namespace USERNS_FD first unless it is -1).
   FDS[i] gets a read-only descriptor of a regular file or -1, ERRS[i] 0 or
   an errno.  Returns 0, or -errno when the process could not do the job
   (then it is given up).  */
int st_broker_open (struct st_broker *b, int fd, int userns_fd, const char *const *paths,
                    size_t n, int *fds, int *errs);

/* st_broker_open in the resolver B, under ROOT_FD, the root of the pin
   ROOT_ID (pin.h): the resolver keeps the last root it was sent, so that
   the descriptor goes only when the pin changes.  */
int st_broker_open_in_root (struct st_broker *b, int root_fd, uint64_t root_id,
                            const char *const *paths, size_t n, int *fds, int *errs);

/* The setns broker forks a pooled worker (pool.h): it enters the mount
   namespace MNT_FD (the user namespace USERNS_FD first unless it is -1) as
   a worker of st_broker_open does, takes on the same credentials and
   sandbox, and then serves jobs on its own socket, *SOCK, the opener's
   end.  It exits when that socket is closed, when the process of PIDFD
   exits, or after ST_BROKER_WORKER_IDLE_S seconds without a job.  Returns
   0 or -errno.  */
int st_broker_spawn (struct st_broker *b, int mnt_fd, int userns_fd, int pidfd, int *sock);

/* st_broker_open's job, in the pooled worker on SOCK.  *GONE says that the
   worker will serve no more (it could not enter the namespace, or did not
   answer): the caller closes SOCK.  Returns 0, or -errno when it did not
   answer.  */
int st_broker_worker_open (int sock, const char *const *paths, size_t n, int *fds, int *errs,
                           bool *gone);

#ifdef ST_NSH_TEST_HOOKS
/* Test builds: makes the process (IN_WORKER: a worker of the broker) try
   the forbidden system call NAME (sandbox.h).  Returns 0 and *RESULT: the
   errno it failed with (0: it succeeded), or minus the signal that killed
   the worker; or -errno when the process itself is gone, with WHY.  */
int st_broker_try (struct st_broker *b, const char *name, bool in_worker, int *result,
                   char *why, size_t why_size);
#endif
