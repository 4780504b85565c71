#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns-helper/slots.h"

static int
open_dir (const char *dir, char *why, size_t why_size)
{
  /* The socket unit makes /run/eu-stacktrace; a helper started otherwise
     (systemd-socket-activate, the tests) may have to.  */
  char parent[4096];
  snprintf (parent, sizeof parent, "%s", dir);
  char *slash = strrchr (parent, '/');
  if (slash != NULL && slash != parent)
    {
      *slash = '\0';
      (void) mkdir (parent, 0755);
    }
  if (mkdir (dir, 0700) != 0 && errno != EEXIST)
    {
      int e = errno;
      snprintf (why, why_size, "%s: mkdir: %s", dir, strerror (e));
      return -e;
    }
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int e = errno;
      snprintf (why, why_size, "%s: %s", dir, strerror (e));
      return -e;
    }
  struct stat st;
  /* A directory that someone else made or may write could hold lock files
     that they keep locked, or symlinks.  */
  if (fstat (fd, &st) != 0 || st.st_uid != 0 || (st.st_mode & 077) != 0)
    {
      snprintf (why, why_size, "%s: not a directory of root's that only root may enter", dir);
      close (fd);
      return -EPERM;
    }
  return fd;
}

int
st_slot_take (const char *dir, const char *account, unsigned max, char *why, size_t why_size)
{
  int dir_fd = open_dir (dir, why, why_size);
  if (dir_fd < 0)
    return dir_fd;
  for (unsigned i = 0; i < max; i++)
    {
      char name[64];
      snprintf (name, sizeof name, "%s.%u", account, i);
      /* Read-only: an flock needs no write access, and nothing here is
         ever written.  */
      int fd = openat (dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          int e = errno;
          snprintf (why, why_size, "%s/%s: %s", dir, name, strerror (e));
          close (dir_fd);
          return -e;
        }
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          close (dir_fd);
          return fd;
        }
      int e = errno;
      close (fd);
      if (e != EWOULDBLOCK)
        {
          snprintf (why, why_size, "%s/%s: flock: %s", dir, name, strerror (e));
          close (dir_fd);
          return -e;
        }
    }
  close (dir_fd);
  snprintf (why, why_size,
            "%s%s holds %u connections to the namespace helper already, the most one user may",
            strchr (account, '-') == NULL ? "uid " : "", account, max);
  return -EUSERS;
}
