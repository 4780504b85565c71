#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "basic/frozen-copy.h"

/* File systems whose files other hosts write (magic numbers from the
   kernel's headers, not all of which linux/magic.h has).  */
static const unsigned long network_fs[] = {
  NFS_SUPER_MAGIC,
  0xff534d42 /* CIFS */, 0xfe534d42 /* SMB2 */, SMB_SUPER_MAGIC,
  V9FS_MAGIC, CEPH_SUPER_MAGIC, AFS_SUPER_MAGIC, 0x6b414653 /* kAFS */,
  CODA_SUPER_MAGIC, 0x47504653 /* GPFS */, 0x0bd00bd0 /* Lustre */,
  0x65735546 /* FUSE (refused on open already; a helper's fd is not) */,
};

bool
st_others_may_write (int fd, const struct stat *st)
{
  if (st->st_uid != geteuid () || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return true;
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
st_copy_fd (int from, int to, off_t size)
{
  off_t off = 0;
  while (off < size)
    {
      ssize_t n = sendfile (to, from, &off, (size_t) (size - off));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
    }
  return true;
}

/* The copies held, by every thread: each one's identity and charge.  */
struct held {
  dev_t dev;
  ino_t ino;
  uint64_t bytes;
};
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held;
static size_t held_n, held_cap;
static uint64_t held_bytes;
static uint64_t budget = ST_FROZEN_COPY_BUDGET;

static bool
held_find (dev_t dev, ino_t ino, size_t *at)
{
  for (size_t i = 0; i < held_n; i++)
    if (held[i].dev == dev && held[i].ino == ino)
      {
        *at = i;
        return true;
      }
  return false;
}

/* Takes BYTES from the budget before a copy is made (so that threads
   copying at once cannot all pass it), or -EFBIG.  */
static int
held_reserve (uint64_t bytes, struct st_why *why)
{
  pthread_mutex_lock (&held_lock);
  bool ok = held_bytes + bytes <= budget;
  uint64_t now = held_bytes;
  if (ok)
    held_bytes += bytes;
  pthread_mutex_unlock (&held_lock);
  if (ok)
    return 0;
  return st_why_set (why, EFBIG,
                     "a file others may write is read from a copy, and the copies held take "
                     "%llu of their %llu bytes already",
                     (unsigned long long) now, (unsigned long long) budget);
}

/* The copy ST describes, RESERVED taken for it, holds BYTES: its entry,
   or -ENOMEM (the reservation given back).  RESERVED 0 and BYTES 0: the
   reservation only is given back.  */
static int
held_record (const struct stat *st, uint64_t reserved, uint64_t bytes, struct st_why *why)
{
  pthread_mutex_lock (&held_lock);
  held_bytes -= reserved;
  int r = 0;
  if (st != NULL)
    {
      if (held_n == held_cap)
        {
          size_t cap = held_cap ? 2 * held_cap : 16;
          struct held *grown = realloc (held, cap * sizeof *grown);
          if (grown != NULL)
            {
              held = grown;
              held_cap = cap;
            }
        }
      if (held_n < held_cap)
        {
          held[held_n++] = (struct held) { st->st_dev, st->st_ino, bytes };
          held_bytes += bytes;
        }
      else
        r = -ENOMEM;
    }
  pthread_mutex_unlock (&held_lock);
  return r < 0 ? st_why_set (why, ENOMEM, "no memory for the copies' ledger") : 0;
}

static bool
is_held (const struct stat *st)
{
  size_t at;
  pthread_mutex_lock (&held_lock);
  bool found = held_find (st->st_dev, st->st_ino, &at);
  pthread_mutex_unlock (&held_lock);
  return found;
}

void
st_frozen_close (int fd)
{
  if (fd < 0)
    return;
  struct stat st;
  if (fstat (fd, &st) == 0)
    {
      size_t at;
      pthread_mutex_lock (&held_lock);
      if (held_find (st.st_dev, st.st_ino, &at))
        {
          held_bytes -= held[at].bytes;
          held[at] = held[--held_n];
        }
      pthread_mutex_unlock (&held_lock);
    }
  close (fd);
}

void
st_frozen_set_budget (uint64_t bytes)
{
  pthread_mutex_lock (&held_lock);
  budget = bytes;
  pthread_mutex_unlock (&held_lock);
}

uint64_t
st_frozen_held (void)
{
  pthread_mutex_lock (&held_lock);
  uint64_t n = held_bytes;
  pthread_mutex_unlock (&held_lock);
  return n;
}

/* Copies FROM's data, SIZE bytes, to the memfd TO (as long): extent by
   extent, holes left holes.  0, or -errno: -EIO when FROM ends first.  */
static int
copy_data (int from, int to, off_t size)
{
  off_t pos = 0;
  while (pos < size)
    {
      off_t data = lseek (from, pos, SEEK_DATA);
      if (data < 0 && errno == ENXIO)
        return 0;   /* a hole to the end */
      if (data < 0)
        return -errno;
      if (data >= size)
        return 0;
      off_t hole = lseek (from, data, SEEK_HOLE);
      if (hole < 0 || hole > size)
        hole = size;
      if (hole <= data)
        return -EIO;
      if (lseek (to, data, SEEK_SET) != data)
        return -errno;
      off_t in = data;
      while (in < hole)
        {
          ssize_t n = sendfile (to, from, &in, (size_t) (hole - in));
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            return -errno;
          if (n == 0)
            return -EIO;
        }
      pos = hole;
    }
  return 0;
}

int
st_freeze (int fd, bool always, struct st_why *why)
{
  struct stat st;
  if (fstat (fd, &st) != 0)
    {
      int e = errno;
      close (fd);
      return st_why_set (why, e, "fstat");
    }
  if (is_held (&st) || (!always && !st_others_may_write (fd, &st)))
    return fd;
  /* What the copy will hold: the file's data, no more than its size.  */
  uint64_t page = (uint64_t) getpagesize ();
  uint64_t size_pages = ((uint64_t) st.st_size + page - 1) / page * page;
  uint64_t reserved = (uint64_t) st.st_blocks * 512;
  if (reserved > size_pages)
    reserved = size_pages;
  int r;
  int copy = -1;
  bool have_reserved = false;
  if (!S_ISREG (st.st_mode))
    r = st_why_set (why, EINVAL, "not a regular file");
  else if ((uint64_t) st.st_size > ST_FROZEN_COPY_MAX)
    r = st_why_set (why, EFBIG, "%llu bytes; a file others may write is read from a copy of at most %llu",
                    (unsigned long long) st.st_size, (unsigned long long) ST_FROZEN_COPY_MAX);
  else if ((r = held_reserve (reserved, why)) < 0)
    ;
  else if ((have_reserved = true, copy = memfd_create ("eu-stacktrace-frozen",
                                                       MFD_CLOEXEC | MFD_ALLOW_SEALING)) < 0)
    r = st_why_set (why, errno, "memfd_create for its copy: %s", strerror (errno));
  else if (ftruncate (copy, st.st_size) != 0)
    r = st_why_set (why, errno, "sizing its copy to %llu bytes: %s", (unsigned long long) st.st_size,
                    strerror (errno));
  else if ((r = copy_data (fd, copy, st.st_size)) < 0)
    r = r == -EIO ? st_why_set (why, EIO, "it ended before its %llu bytes were copied (cut short)",
                                (unsigned long long) st.st_size)
                  : st_why_set (why, -r, "copying it: %s", strerror (-r));
  else if (fcntl (copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    r = st_why_set (why, errno, "sealing its copy: %s", strerror (errno));
  else
    {
      /* The entry holds what the copy really takes (the file's blocks
         were the estimate).  */
      struct stat cs;
      if (fstat (copy, &cs) != 0)
        r = st_why_set (why, errno, "fstat of its copy");
      else
        {
          /* Settles the reservation, whatever it returns.  */
          r = held_record (&cs, reserved, (uint64_t) cs.st_blocks * 512, why);
          have_reserved = false;
        }
    }
  if (r < 0 && have_reserved)
    held_record (NULL, reserved, 0, NULL);
  close (fd);
  if (r < 0)
    {
      if (copy >= 0)
        close (copy);
      return r;
    }
  return copy;
}
