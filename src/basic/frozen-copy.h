/* A copy of a file that its owner cannot change under us.
 *
 * An fd handed to libdwfl (a debug file, a dwz file) is read by libelf
 * with its own elf_begin, live, and so are the bytes a debug file candidate
 * was accepted by (its build-id, its CRC): the header counts, the section
 * sizes, the compressed sections' declared sizes and the build-id that the
 * profiler checked can be rewritten by whoever may write the file between
 * the check and libelf's read, and undo the check (basic/elf-begin.h:
 * 6.4 GB for a header that counts 20 million sections).  Such a file is
 * copied first into a sealed memfd, which is then checked and served:
 * nobody can write the copy.  Files only the profiler's own user can write
 * are served as they are: copying costs memory.
 *
 * What the copies hold is bounded: a file larger than ST_FROZEN_COPY_MAX
 * is not copied, and all the copies held at once, by every unwinding
 * thread, take at most ST_FROZEN_COPY_BUDGET, each charged its size in
 * pages (holes too: a read fault in a hole of the copy's mapping costs a
 * page); past either, the file is refused (not read).  One file is copied
 * once while it is the same (device, inode, size, times): the threads and
 * files that want it share the copy.
 *
 * The budget is shared out by owner: the copies charged to one owner take
 * at most 1/ST_FROZEN_COPY_SHARES of it.  Without shares one user, running
 * four programs whose debug files are 250 MiB of holes, kept every other
 * user's and container's debug files out while they ran.  The owner is
 * who made the profiler want the file: the user of the process that maps
 * the module, when the processes run now (the owner of its outermost user
 * namespace: a rootless container's 65,536 uids are its user's; root's
 * containers and root's processes in mount namespaces of their own each
 * count apart; processes gone before a copy for them was made count by
 * their file's owner, apart from running ones: st_frozen_owner_of_process).  A user cannot charge another user by
 * making a program whose debug file is the other's.  In a recording, whose
 * processes are gone, the file's owner answers for it
 * (st_frozen_owner_of_file).  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "basic/why.h"

/* Debug files of most programs are tens of MiB.  */
#define ST_FROZEN_COPY_MAX ((uint64_t) 256 << 20)
#define ST_FROZEN_COPY_BUDGET ((uint64_t) 1 << 30)
#define ST_FROZEN_COPY_SHARES 4

/* Owners, as the budget counts them: a uid (below 1 << 32), or one of
   these.  */
#define ST_FROZEN_OWNER_MOUNTS ((uint64_t) 1 << 32)     /* nosuid, network */
#define ST_FROZEN_OWNER_RANGE ((uint64_t) 2 << 32)      /* | the range's first uid */
#define ST_FROZEN_OWNER_BLOCK ((uint64_t) 3 << 32)      /* | first of 65,536 uids */
/* A process of root's (its charged uid 0) in a user namespace other than
   ours (a container of nspawn -U, LXD, podman --userns=auto), or in ours
   and a mount namespace other than ours (a rootful container): | the
   namespace's inode.  */
#define ST_FROZEN_OWNER_USERNS ((uint64_t) 4 << 32)
#define ST_FROZEN_OWNER_MNTNS ((uint64_t) 5 << 32)
/* A process gone before a copy for it was made: what
   st_frozen_owner_of_process says of it.  The copy is then charged to this
   | the file's owner (st_frozen_owner_of_file), apart from that owner's
   processes that run: so that nobody spends another user's share for
   running processes with a short process whose debug file is the other's.
   The gone processes' copies take one share together, and one owner's of
   them half of that, so that one user's short processes leave room for
   others' (a single owner for all gone processes did not).  */
#define ST_FROZEN_OWNER_GONE ((uint64_t) 1 << 35)
/* Only for st_freeze's OWNER: the owner is found when a copy is made,
   with st_frozen_owner_of_process of the pid (| PID) or
   st_frozen_owner_of_file (FILE).  */
#define ST_FROZEN_OWNER_PID ((uint64_t) 6 << 32)
#define ST_FROZEN_OWNER_FILE UINT64_MAX

/* Whether someone other than this process's effective user may write the
   file FD (ST its stat): another owner, write permission for its group or
   for others (an ACL that grants a user write shows in the group bits), a
   nosuid mount (what udisks mounts for a user: an image the user can
   write under the file system), or a network file system (another host
   writes it; the owner shown is the mount's).  */
