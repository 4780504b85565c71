#include "config.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/fd-limit.h"
#include "basic/procfs.h"

bool
st_proc_start_time (pid_t pid, uint64_t *ticks)
{
  struct st_proc_stat st;
  if (st_proc_stat (pid, &st) < 0)
    return false;
  *ticks = st.start_time;
  return true;
}

/* Our own mount namespace, looked up once: this process never changes
   it (the helper's setns is in its own processes), and the stat of a
   namespace link walks /proc, which is not cheap where it is asked for
   every process that maps new files.  */
static struct stat own_mount_namespace;
static bool own_mount_namespace_known;
static pthread_once_t own_mount_namespace_once = PTHREAD_ONCE_INIT;

static void
look_up_own_mount_namespace (void)
{
  own_mount_namespace_known = stat ("/proc/self/ns/mnt", &own_mount_namespace) == 0;
}

bool
st_proc_other_mount_namespace (pid_t pid, uint64_t *ino)
{
  pthread_once (&own_mount_namespace_once, look_up_own_mount_namespace);
  if (!own_mount_namespace_known)
    return false;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  struct stat theirs;
  if (stat (path, &theirs) != 0
      || (own_mount_namespace.st_ino == theirs.st_ino
          && own_mount_namespace.st_dev == theirs.st_dev))
    return false;
  *ino = (uint64_t) theirs.st_ino;
  return true;
}

bool
st_proc_in_other_mount_namespace (pid_t pid)
{
  uint64_t ino;
  return st_proc_other_mount_namespace (pid, &ino);
}

int
st_proc_read_file (pid_t pid, const char *name, size_t max, char **out)
{
  _cleanup_free_ char *buf = malloc (max + 1);
  if (buf == NULL)
    return -ENOMEM;
  int n = st_proc_read_into (pid, name, buf, max + 1);
  if (n < 0)
    return n;
  *out = ST_TAKE_PTR (buf);
  return n;
}

int
st_proc_read_into (pid_t pid, const char *name, char *buf, size_t size)
{
  assert (size > 0);
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -st_fd_limit_check (errno, path);
  size_t len = 0;
  buf[0] = '\0';
  /* /proc files are made at each read() from the process's state: read
     until the end, as a short read says nothing about what is left.  One
     byte past the text is asked for, to tell a file that fills BUF from
     a longer one.  */
  for (;;)
    {
      char *to = len < size - 1 ? buf + len : NULL;
      char spill;
      ssize_t n = to != NULL ? read (fd, to, size - 1 - len) : read (fd, &spill, 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        break;
      if (to == NULL)
        return -EFBIG;
      len += (size_t) n;
      buf[len] = '\0';
    }
  return (int) len;
}

int
st_proc_parse_stat (const char *text, struct st_proc_stat *out)
{
  /* Fields count from the ")" that ends field 2, the comm, which may hold
     spaces and parentheses itself: each space starts the next field.  */
  const char *p = strrchr (text, ')');
  int ppid;
  if (p == NULL || sscanf (p + 1, " %*c %d", &ppid) != 1)
    return -EINVAL;
  for (int field = 3; field <= 22 && p != NULL; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL)
    return -EINVAL;
  char *end;
  unsigned long long ticks = strtoull (p + 1, &end, 10);
  if (end == p + 1)
    return -EINVAL;
  out->ppid = (pid_t) ppid;
  out->start_time = ticks;
  return 0;
}

int
st_proc_stat (pid_t pid, struct st_proc_stat *out)
{
  _cleanup_free_ char *text = NULL;
  int r = st_proc_read_file (pid, "stat", 4096, &text);
  if (r < 0)
    return r;
  return st_proc_parse_stat (text, out);
}

int
st_proc_maps_foreach (pid_t pid, int (*fn) (const struct st_proc_map *m, void *arg), void *arg)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", (int) pid);
  _cleanup_fclose_ FILE *f = fopen (path, "re");
  if (f == NULL)
    return -st_fd_limit_check (errno, path);
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

struct file_at {
  uint64_t start, end, pgoff;
  bool has_dev_ino;
  unsigned maj, min;
  uint64_t ino;
};

/* st_proc_maps_foreach's visitor: 1 when the line at the start is the
   mapping, 2 when it is another (the walk stops at the start either
   way).  */
static int
is_file_at (const struct st_proc_map *m, void *arg)
{
  const struct file_at *w = arg;
  if (m->start != w->start)
    return 0;
  bool same = m->end == w->end && m->pgoff == w->pgoff
              && (!w->has_dev_ino || (m->maj == w->maj && m->min == w->min && m->inode == w->ino));
  return same ? 1 : 2;
}

int
st_proc_maps_file_at (pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                      bool has_dev_ino, unsigned maj, unsigned min, uint64_t ino)
{
  struct file_at w = { start, end, pgoff, has_dev_ino, maj, min, ino };
  int r = st_proc_maps_foreach (pid, is_file_at, &w);
  return r < 0 ? r : r == 1;
}

int
st_proc_cmdline (pid_t pid, char *buf, size_t size)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t got = read (fd, buf, size - 1);
  if (got < 0)
    return -errno;
  buf[got] = '\0';
  /* NULs between the arguments (the last one's too).  */
  for (ssize_t i = 0; i < got - 1; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  return (int) got;
}

int
st_proc_comm (pid_t pid, pid_t tid, char *buf, size_t size)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task/%d/comm", (int) pid, (int) tid);
  _cleanup_fclose_ FILE *f = fopen (path, "re");
  if (f == NULL)
    return -errno;
  if (fgets (buf, (int) size, f) == NULL)
    buf[0] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return (int) strlen (buf);
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
      /* Set for valgrind, which does not know what this ioctl writes: the
         owners are hashed as a key (container.c).  */
      uid_t owner = 0;
      if (ioctl (fd, NS_GET_OWNER_UID, &owner) == 0)
        owners[1] = owner;
      close (fd);
    }
  return 0;
}

int
st_proc_charged_uid (pid_t pid, uid_t real_uid, uid_t *out)
{
  uint64_t userns;
  return st_proc_charged (pid, real_uid, out, &userns);
}

int
st_proc_charged (pid_t pid, uid_t real_uid, uid_t *out, uint64_t *userns)
{
  *out = real_uid;
  *userns = 0;
  struct stat ours;
  if (stat ("/proc/self/ns/user", &ours) < 0)
    return -errno;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  /* User namespaces nest at most 32 deep: the bound is the kernel's.  */
  for (int depth = 0; depth <= 33; depth++)
    {
      struct stat st;
      if (fstat (fd, &st) < 0 || (st.st_ino == ours.st_ino && st.st_dev == ours.st_dev))
        break;
      uid_t owner = 0;   /* set for valgrind, as above */
      if (ioctl (fd, NS_GET_OWNER_UID, &owner) < 0)
        break;
      *out = owner;
      *userns = (uint64_t) st.st_ino;
      /* EPERM: the parent is outside ours; this owner is the last we see.  */
      int parent = ioctl (fd, NS_GET_PARENT);
      if (parent < 0)
        break;
      close (fd);
      fd = parent;
    }
  close (fd);
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

