#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "basic/array.h"
#include "basic/frozen-copy.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/subid.h"

/* File systems whose files other hosts write (magic numbers from the
   kernel's headers, not all of which linux/magic.h has).  */
static const unsigned long network_fs[] = {
  NFS_SUPER_MAGIC,
  0xff534d42 /* CIFS */, 0xfe534d42 /* SMB2 */, SMB_SUPER_MAGIC,
  V9FS_MAGIC, CEPH_SUPER_MAGIC, AFS_SUPER_MAGIC, 0x6b414653 /* kAFS */,
  CODA_SUPER_MAGIC, 0x47504653 /* GPFS */, 0x0bd00bd0 /* Lustre */,
  0x65735546 /* FUSE (refused on open already; a helper's fd is not) */,
};

/* Whether FD is on a mount whose files' owners say nothing of who wrote
   them: nosuid (what udisks mounts for a user: an image the user writes
   under the file system, with any owners in it), or a network file system
   (another host writes it; the owner shown is the mount's).  True when it
   cannot be told.  */
static bool
on_mount_others_write (int fd)
{
  struct statvfs vfs;
  if (fstatvfs (fd, &vfs) != 0 || (vfs.f_flag & ST_NOSUID) != 0)
    return true;
  struct statfs fs;
  if (fstatfs (fd, &fs) != 0)
    return true;
  for (size_t i = 0; i < sizeof network_fs / sizeof network_fs[0]; i++)
    if ((unsigned long) fs.f_type == network_fs[i])
      return true;
  return false;
}

bool
st_others_may_write (int fd, const struct stat *st)
{
  return st->st_uid != geteuid () || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0
         || on_mount_others_write (fd);
}

uint64_t
st_frozen_owner_of_file (int fd, const struct stat *st)
{
  if (on_mount_others_write (fd))
    return ST_FROZEN_OWNER_MOUNTS;
  uid_t owner;
  switch (st_subid_owner (st->st_uid, &owner))
    {
    case ST_SUBID_USER:
      return owner;
    case ST_SUBID_RANGE:
      return ST_FROZEN_OWNER_RANGE | owner;
    case ST_SUBID_NONE:
    default:
      break;
    }
  /* In systemd's range for containers' uids (nspawn -U and machined give
     each container 65,536 of them, aligned), in no range of /etc/subuid: a
     container's, whose root gives its files any of its uids.  */
  if (st->st_uid >= 0x80000 && st->st_uid < 0x70000000)
    return ST_FROZEN_OWNER_BLOCK | (st->st_uid & ~(uid_t) 0xffff);
  return st->st_uid;
}

uint64_t
st_frozen_owner_of_process (pid_t pid)
{
  uid_t owners[2], charged;
  uint64_t userns;
  if (pid > 0 && st_proc_owners (pid, owners) == 0
      && st_proc_charged (pid, owners[0], &charged, &userns) == 0)
    {
      if (charged != 0)
        return charged;
      if (userns != 0)
        return ST_FROZEN_OWNER_USERNS | (uint32_t) userns;
      uint64_t mnt;
      return st_proc_other_mount_namespace (pid, &mnt) ? ST_FROZEN_OWNER_MNTNS | (uint32_t) mnt : 0;
    }
  /* Gone (a process of a few milliseconds is, by the time its samples
     are unwound): not its file's owner's share, which its user could
     otherwise charge by running such a process with a debug file of
     theirs (st_freeze adds the file's owner).  */
  return ST_FROZEN_OWNER_GONE;
}

/* The copies for processes gone before they were made, all owners
   together: a ledger of shares, no owner.  */
#define ALL_GONE ((uint64_t) 1 << 36)

const char *
st_frozen_owner_name (uint64_t owner, char *buf, size_t size)
{
  uint32_t id = (uint32_t) owner;
  if (owner == ST_FROZEN_OWNER_FILE || owner == ST_FROZEN_OWNER_PID)
    snprintf (buf, size, "an owner not found yet");
  else if (owner == ALL_GONE)
    snprintf (buf, size, "the files of processes gone before they were read");
  else if (owner & ST_FROZEN_OWNER_GONE)
    {
      char of[96];
      snprintf (buf, size, "%s, of processes gone before they were read",
                st_frozen_owner_name (owner & ~ST_FROZEN_OWNER_GONE, of, sizeof of));
    }
  else if (owner == ST_FROZEN_OWNER_MOUNTS)
    snprintf (buf, size, "files on nosuid and network mounts");
  else if ((owner & ~(uint64_t) UINT32_MAX) == ST_FROZEN_OWNER_RANGE)
    snprintf (buf, size, "the files of the subordinate uids from %u", id);
  else if ((owner & ~(uint64_t) UINT32_MAX) == ST_FROZEN_OWNER_BLOCK)
    snprintf (buf, size, "the files of uids %u-%u", id, id + 0xffff);
  else if ((owner & ~(uint64_t) UINT32_MAX) == ST_FROZEN_OWNER_USERNS)
    snprintf (buf, size, "root's files of user namespace %u", id);
  else if ((owner & ~(uint64_t) UINT32_MAX) == ST_FROZEN_OWNER_MNTNS)
    snprintf (buf, size, "root's files of mount namespace %u", id);
  else
    snprintf (buf, size, "uid %u's files", id);
  return buf;
}

