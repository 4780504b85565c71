/* Small facts about a live process, read from /proc.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The start time of the process that has PID now (field 22 of
   /proc/PID/stat, clock ticks since boot): it tells a reused pid from the
   process that had it.  False when there is no such process.  */
bool st_proc_start_time (pid_t pid, uint64_t *ticks);

/* Who owns PID, for deciding whose files may describe it: its real uid on
   the host (/proc/PID/status) and the uid that owns its user namespace
   (NS_GET_OWNER_UID; 0 for the host's).  A rootless container's process
   runs as a subordinate uid, but its namespace is its user's.  0 or
   -errno.  */
int st_proc_owners (pid_t pid, uid_t owners[2]);
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

/* Calls FN for each mapping of /proc/PID/maps, in the file's order (lines
   that do not parse are skipped), until FN returns non-zero.  Returns
   -errno when the file cannot be read (the process is gone), else FN's
   non-zero return or 0.  A caller whose FN fails keeps its error aside and
   returns 1 to stop: an FN error and a missing file then never meet.  */
int st_proc_foreach_map (pid_t pid, int (*fn) (const struct st_proc_map *m, void *arg),
                         void *arg);

/* Reads /proc/PID/NAME ("cmdline", "task/TID/comm", ...) into BUF, at most
   SIZE - 1 bytes, and NUL-terminates it.  Returns the bytes read (0 for an
   empty file: a kernel thread's cmdline) or -errno.  */
ssize_t st_proc_read (pid_t pid, const char *name, char *buf, size_t size);
