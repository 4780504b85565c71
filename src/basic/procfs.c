#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/procfs.h"

bool
st_proc_start_time (pid_t pid, uint64_t *ticks)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  /* Fields count from the ")" that ends field 2, the comm, which may hold
     spaces and parentheses itself: each space starts the next field.  */
  char *p = strrchr (buf, ')');
  for (int field = 3; field <= 22 && p != NULL; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL)
    return false;
  char *end;
  *ticks = strtoull (p + 1, &end, 10);
  return end != p + 1;
}

int
st_proc_owners (pid_t pid, uid_t owners[2])
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  int e = errno;
  close (fd);
  if (n <= 0)
    return n < 0 ? -e : -EIO;
  buf[n] = '\0';
  const char *u = strstr (buf, "\nUid:");
  unsigned long real;
  if (u == NULL || sscanf (u + 5, "%lu", &real) != 1)
    return -EIO;
  owners[0] = (uid_t) real;
  owners[1] = (uid_t) real;
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      uid_t owner;
      if (ioctl (fd, NS_GET_OWNER_UID, &owner) == 0)
        owners[1] = owner;
      close (fd);
    }
  return 0;
}

bool
st_proc_owned_by (const uid_t owners[2], uid_t uid)
{
  return uid == 0 || uid == owners[0] || uid == owners[1];
}

bool
st_proc_parse_maps_line (char *line, struct st_proc_map *m)
{
  unsigned long long start, end, pgoff, inode;
  char perms[8] = "";
  int name_at = -1;
  if (sscanf (line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &m->maj,
              &m->min, &inode, &name_at) < 7
      || name_at < 0 || strlen (perms) != 4 || start >= end)
    return false;
  m->start = start;
  m->end = end;
  m->pgoff = pgoff;
  m->inode = inode;
  memcpy (m->perms, perms, 5);
  char *name = line + name_at;
  name[strcspn (name, "\n")] = '\0';
  m->name = name;
  return true;
}

int
st_proc_foreach_map (pid_t pid, int (*fn) (const struct st_proc_map *m, void *arg), void *arg)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", (int) pid);
  _cleanup_fclose_ FILE *f = fopen (path, "re");
  if (f == NULL)
    return -errno;
  _cleanup_free_ char *line = NULL;
  size_t cap = 0;
  int r = 0;
  while (r == 0 && getline (&line, &cap, f) > 0)
    {
      struct st_proc_map m;
      if (st_proc_parse_maps_line (line, &m))
        r = fn (&m, arg);
    }
  return r;
}

ssize_t
st_proc_read (pid_t pid, const char *name, char *buf, size_t size)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = read (fd, buf, size - 1);
  if (n < 0)
    return -errno;
  buf[n] = '\0';
  return n;
}
