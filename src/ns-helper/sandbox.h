/* The helper's sandbox, set up in named steps as bubblewrap drops its
 * privileges: limits first (no core dumps, not dumpable, bounded memory and
 * descriptors), then, per process, the credentials and capabilities that
 * process needs and no others (a helper started as root leaves uid 0 for
 * nobody, or for the client's own uid), no_new_privs, Landlock (no write
 * of any kind, landlock.h) where it can hold, and a seccomp allow-list that
 * kills the process on any other system call.
 *
 *   process    credentials, capabilities          opens               Landlock
 *   parser     nobody, none                       nothing (no open,   yes
 *              (reads and parses client JSON)     openat, openat2)
 *   opener     nobody, CAP_SYS_PTRACE,            openat read-only,   no (*)
 *              CAP_DAC_READ_SEARCH,               no openat2
 *              CAP_CHECKPOINT_RESTORE (pins,
 *              auth, map_files, checks)
 *   resolver   root client: nobody,               openat2, reopen     yes
 *              CAP_DAC_READ_SEARCH; other client:
 *              the client's uid/gid/groups, none
 *   broker     nobody, CAP_SYS_ADMIN,             openat2 (workers)   yes
 *              CAP_SYS_CHROOT, and
 *              CAP_DAC_READ_SEARCH (root client)
 *              or CAP_SETUID + CAP_SETGID (other
 *              client: each worker becomes the
 *              client; seccomp allows setresuid
 *              and setresgid to the client's ids
 *              only)
 *
 * (*) Landlock confines ptrace to the process's own domain, and /proc/PID/
 * root, ns and map_files take a ptrace check: the opener could reach no
 * process.  Its seccomp filter is what keeps it from writing: no openat2
 * (whose flags a filter cannot see), openat only without O_WRONLY, O_RDWR,
 * O_CREAT, O_TRUNC, O_APPEND or O_TMPFILE, write only to stderr, and no
 * other call that changes a file system.
 *
 * A helper started without privileges has none to drop, and gets the same
 * limits, filters and Landlock.  A kernel without Landlock: the processes
 * that could write through openat2 are the resolver and the broker; a
 * privileged helper refuses to start without it (sandbox.c), a user's
 * helper (which has only the user's own rights) carries on.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The client's socket in the opener, which it writes replies on and may
   not read: its filter refuses read and recvmsg on this descriptor.  */
#define ST_SANDBOX_OPENER_CLIENT_FD 3

enum st_sandbox_role {
  ST_SANDBOX_PARSER,
  ST_SANDBOX_OPENER,
  ST_SANDBOX_RESOLVER,
  ST_SANDBOX_BROKER,
};

/* A client that is not root, of a privileged helper: the credentials its
   opens are made with (from SO_PEERCRED and SO_PEERGROUPS).  */
struct st_sandbox_client {
  uid_t uid;
  gid_t gid;
  size_t n_groups;
  const gid_t *groups;
};

/* Asks the scheduler for short slices (a hint, not a restriction; see
   sandbox.c).  */
void st_sandbox_short_slices (void);

/* The limits that hold for the whole helper.  Returns 0 or -errno.  */
int st_sandbox_limits (void);

/* Before the helper's processes are forked: drops from the bounding set
   every capability that none of their roles keeps (for CLIENT, as
   st_sandbox_enter takes it), so that each drops only the rest of its
   own at st_sandbox_enter.  The end is the same bounding set in each;
   fewer system calls at start-up.  Returns 0 or -errno.  */
int st_sandbox_prune_bounding_set (const struct st_sandbox_client *client);

/* Drops to ROLE's credentials and capabilities, sets no_new_privs,
   restricts writes with Landlock (not the opener) and installs ROLE's
   seccomp filter.  CLIENT is NULL for a root client or a helper without
   privileges.  Returns 0 or -errno (the caller must then exit).  */
int st_sandbox_enter (enum st_sandbox_role role, const struct st_sandbox_client *client);

/* A broker's worker becomes CLIENT: its groups, gid and uid, and no
   capability left.  Returns 0 or -errno.  */
int st_sandbox_become_client (const struct st_sandbox_client *client);

#ifdef ST_NSH_TEST_HOOKS
/* Test builds: makes the system call NAME that a filter forbids (execve,
   ptrace, socket, mount, setns, kill, write-stdout, open-write,
   openat2-write, mmap-exec).  Returns, if the process lives on, the errno
   the call failed with, or 0 when it succeeded; -1 for an unknown NAME.  */
int st_sandbox_try_forbidden (const char *name);
#endif
