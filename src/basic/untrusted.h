/* Opening and reading files whose path someone else chose.
 *
 * Root's profiler opens paths that came from a process (its maps), a
 * container (/run/.containerenv, /.flatpak-info), a storage folder
 * (containers.json), a runtime directory (bwrapinfo.json, pidfiles) or a
 * debuglink.  Any user can plant something there: a FIFO (open blocks until
 * a writer comes), a device (open can act: /dev/watchdog arms the
 * watchdog), a socket, a /proc file bind-mounted over the path (/proc/kmsg
 * is S_ISREG, and its read blocks), or a huge file.  Every such open goes
 * through st_open_untrusted: the path is first opened O_PATH (which opens
 * nothing), checked to be a regular file on a file system that holds data,
 * and only then reopened O_RDONLY|O_NONBLOCK|O_NOCTTY through
 * /proc/self/fd, which reaches the very inode that was checked.  Reads are
 * bounded with st_read_untrusted.
 *
 * What was refused is remembered for the whole run (all unwinding threads)
 * and listed by --stats: the ledger, with the container storage's time
 * and byte counts, is the one piece of process-wide state here, because a
 * "per run" budget and "said once" cannot be per thread.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* Flags of st_open_untrusted.  */
#define ST_UNTRUSTED_NOFOLLOW    (1u << 0)  /* the last component may not be a symlink */
#define ST_UNTRUSTED_IN_ROOT     (1u << 1)  /* resolve inside DIR_FD (RESOLVE_IN_ROOT) */
#define ST_UNTRUSTED_BENEATH     (1u << 2)  /* stay beneath DIR_FD, follow no symlink */
#define ST_UNTRUSTED_QUIET       (1u << 3)  /* a refusal is not recorded (probing) */

/* Errors beyond the errno of open(2): they say why a file was refused.  */
#define ST_UNTRUSTED_ENOTREG     EINVAL     /* not a regular file */
#define ST_UNTRUSTED_EPSEUDO     ENODEV     /* on procfs, sysfs, devpts, FUSE... */

/* Opens PATH (relative to DIR_FD, or AT_FDCWD) read-only, non-blocking,
   close-on-exec, without ever opening anything but a regular file on a
   file system that holds data.  Returns the fd, or -errno (-ENOENT and
   friends, -EINVAL: not a regular file, -ENODEV: a pseudo file system).
   ST, when not NULL, receives the file's stat.  A refusal for its type is
   recorded for --stats (unless ST_UNTRUSTED_QUIET).  */
int st_open_untrusted (int dir_fd, const char *path, unsigned flags, struct stat *st);

/* The same, with DIR_NAME naming DIR_FD in the record (the kernel's name of
   a process's root seen from here says little: "/proc/PID/root" does).  */
int st_open_untrusted_in (int dir_fd, const char *dir_name, const char *path, unsigned flags,
                          struct stat *st);

/* False only when st_open_untrusted_in (DIR_FD, ..., PATH, FLAGS) would
   fail with -ENOENT: its first step, the lookup, found nothing.  One
   system call besides a close, nothing opened nor recorded: for asking
   about files that are nearly always absent.  */
bool st_untrusted_may_exist (int dir_fd, const char *path, unsigned flags);

/* The same checks for an O_PATH (or any) fd the caller already holds; the
   reopened fd is returned, PATH_FD is left open.  NAME is for the record.  */
int st_reopen_untrusted (int path_fd, const char *name, unsigned flags, struct stat *st);

/* Checks FD: 0 when a regular file on a data file system, else -EINVAL or
   -ENODEV (nothing recorded).  */
int st_untrusted_check_fd (int fd, struct stat *st);

/* Reads all of FD, at most MAX bytes: 0 with *OUT (malloc'ed, NUL
   terminated) and *LEN, -EFBIG when the file holds more than MAX, or
   -errno.  Never waits: FD must come from st_open_untrusted.  */
int st_read_untrusted (int fd, size_t max, char **out, size_t *len);

/* Why ERR (a negative return of the functions above) refused a file.  */
const char *st_untrusted_strerror (int err);

/* Records a refusal for --stats and says it once on stderr (a warning
   naming FILE, WHO when given, and WHY).  Thread-safe.  */
void st_untrusted_refuse (const char *file, const char *who, const char *why);

/* The container storage ledger: bytes parsed per user (the budget), time
   spent reading storage metadata.  Thread-safe.  */
/* Takes BYTES from UID's BUDGET for the file version FILE_KEY (KEY_LEN
   bytes): false when over it.  A version already paid for (by another
   unwinding thread, whose cache parses it again) is not charged twice.  */
bool st_untrusted_budget_take (unsigned uid, uint64_t bytes, uint64_t budget,
                               const void *file_key, size_t key_len);
void st_untrusted_add_storage_time (uint64_t ns, uint64_t files_parsed, uint64_t bytes_parsed);

/* The --stats lines: refused untrusted files, storage metadata time.  */
void st_untrusted_print_summary (FILE *out);
/* How many files were refused so far (tests, --stats).  */
unsigned st_untrusted_refused_count (void);