bool
st_copy_fd (int from, int to, off_t size)
{
  off_t off = 0;
  while (off < size)
    {
      ssize_t n = sendfile (to, from, &off, (size_t) (size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n == 0)
        errno = 0;   /* FROM ended first: no errno of its own */
      if (n <= 0)
        return false;
    }
  return true;
}

/* The copies held, by every thread: one per source file, shared (a dup
   to each holder), counted by holders, charged its size in pages.  */
struct held {
  /* The file copied: it is the same file while these are (a write changes
     its ctime).  No source (dev and ino 0): an adopted copy.  */
  dev_t src_dev;
  ino_t src_ino;
  off_t src_size;
  struct timespec src_mtime, src_ctime;
  /* The file copied, kept open while the copy is held: its inode cannot
     be another file's meanwhile (a file deleted and another made at once
     may get its inode, size and times).  */
  int src_fd;
  dev_t dev;          /* the copy's */
  ino_t ino;
  int fd;             /* the ledger's own descriptor of it, or -1 */
  unsigned refs;
  uint64_t bytes;
  uint64_t owner;     /* whose share it is charged to */
  /* Being copied by the thread that made it (no copy, no holder yet),
     found by its serial; the others wait on held_changed.  */
  bool copying;
  uint64_t serial;
};
/* What each owner's copies and reservations take: at most the budget's
   1/ST_FROZEN_COPY_SHARES each.  An owner with nothing is not listed.  */
struct share {
  uint64_t owner;
  uint64_t bytes;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_changed = PTHREAD_COND_INITIALIZER;
static uint64_t held_serials;
static struct held *held;
static size_t held_n, held_cap;
static uint64_t held_bytes;
static struct share *shares;
static size_t shares_n, shares_cap;
static uint64_t budget = ST_FROZEN_COPY_BUDGET;
/* Per thread: a search asks whether its own copies were refused.  */
static __thread unsigned budget_refusals;
/* Per thread: st_frozen_set_same_process's.  */
static __thread st_frozen_same_process_fn *same_process;
static __thread const void *same_process_arg;

void
st_frozen_set_same_process (st_frozen_same_process_fn *fn, const void *arg)
{
  same_process = fn;
  same_process_arg = arg;
}

static struct held *
held_by_copy (const struct stat *st)
{
  for (size_t i = 0; i < held_n; i++)
    if (!held[i].copying && held[i].dev == st->st_dev && held[i].ino == st->st_ino)
      return &held[i];
  return NULL;
}

static bool
same_time (struct timespec a, struct timespec b)
{
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static struct held *
held_by_source (const struct stat *st)
{
  for (size_t i = 0; i < held_n; i++)
    if (held[i].src_ino != 0 && held[i].src_dev == st->st_dev && held[i].src_ino == st->st_ino
        && held[i].src_size == st->st_size && same_time (held[i].src_mtime, st->st_mtim)
        && same_time (held[i].src_ctime, st->st_ctim))
      return &held[i];
  return NULL;
}

/* A copy's charge: its size in pages, what its mappings may come to take
   (a read fault in a hole of a memfd allocates a page).  */
static uint64_t
charge_of (off_t size)
{
  uint64_t page = (uint64_t) getpagesize ();
  return ((uint64_t) size + page - 1) / page * page;
}

static struct share *
share_of_locked (uint64_t owner)
{
  for (size_t i = 0; i < shares_n; i++)
    if (shares[i].owner == owner)
      return &shares[i];
  return NULL;
}

/* Under the lock: OWNER's entry in the ledger, made (empty) when missing;
   NULL without memory.  */
static struct share *
share_add_locked (uint64_t owner)
{
  struct share *sh = share_of_locked (owner);
  if (sh != NULL)
    return sh;
  if (ST_GROW (shares, shares_cap, shares_n, 8) < 0)
    return NULL;
  sh = &shares[shares_n++];
  *sh = (struct share) { .owner = owner };
  return sh;
}

/* Under the lock: whether OWNER's copies, holding OWN bytes of CAP, have
   room for BYTES more; else WHY says whose copies take it.  */
static bool
share_has_room (uint64_t owner, uint64_t own, uint64_t cap, uint64_t bytes, struct st_why *why)
{
  char name[160];
  if (own + bytes <= cap)
    return true;
  st_why_set (why, EFBIG,
              "a file others may write is read from a copy, and the copies of %s take %llu of "
              "the %llu bytes %s may have",
              st_frozen_owner_name (owner, name, sizeof name), (unsigned long long) own,
              (unsigned long long) cap, owner == ALL_GONE ? "they" : "one owner");
  return false;
}

static void
share_drop_locked (uint64_t owner, uint64_t bytes)
{
  struct share *sh = share_of_locked (owner);
  if (sh != NULL && (sh->bytes -= bytes) == 0)
    *sh = shares[--shares_n];
}

/* Under the lock: takes BYTES from the budget and OWNER's share of it, or
   -EFBIG (-ENOMEM).  The copies for gone processes take at most one share
   together, as one owner did before they were told apart by their file's
   owner, and each owner's of them half of that: one user's short processes
   leave room for others', and a user gets no more of the budget than
   before (a share, and gone processes' copies within one more).  */
static int
reserve_locked (uint64_t bytes, uint64_t owner, struct st_why *why)
{
  const struct share *sh = share_of_locked (owner);
  const bool gone = (owner & ST_FROZEN_OWNER_GONE) != 0;
  const uint64_t cap = budget / ST_FROZEN_COPY_SHARES;
  if (held_bytes + bytes > budget)
    return st_why_set (why, EFBIG,
                       "a file others may write is read from a copy, and the copies held take "
                       "%llu of their %llu bytes already",
                       (unsigned long long) held_bytes, (unsigned long long) budget);
  if (!share_has_room (owner, sh != NULL ? sh->bytes : 0, gone ? cap / 2 : cap, bytes, why))
    return -EFBIG;
  if (gone)
    {
      const struct share *all = share_of_locked (ALL_GONE);
      if (!share_has_room (ALL_GONE, all != NULL ? all->bytes : 0, cap, bytes, why))
        return -EFBIG;
    }
  struct share *mine = share_add_locked (owner);
  struct share *all = gone && mine != NULL ? share_add_locked (ALL_GONE) : NULL;
  if (mine == NULL || (gone && all == NULL))
    {
      if (mine != NULL && mine->bytes == 0)
        share_drop_locked (owner, 0);
      return st_why_set (why, ENOMEM, "no memory for its owner's share");
    }
  /* share_add_locked may have moved the ledger: MINE again.  */
  share_of_locked (owner)->bytes += bytes;
  if (gone)
    all->bytes += bytes;
  held_bytes += bytes;
  return 0;
}

/* Under the lock: gives back BYTES that reserve_locked took for OWNER.  */
static void
release_locked (uint64_t bytes, uint64_t owner)
{
  held_bytes -= bytes;
  share_drop_locked (owner, bytes);
  if (owner & ST_FROZEN_OWNER_GONE)
    share_drop_locked (ALL_GONE, bytes);
}

/* Under the lock: a new entry (its charge taken already), or NULL.  */
static struct held *
held_append_locked (void)
{
  if (ST_GROW (held, held_cap, held_n, 16) < 0)
    return NULL;
  struct held *h = &held[held_n++];
  memset (h, 0, sizeof *h);
  h->fd = -1;
  h->src_fd = -1;
  return h;
}

/* A new descriptor of H's copy (a copy of a file: the ledger keeps one)
   for one more holder, or -errno.  */
static int
take_locked (struct held *h)
{
  if (h->fd < 0)
    return -EBADF;
  int fd = fcntl (h->fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  h->refs++;
  return fd;
}

void
st_frozen_close (int fd)
{
  if (fd < 0)
    return;
  struct stat st;
  int ledger_fd = -1, src_fd = -1;
  if (fstat (fd, &st) == 0)
    {
      pthread_mutex_lock (&held_lock);
      struct held *h = held_by_copy (&st);
      if (h != NULL && --h->refs == 0)
        {
          release_locked (h->bytes, h->owner);
          ledger_fd = h->fd;
          src_fd = h->src_fd;
          *h = held[--held_n];
        }
      pthread_mutex_unlock (&held_lock);
    }
  if (ledger_fd >= 0)
    close (ledger_fd);
  if (src_fd >= 0)
    close (src_fd);
  close (fd);
}

bool
st_frozen_copy_owner (int fd, uint64_t *owner)
{
  struct stat st;
  if (fstat (fd, &st) != 0)
    return false;
  pthread_mutex_lock (&held_lock);
  const struct held *h = held_by_copy (&st);
  if (h != NULL && owner != NULL)
    *owner = h->owner;
  pthread_mutex_unlock (&held_lock);
  return h != NULL;
}

void
st_frozen_say_copied (const char *name, int fd)
{
  uint64_t owner;
  char buf[160];
  if (st_frozen_copy_owner (fd, &owner))
    st_debug ("%s: others may write it: libdwfl reads a copy, counted with %s", name,
              st_frozen_owner_name (owner, buf, sizeof buf));
}

bool
st_frozen_is_copy (int fd)
{
  return st_frozen_copy_owner (fd, NULL);
}

uint64_t
st_frozen_held (void)
{
  pthread_mutex_lock (&held_lock);
  uint64_t n = held_bytes;
  pthread_mutex_unlock (&held_lock);
  return n;
}

uint64_t
st_frozen_held_by (uint64_t owner)
{
  pthread_mutex_lock (&held_lock);
  const struct share *sh = share_of_locked (owner);
  uint64_t n = sh != NULL ? sh->bytes : 0;
  pthread_mutex_unlock (&held_lock);
  return n;
}

unsigned
st_frozen_budget_refusals (void)
{
  return budget_refusals;
}

int
st_frozen_reserve (uint64_t bytes, uint64_t owner)
{
  pthread_mutex_lock (&held_lock);
  int r = reserve_locked (bytes, owner, NULL);
  pthread_mutex_unlock (&held_lock);
  return r;
}

void
st_frozen_release (uint64_t bytes, uint64_t owner)
{
  pthread_mutex_lock (&held_lock);
  release_locked (bytes, owner);
  pthread_mutex_unlock (&held_lock);
}

void
st_frozen_set_budget (uint64_t bytes)
{
  pthread_mutex_lock (&held_lock);
  budget = bytes;
  pthread_mutex_unlock (&held_lock);
}

int
st_frozen_adopt (int fd, uint64_t reserved, uint64_t owner)
{
  struct stat st;
  int r = fstat (fd, &st) != 0 ? -errno : 0;
  pthread_mutex_lock (&held_lock);
  struct held *h = NULL;
  if (r == 0)
    r = held_by_copy (&st) != NULL ? -EEXIST : (h = held_append_locked ()) == NULL ? -ENOMEM : 0;
  if (h != NULL)
    {
      h->dev = st.st_dev;
      h->ino = st.st_ino;
      h->bytes = reserved;
      h->owner = owner;
      h->refs = 1;
    }
  else
    release_locked (reserved, owner);
  pthread_mutex_unlock (&held_lock);
  return r;
}

/* A sealed copy of FD (ST its stat), made outside the lock with CHARGE
   reserved for it: the copy, or -errno.  */
static int
make_copy (int fd, const struct stat *st, struct st_why *why)
{
  int copy = memfd_create ("eu-stacktrace-frozen", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0)
    return st_why_set (why, errno, "memfd_create for its copy: %s", strerror (errno));
  int r = 0;
  /* Every byte, holes too (a read of one in the copy's mappings costs the
     page anyway), at most its size: no lseek(SEEK_DATA) a FUSE daemon
     could answer so as to copy forever.  */
  if (!st_copy_fd (fd, copy, st->st_size))
    r = st_why_set (why, errno == 0 ? EIO : errno, "copying its %llu bytes: %s",
                    (unsigned long long) st->st_size,
                    errno == 0 ? "it ended before (cut short)" : strerror (errno));
  else if (fcntl (copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    r = st_why_set (why, errno, "sealing its copy: %s", strerror (errno));
  if (r < 0)
    {
      close (copy);
      return r;
    }
  return copy;
}

/* Under the lock: the entry of the copy being made as SERIAL, or NULL.  */
static struct held *
held_by_serial (uint64_t serial)
{
  for (size_t i = 0; i < held_n; i++)
    if (held[i].serial == serial)
      return &held[i];
  return NULL;
}

/* Under the lock: removes H (its charge given back).  */
static void
held_remove_locked (struct held *h)
{
  release_locked (h->bytes, h->owner);
  *h = held[--held_n];
}

int
st_freeze (int fd, bool always, uint64_t owner, struct st_why *why)
{
  struct stat st;
  if (fstat (fd, &st) != 0)
    {
      int e = errno;
      close (fd);
      return st_why_set (why, e, "fstat");
    }
  pthread_mutex_lock (&held_lock);
  bool ours = held_by_copy (&st) != NULL;
  pthread_mutex_unlock (&held_lock);
  if (ours || (!always && !st_others_may_write (fd, &st)))
    return fd;
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return st_why_set (why, EINVAL, "not a regular file");
    }
  if ((uint64_t) st.st_size > ST_FROZEN_COPY_MAX)
    {
      close (fd);
      return st_why_set (why, EFBIG,
                         "%llu bytes; a file others may write is read from a copy of at most %llu",
                         (unsigned long long) st.st_size, (unsigned long long) ST_FROZEN_COPY_MAX);
    }
  /* The same file, copied already or being copied (by this thread or
     another): shared.  A copy being made is waited for, not made twice:
     two threads reserving for the same file would charge it twice, and
     refuse a file over half its owner's share.  The owner is found (in
     /proc, /etc/subuid) only for a copy to make, outside the lock.  */
  const uint64_t charge = charge_of (st.st_size);
  bool found = owner != ST_FROZEN_OWNER_FILE && owner != ST_FROZEN_OWNER_GONE
               && (owner & ~(uint64_t) UINT32_MAX) != ST_FROZEN_OWNER_PID;
  pthread_mutex_lock (&held_lock);
  struct held *h;
  for (;;)
    {
      while ((h = held_by_source (&st)) != NULL && h->copying)
        pthread_cond_wait (&held_changed, &held_lock);
      if (h != NULL || found)
        break;
      pthread_mutex_unlock (&held_lock);
      if ((owner & ~(uint64_t) UINT32_MAX) == ST_FROZEN_OWNER_PID)
        {
          pid_t pid = (pid_t) (uint32_t) owner;
          owner = same_process != NULL && !same_process (pid, same_process_arg)
                    ? ST_FROZEN_OWNER_GONE
                    : st_frozen_owner_of_process (pid);
        }
      if (owner == ST_FROZEN_OWNER_FILE)
        owner = st_frozen_owner_of_file (fd, &st);
      else if (owner == ST_FROZEN_OWNER_GONE)
        owner |= st_frozen_owner_of_file (fd, &st);
      found = true;
      pthread_mutex_lock (&held_lock);
    }
  int r = h != NULL ? take_locked (h) : reserve_locked (charge, owner, why);
  uint64_t serial = 0;
  if (h == NULL && r == 0)
    {
      struct held *mine = held_append_locked ();
      if (mine == NULL)
        {
          release_locked (charge, owner);
          r = st_why_set (why, ENOMEM, "no memory for its entry");
        }
      else
        {
          serial = ++held_serials;
          *mine = (struct held) {
            .src_dev = st.st_dev, .src_ino = st.st_ino, .src_size = st.st_size,
            .src_mtime = st.st_mtim, .src_ctime = st.st_ctim, .src_fd = -1, .fd = -1,
            .bytes = charge, .owner = owner, .copying = true, .serial = serial,
          };
        }
    }
  pthread_mutex_unlock (&held_lock);
  if (h == NULL && r < 0)
    budget_refusals++;
  if (h != NULL || r < 0)
    {
      close (fd);
      if (h != NULL && r < 0)
        return st_why_set (why, -r, "a descriptor of its copy: %s", strerror (-r));
      return r;
    }
  int copy = make_copy (fd, &st, why);
  struct stat cs;
  if (copy >= 0 && fstat (copy, &cs) != 0)
    {
      int e = errno;
      close (copy);
      copy = st_why_set (why, e, "fstat of its copy");
    }
  /* The entry, made a copy held (the reservation its charge), or taken
     out; whoever waits for it looks again.  */
  pthread_mutex_lock (&held_lock);
  h = held_by_serial (serial);
  int served = copy;
  if (copy >= 0)
    {
      h->copying = false;
      h->src_fd = fd;
      h->fd = copy;
      h->dev = cs.st_dev;
      h->ino = cs.st_ino;
      served = take_locked (h);
      if (served >= 0)
        copy = fd = -1;   /* the ledger's now */
      else
        {
          h->src_fd = h->fd = -1;
          held_remove_locked (h);
        }
    }
  else
    held_remove_locked (h);
  pthread_cond_broadcast (&held_changed);
  pthread_mutex_unlock (&held_lock);
  if (copy >= 0)
    close (copy);
  if (fd >= 0)
    close (fd);
  if (served < 0 && served != copy)
    return st_why_set (why, -served, "its copy: %s", strerror (-served));
  return served;
}