bool st_others_may_write (int fd, const struct stat *st);
/* The owner a copy of FD (ST its stat) is charged to when no process is
   known to answer for it: ST_FROZEN_OWNER_MOUNTS on a nosuid or network
   mount (whoever made the file system chose its owners); else its owner, a
   subordinate uid as its user (or its range, when /etc/passwd does not name
   the user), and a uid in systemd's range for containers in no range
   as its block of 65,536.  */
uint64_t st_frozen_owner_of_file (int fd, const struct stat *st);
/* The owner a copy wanted for a module of process PID, which runs now, is
   charged to: the user of PID (the owner of its outermost user
   namespace, st_proc_charged_uid); for root's, its user namespace when it
   is not ours, else its mount namespace when it is not ours, else root.
   ST_FROZEN_OWNER_GONE when PID is gone (st_freeze then adds the file's
   owner, in a share of its own: not the owner's share, which a user could
   charge by a short process whose debug file is another's).
   Whether the process that has PID now is the one whose module wants the
   copy is the caller's to say (st_frozen_set_same_process).  */
uint64_t st_frozen_owner_of_process (pid_t pid);
/* What messages call OWNER ("uid 1000's files", ...), in BUF of SIZE.  */
const char *st_frozen_owner_name (uint64_t owner, char *buf, size_t size);
/* Whether the process that has PID now is the one whose module wants a
   copy: the caller's to know (core/resolve/find-debuginfo.c: it still has
   the module's mapping); the pid may have been reused since the sample.
   Set for the calling thread's st_freeze calls until set again (FN NULL:
   taken as it is); asked only when a copy charged to ST_FROZEN_OWNER_PID |
   PID is made, and a process that is not the one counts as gone.  */
typedef bool st_frozen_same_process_fn (pid_t pid, const void *arg);
void st_frozen_set_same_process (st_frozen_same_process_fn *fn, const void *arg);

/* FD as it may be read after a check: FD itself when it is a copy made
   here already or only our user may write it (unless ALWAYS: a file from
   another mount namespace, whose owners are not the host's); else a
   descriptor of a sealed copy (F_SEAL_WRITE, SHRINK, GROW, SEAL), made
   now or shared, and FD is closed.  A new copy is charged to OWNER
   (ST_FROZEN_OWNER_PID | pid, ST_FROZEN_OWNER_FILE, ST_FROZEN_OWNER_GONE:
   found then).  -errno
   (FD closed, WHY says why)
   when there is none: -EFBIG past ST_FROZEN_COPY_MAX, the budget or the
   owner's share (counted by st_frozen_budget_refusals, as is -ENOMEM),
   -EIO when the file ended while copied.  Each descriptor it gives is released with
   st_frozen_close, once.  */
int st_freeze (int fd, bool always, uint64_t owner, struct st_why *why);
/* close (FD), and one holder fewer of its copy when FD is a copy from
   st_freeze or st_frozen_adopt (-1: nothing): the last gives the copy's
   charge back.  */
void st_frozen_close (int fd);
/* Takes BYTES from the budget and OWNER's share, for a memfd about to be
   made from a copy (its debug sections inflated): 0, or -EFBIG; then
   either st_frozen_adopt the memfd made, or st_frozen_release them.  */
int st_frozen_reserve (uint64_t bytes, uint64_t owner);
void st_frozen_release (uint64_t bytes, uint64_t owner);
/* FD, made with RESERVED bytes taken by st_frozen_reserve for OWNER, is a
   copy held with one holder: 0 (the reservation is its charge now), or
   -errno (-ENOMEM, -EEXIST; the reservation given back).  */
int st_frozen_adopt (int fd, uint64_t reserved, uint64_t owner);
/* Says (at debug level) that NAME is read from FD, a copy, and whose
   share it counts in.  */
void st_frozen_say_copied (const char *name, int fd);
/* Whether FD is a copy from st_freeze or st_frozen_adopt; *OWNER (unless
   NULL) is whom it is charged to.  */
bool st_frozen_copy_owner (int fd, uint64_t *owner);
bool st_frozen_is_copy (int fd);
/* What the copies hold now, in bytes, all of them and OWNER's (--stats,
   tests).  */
uint64_t st_frozen_held (void);
uint64_t st_frozen_held_by (uint64_t owner);
/* How many files the budget refused st_freeze so far, in this thread: a
   search they failed is not an answer to keep (the budget frees up as
   files go).  */
unsigned st_frozen_budget_refusals (void);
/* The budget is ST_FROZEN_COPY_BUDGET; tests set a smaller one.  */
void st_frozen_set_budget (uint64_t bytes);

/* Copies SIZE bytes of FROM, from its start, to TO at its offset: false
   when FROM ends first or a write fails.  */
bool st_copy_fd (int from, int to, off_t size);
