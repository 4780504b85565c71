/* The helper's sandbox, set up in named steps as bubblewrap drops its
 * privileges: limits first (no core dumps, not dumpable, bounded memory and
 * descriptors), then, per process, the capabilities that process's ways
 * need and no others (a helper started as root also leaves uid 0 for
 * nobody, keeping just those capabilities), no_new_privs, and a seccomp
 * allow-list that kills the process on any other system call.
 *
 *   main process  (parses requests): CAP_SYS_PTRACE (reach other users'
 *                 /proc/PID), CAP_DAC_READ_SEARCH (read their files),
 *                 CAP_CHECKPOINT_RESTORE (follow /proc/PID/map_files)
 *   broker        (setns, see broker.h): CAP_SYS_ADMIN and CAP_SYS_CHROOT
 *                 (setns into a mount namespace), CAP_DAC_READ_SEARCH
 *
 * A helper started without privileges has none to drop, and gets the same
 * limits and allow-lists.  */
#pragma once

enum st_sandbox_role {
  ST_SANDBOX_MAIN,
  ST_SANDBOX_BROKER,
};

/* The limits that hold for the whole helper.  Returns 0 or -errno.  */
int st_sandbox_limits (void);

/* Drops to ROLE's capabilities, sets no_new_privs and installs ROLE's
   seccomp filter.  Returns 0 or -errno (the caller must then exit).  */
int st_sandbox_enter (enum st_sandbox_role role);

#ifdef ST_NSH_TEST_HOOKS
/* Test builds: makes the system call NAME that the main process's filter
   forbids.  Returns only when the filter let it through (or for an unknown
   NAME, -EINVAL).  */
int st_sandbox_try_forbidden (const char *name);
#endif
