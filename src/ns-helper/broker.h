/* The setns way, in a process of its own.
 *
 * Entering a mount namespace takes CAP_SYS_ADMIN (and CAP_SYS_CHROOT), the
 * broadest capability there is; the helper's main process, which parses
 * what clients send, does not keep it.  The broker is forked before the
 * main process drops its capabilities, keeps only those that setns needs,
 * and understands one fixed binary message from the main process: "in the
 * mount namespace of this descriptor (entered through this user namespace
 * descriptor, for a helper without privileges), open these paths".  Each
 * job runs in a worker forked for it, single-threaded as joining a user
 * namespace requires: unshare(CLONE_FS), setns, then openat2 with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS under the namespace's root, so
 * that symlinks and `..' stay inside.  The worker sends back O_PATH
 * descriptors; the main process checks them (check.h) with its own /proc,
 * never the container's.  */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define ST_BROKER_MAX_PATHS 8

struct st_broker {
  int sock;                 /* -1: not running */
  pid_t pid;
};

/* Forks the broker.  In the child, CLOSE_FD is closed and the sandbox
   entered (sandbox.h); the child never returns.  */
int st_broker_start (struct st_broker *b, int close_fd);

/* Opens each of PATHS (at most ST_BROKER_MAX_PATHS, each absolute) inside
   the mount namespace MNT_FD, entering the user namespace USERNS_FD first
   unless it is -1.  FDS[i] gets an O_PATH descriptor or -1, ERRS[i] 0 or
   an errno.  Returns 0, or -errno when the broker could not do the job.  */
int st_broker_open (struct st_broker *b, int mnt_fd, int userns_fd, const char *const *paths,
                    size_t n, int *fds, int *errs);
