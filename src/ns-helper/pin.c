#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns-helper/pin.h"

static void
pin_close (struct st_pin *p)
{
  int *fds[] = { &p->pidfd, &p->proc_fd, &p->mnt_fd, &p->root_fd };
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    {
      if (*fds[i] >= 0)
        close (*fds[i]);
      *fds[i] = -1;
    }
}

void
st_pins_init (struct st_pins *t)
{
  memset (t, 0, sizeof *t);
}

void
st_pins_clear (struct st_pins *t)
{
  for (size_t i = 0; i < t->n; i++)
    pin_close (&t->pin[i]);
  t->n = 0;
}

bool
st_pin_alive (const struct st_pin *p)
{
  /* A pidfd becomes readable when its process exits.  */
  struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
  int r;
  do
    r = poll (&pfd, 1, 0);
  while (r < 0 && errno == EINTR);
  return r == 0;
}

ssize_t
st_proc_read (int proc_fd, const char *name, char *buf, size_t size)
{
  int fd = openat (proc_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return -errno;
  size_t len = 0;
  while (len + 1 < size)
    {
      ssize_t r = read (fd, buf + len, size - 1 - len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          close (fd);
          return -e;
        }
      if (r == 0)
        break;
      len += (size_t) r;
    }
  close (fd);
  buf[len] = '\0';
  return (ssize_t) len;
}

/* Field 22 of /proc/PID/stat, counted after the command name, which may
   hold spaces and parentheses of its own.  */
static int
read_start_time (int proc_fd, uint64_t *out)
{
  char buf[1024];
  ssize_t n = st_proc_read (proc_fd, "stat", buf, sizeof buf);
  if (n < 0)
    return (int) n;
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return -EIO;
  p++;
  /* Fields 3 to 21, then the start time.  */
  for (int field = 3; field <= 22; field++)
    {
      while (*p == ' ')
        p++;
      if (*p == '\0')
        return -EIO;
      if (field == 22)
        {
          char *end;
          errno = 0;
          unsigned long long v = strtoull (p, &end, 10);
          if (errno != 0 || end == p)
            return -EIO;
          *out = v;
          return 0;
        }
      while (*p != ' ' && *p != '\0')
        p++;
    }
  return -EIO;
}

static int
pin_open (pid_t pid, struct st_pin *p, char *why, size_t why_size)
{
  *p = (struct st_pin) { .pid = pid, .pidfd = -1, .proc_fd = -1, .mnt_fd = -1, .root_fd = -1 };
  p->pidfd = pidfd_open (pid, 0);
  if (p->pidfd < 0)
    {
      int e = errno;
      snprintf (why, why_size, "no process %d: %s", pid, strerror (e));
      return e == EINVAL ? -ESRCH : -e;
    }
  char path[32];
  snprintf (path, sizeof path, "/proc/%d", pid);
  p->proc_fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int e = errno;
  /* The pidfd's process still runs: the /proc/PID opened after it is its
     own, not that of a process that took the pid in between.  */
  if (p->proc_fd < 0 || !st_pin_alive (p))
    {
      snprintf (why, why_size, "process %d exited", pid);
      pin_close (p);
      return p->proc_fd < 0 && e != ENOENT ? -e : -ESRCH;
    }
  int r = read_start_time (p->proc_fd, &p->start_time);
  if (r < 0)
    {
      snprintf (why, why_size, "process %d: reading its start time: %s", pid, strerror (-r));
      pin_close (p);
      return r;
    }
  p->mnt_fd = openat (p->proc_fd, "ns/mnt", O_RDONLY | O_CLOEXEC);
  struct stat mnt;
  if (p->mnt_fd >= 0 && fstat (p->mnt_fd, &mnt) == 0)
    {
      p->mnt_dev = mnt.st_dev;
      p->mnt_ino = mnt.st_ino;
      p->root_fd = openat (p->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
  if (p->mnt_fd < 0 || p->root_fd < 0)
    {
      e = errno;
      if (!st_pin_alive (p) || e == ENOENT)
        {
          snprintf (why, why_size, "process %d exited", pid);
          pin_close (p);
          return -ESRCH;
        }
      snprintf (why, why_size, "process %d: opening its %s: %s", pid,
                p->mnt_fd < 0 ? "mount namespace" : "root", strerror (e));
      pin_close (p);
      return -e;
    }
  return 0;
}

void
st_pins_drop (struct st_pins *t, struct st_pin *p)
{
  size_t i = (size_t) (p - t->pin);
  pin_close (p);
  t->pin[i] = t->pin[--t->n];
}

int
st_pins_get (struct st_pins *t, pid_t pid, const uint64_t *start_time, struct st_pin **out,
             char *why, size_t why_size)
{
  struct st_pin *old = NULL;
  for (size_t i = 0; i < t->n; i++)
    if (t->pin[i].pid == pid)
      {
        old = &t->pin[i];
        break;
      }
  if (old != NULL && (start_time == NULL || *start_time == old->start_time))
    {
      old->last_use = ++t->clock;
      *out = old;
      return 0;
    }
  struct st_pin fresh;
  int r = pin_open (pid, &fresh, why, why_size);
  if (r < 0)
    return r;
  if (start_time != NULL && *start_time != fresh.start_time)
    {
      snprintf (why, why_size,
                "process %d started at %" PRIu64 ", not at %" PRIu64 ": its pid was reused",
                pid, fresh.start_time, *start_time);
      pin_close (&fresh);
      return -ESRCH;
    }
  struct st_pin *slot = old;
  if (slot == NULL && t->n == ST_PIN_MAX)
    {
      slot = &t->pin[0];
      for (size_t i = 1; i < t->n; i++)
        if (t->pin[i].last_use < slot->last_use)
          slot = &t->pin[i];
    }
  if (slot != NULL)
    pin_close (slot);
  else
    slot = &t->pin[t->n++];
  *slot = fresh;
  slot->last_use = ++t->clock;
  slot->id = ++t->ids;
  *out = slot;
  return 0;
}
