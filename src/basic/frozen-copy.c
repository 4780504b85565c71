#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "basic/frozen-copy.h"

bool
st_others_may_write (const struct stat *st)
{
  return st->st_uid != geteuid () || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
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

int
st_frozen_copy (int fd, uint64_t size, uint64_t max, struct st_why *why)
{
  if (size > max)
    return st_why_set (why, EFBIG, "%llu bytes; a file others may write is read from a copy of at most %llu",
                       (unsigned long long) size, (unsigned long long) max);
  int copy = memfd_create ("eu-stacktrace-frozen", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (copy < 0)
    return st_why_set (why, errno, "memfd_create for its copy");
  if (!st_copy_fd (fd, copy, (off_t) size))
    {
      close (copy);
      return st_why_set (why, EIO, "its copy ended before %llu bytes (cut short, or no memory)",
                         (unsigned long long) size);
    }
  if (fcntl (copy, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    {
      int e = errno;
      close (copy);
      return st_why_set (why, e, "sealing its copy");
    }
  return copy;
}
