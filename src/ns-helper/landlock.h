/* Landlock: no helper process may write to any file system object.
 *
 * Seccomp filters system calls by number and by register arguments; it
 * cannot see openat2's flags (they sit in a struct in memory), nor tell a
 * write from a read once a descriptor is open.  Landlock can: a ruleset
 * that handles every write-type file-system access and grants none makes
 * the kernel refuse, with EACCES, creating, writing, truncating, renaming,
 * linking and removing anything, whatever the system call and whatever
 * the capabilities (CAP_DAC_OVERRIDE does not bypass it).
 *
 * Landlock also confines ptrace to the process's own domain, and the
 * kernel's ptrace check guards /proc/PID/root, /proc/PID/ns and
 * /proc/PID/map_files: a landlocked process cannot open them for any
 * process outside its domain.  So the opener, which pins other processes,
 * cannot be landlocked; it has no openat2 and opens read-only (seccomp),
 * and every open of a client-named path happens in a landlocked process
 * (sandbox.h).  */
#pragma once

/* Restricts the calling thread (and all it forks) so that it can write
   nothing through the file system, and bind or connect no TCP port.
   Needs no_new_privs (or CAP_SYS_ADMIN).  Returns the Landlock ABI
   version in force (>= 1), or -EOPNOTSUPP when the kernel has no
   Landlock, or another -errno.  */
int st_landlock_forbid_writes (void);

/* The kernel's Landlock ABI version, or -errno (-EOPNOTSUPP: none).  */
int st_landlock_abi (void);
