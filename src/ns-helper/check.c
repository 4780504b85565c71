#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns-helper/check.h"
#include "ns-helper/elf-build-id.h"

int
st_check_reopen (int path_fd, int fd_dir, char *why, size_t why_size)
{
  struct stat st;
  if (fstat (path_fd, &st) != 0)
    {
      int e = errno;
      snprintf (why, why_size, "fstat: %s", strerror (e));
      close (path_fd);
      return -e;
    }
  /* Checked on the O_PATH descriptor, before any open: opening a FIFO
     would block and opening a device can have effects.  */
  if (!S_ISREG (st.st_mode))
    {
      snprintf (why, why_size, "not a regular file");
      close (path_fd);
      return -EINVAL;
    }
  char name[64];
  snprintf (name, sizeof name, fd_dir >= 0 ? "%d" : "/proc/self/fd/%d", path_fd);
  int fd = openat (fd_dir >= 0 ? fd_dir : AT_FDCWD, name,
                   O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  int e = errno;
  close (path_fd);
  if (fd < 0)
    {
      snprintf (why, why_size, "reopening read-only: %s", strerror (e));
      return -e;
    }
  /* No second fstat: /proc/self/fd/N is a magic link to the very path
     (mount and dentry) of PATH_FD, followed without a lookup or a mount
     crossing, so the reopen opens the inode that the fstat above saw: no
     other file can take its place in between.  */
  return fd;
}

/* The ELF checks of FD, a regular file open read-only.  */
static int
check_build_id (int fd, const uint8_t *want, size_t want_size, struct st_checked *out,
                char *why, size_t why_size)
{
  uint8_t id[ST_ELF_BUILD_ID_MAX];
  int n = st_elf_fd_build_id (fd, id);
  if (n < 0)
    {
      if (n == -ENOEXEC)
        snprintf (why, why_size, "not an ELF file");
      else
        snprintf (why, why_size, "reading its ELF headers: %s", strerror (-n));
      close (fd);
      return n;
    }
  if (want_size > 0 && ((size_t) n != want_size || memcmp (id, want, want_size) != 0))
    {
      char have[2 * ST_NSH_BUILD_ID_MAX + 1], asked[2 * ST_NSH_BUILD_ID_MAX + 1];
      st_nsh_hex (id, (size_t) n, have);
      st_nsh_hex (want, want_size, asked);
      snprintf (why, why_size, "build-id %s, but %s was asked for", n ? have : "(none)", asked);
      close (fd);
      return -ESTALE;
    }
  memcpy (out->build_id, id, (size_t) n);
  out->build_id_size = (size_t) n;
  out->fd = fd;
  return 0;
}

int
st_check_elf (int fd, const uint8_t *want, size_t want_size, struct st_checked *out,
              char *why, size_t why_size)
{
  out->fd = -1;
  out->build_id_size = 0;
  struct stat st;
  /* What another process reopened: trusted for nothing.  A regular file,
     so that the pread below neither blocks nor reads a device, opened
     read-only and not O_PATH.  Landlock already keeps the resolver and
     the workers from any write access, but a helper of one user may run
     without Landlock, and the fd is handed to a client: the one fcntl a
     request keeps this rule independent of the sandbox (review of the
     system-call cuts).  */
  int flags = fcntl (fd, F_GETFL);
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || flags < 0
      || (flags & O_ACCMODE) != O_RDONLY || (flags & O_PATH))
    {
      snprintf (why, why_size, "not a regular file opened read-only");
      close (fd);
      return -EINVAL;
    }
  return check_build_id (fd, want, want_size, out, why, why_size);
}

int
st_check_file (int path_fd, int fd_dir, const uint8_t *want, size_t want_size,
               struct st_checked *out, char *why, size_t why_size)
{
  out->fd = -1;
  out->build_id_size = 0;
  int fd = st_check_reopen (path_fd, fd_dir, why, why_size);
  if (fd < 0)
    return fd;
  /* Reopened here, read-only, and a regular file (st_check_reopen): no
     need to ask the kernel again.  */
  return check_build_id (fd, want, want_size, out, why, why_size);
}
