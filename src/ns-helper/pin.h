/* Pinned processes: what the helper holds of each process it was asked
 * about, from the first request on.
 *
 * A pid names whichever process has it now; a pidfd names one process for
 * good.  At a process's first request the helper opens a pidfd, then
 * /proc/PID, then checks through the pidfd that the process is still the
 * same (so /proc/PID is its), and keeps descriptors of its mount namespace
 * and root directory.  The namespace descriptor keeps every mount of the
 * namespace alive after the process exits, so its files stay reachable
 * through the root descriptor (openat2) or by entering it (setns).  A pid
 * that another process takes later is never served: requests for the pid
 * keep going to the pinned process, and a request that names the process
 * by its start time gets the one it names or nothing.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_pin {
  pid_t pid;
  int pidfd;                /* the process, whoever has its pid later */
  int proc_fd;              /* O_PATH of /proc/PID: fails once it exits */
  int mnt_fd;               /* its mount namespace, kept alive */
  int root_fd;              /* O_PATH of its root directory */
  uint64_t mnt_dev, mnt_ino;  /* mnt_fd's, for the pool's key (pool.h) */
  uint64_t start_time;      /* field 22 of /proc/PID/stat */
  int auth;                 /* enum st_auth_level the client passed (kept after exit) */
  uint64_t last_use;
  uint64_t id;              /* never the same twice in a connection */
};

/* Bounded: each pin holds four descriptors.  The least recently used pin
   goes first when the table is full.  */
#define ST_PIN_MAX 128

struct st_pins {
  struct st_pin pin[ST_PIN_MAX];
  size_t n;
  uint64_t clock;
  uint64_t ids;             /* the last pin's id */
};

void st_pins_init (struct st_pins *t);
void st_pins_clear (struct st_pins *t);

/* The pin of process PID: the one pinned already (when START_TIME is NULL
   or names it), else a new one of the process that has PID now (which
   must have *START_TIME when given).  Returns 0 or -ESRCH (no such
   process, or not the one named), -EACCES, another -errno, with WHY.  */
int st_pins_get (struct st_pins *t, pid_t pid, const uint64_t *start_time, struct st_pin **out,
                 char *why, size_t why_size);
/* Forgets P (a pin whose client turned out not to be allowed).  */
void st_pins_drop (struct st_pins *t, struct st_pin *p);

/* Is the pinned process still running?  */
bool st_pin_alive (const struct st_pin *p);

/* Reads the file NAME of the /proc/PID directory PROC_FD into BUF (NUL-
   terminated).  Returns its length or -errno.  */
ssize_t st_proc_read (int proc_fd, const char *name, char *buf, size_t size);
