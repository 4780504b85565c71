/* Small facts about a live process, read from /proc.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The start time of the process that has PID now (field 22 of
   /proc/PID/stat, clock ticks since boot): it tells a reused pid from the
   process that had it.  False when there is no such process.  */
bool st_proc_start_time (pid_t pid, uint64_t *ticks);

/* Whether process PID lives in a mount namespace other than ours (a
   container, a flatpak sandbox).  False when it cannot be told.  */
bool st_proc_in_other_mount_namespace (pid_t pid);
/* The same, and that namespace's inode in *INO when it is another.  */
bool st_proc_other_mount_namespace (pid_t pid, uint64_t *ino);

/* Who owns PID, for deciding whose files may describe it: its real uid on
   the host (/proc/PID/status) and the uid that owns its user namespace
   (NS_GET_OWNER_UID; 0 for the host's).  A rootless container's process
   runs as a subordinate uid, but its namespace is its user's.  0 or
   -errno.  */
int st_proc_owners (pid_t pid, uid_t owners[2]);
/* Whom a process's doings are charged to (budgets a user must not escape by
   running processes as many uids): the owner of the user namespace it is
   in, or of that namespace's ancestor just below ours, when it is not in
   ours (a rootless container's subordinate uids, and nested namespaces
   their owners made, are their user's); else REAL_UID, its own.  0 or
   -errno (the process is gone).  */
int st_proc_charged_uid (pid_t pid, uid_t real_uid, uid_t *out);
/* The same, and in *USERNS the inode of that user namespace (the
   outermost below ours), 0 when PID is in ours.  */
int st_proc_charged (pid_t pid, uid_t real_uid, uid_t *out, uint64_t *userns);
/* True when a file with owner UID may describe a process with OWNERS:
   root's files, or the process's own user's.  */
bool st_proc_owned_by (const uid_t owners[2], uid_t uid);

/* One line of /proc/PID/maps: "START-END PERMS PGOFF MAJ:MIN INODE  NAME".
   The kernel writes every field but NAME, which the process chose (any
   bytes but a newline; "" for an anonymous mapping).  */
struct st_proc_map {
  uint64_t start, end, pgoff, inode;
  unsigned maj, min;
  char perms[5];            /* "r-xp": always 4 characters */
  const char *name;         /* inside the line, its newline cut */
};

/* Parses LINE (NUL-terminated; its newline is replaced by a NUL) into *M.
   False when it is not a maps line, or START is not below END.  */
bool st_proc_parse_maps_line (char *line, struct st_proc_map *m);

/* The one reader of /proc/PID files: every folder that asks /proc about a
   process goes through the functions below, so that bounds, O_CLOEXEC and
   the parsing of the kernel's formats live in one place.  */

/* /proc/PID/NAME ("cgroup", "stat", "task/TID/comm", ...) read whole, up
   to MAX bytes (-EFBIG beyond), into *OUT (malloc'd, NUL-terminated).
   Returns its length, or -errno (-ENOENT: no such process).  */
int st_proc_read_file (pid_t pid, const char *name, size_t max, char **out);
/* The same into the caller's BUF (SIZE bytes, NUL-terminated): for the
   small files read once per process (cgroup), without a heap buffer.
   Returns the length, -EFBIG when the file has SIZE bytes or more (BUF
   then holds its first SIZE - 1), or -errno.  */
int st_proc_read_into (pid_t pid, const char *name, char *buf, size_t size);

/* The fields of /proc/PID/stat that we use.  */
struct st_proc_stat {
  pid_t ppid;               /* field 4 */
  uint64_t start_time;      /* field 22: clock ticks since boot */
};
/* Parses the text of a /proc/PID/stat file.  0 or -EINVAL.  */
int st_proc_parse_stat (const char *text, struct st_proc_stat *out);
/* Reads and parses /proc/PID/stat.  0 or -errno.  */
int st_proc_stat (pid_t pid, struct st_proc_stat *out);

/* Calls FN (M, ARG) for each line of /proc/PID/maps, in order, until FN
   returns non-zero.  Returns that value, 0 after the last line, or -errno
   when the file cannot be opened (the process is gone, or forbidden);
   lines that are not maps lines are skipped.  M and its name are valid
   during the call only.  */
int st_proc_maps_foreach (pid_t pid, int (*fn) (const struct st_proc_map *m, void *arg),
                          void *arg);
/* Whether PID has the mapping [START, END) of a file at offset PGOFF, of
   device MAJ:MIN and inode INO when HAS_DEV_INO (a mapping record with a
   build-id has none; paths are no help, as a container's process names
   its files by its own mount namespace's).  1 when it does, 0 when it does
   not (another process has the pid now, or the mapping is gone), -errno
   when /proc/PID/maps cannot be read (-ENOENT: no such process).  */
int st_proc_maps_file_at (pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                          bool has_dev_ino, unsigned maj, unsigned min, uint64_t ino);

/* The command line of PID with a space between arguments, in BUF (SIZE
   bytes, cut to fit).  Returns the bytes the kernel gave (the last
   argument's NUL included, unless cut): 0 for a kernel thread (no command
   line), or -errno.  */
int st_proc_cmdline (pid_t pid, char *buf, size_t size);

/* The name (comm) of thread TID of PID, its newline cut, in BUF (SIZE
   bytes, cut to fit).  Returns its length, or -errno.  */
int st_proc_comm (pid_t pid, pid_t tid, char *buf, size_t size);
