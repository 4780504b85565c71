#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns-helper/auth.h"

/* User namespaces nest at most 32 deep.  */
#define MAX_USERNS_DEPTH 33

int
st_peer_get (int sock, struct st_peer *peer)
{
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt (sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return -errno;
  peer->pid = cred.pid;
  peer->uid = cred.uid;
  peer->gid = cred.gid;
  /* The groups the client had when it connected, as the kernel keeps
     them with the socket.  */
  len = sizeof peer->groups;
  if (getsockopt (sock, SOL_SOCKET, SO_PEERGROUPS, peer->groups, &len) != 0)
    return -errno;
  peer->n_groups = len / sizeof peer->groups[0];
  return 0;
}

/* The four ids of a "Uid:" or "Gid:" line of /proc/PID/status.  */
static bool
status_ids (const char *status, const char *key, unsigned long ids[4])
{
  const char *p = strstr (status, key);
  if (p == NULL)
    return false;
  p += strlen (key);
  for (int i = 0; i < 4; i++)
    {
      char *end;
      errno = 0;
      ids[i] = strtoul (p, &end, 10);
      if (errno != 0 || end == p)
        return false;
      p = end;
    }
  return true;
}

/* The hex mask of a "CapPrm:" line of /proc/PID/status.  */
static bool
status_caps (const char *status, const char *key, unsigned long long *caps)
{
  const char *p = strstr (status, key);
  if (p == NULL)
    return false;
  char *end;
  errno = 0;
  *caps = strtoull (p + strlen (key), &end, 16);
  return errno == 0 && end != p + strlen (key);
}

static bool
same_namespace (int fd, const char *path)
{
  struct stat a, b;
  return fstat (fd, &a) == 0 && stat (path, &b) == 0 && a.st_dev == b.st_dev
         && a.st_ino == b.st_ino;
}

/* ptrace's own rule for a client without privileges: the same real,
   effective and saved ids, a dumpable process (the kernel makes a
   non-dumpable process's /proc/PID root's), in the client's user namespace
   (the helper's), and no capability (the kernel wants the process's to be
   a subset of the client's, which SO_PEERCRED does not tell: a client of
   the service is taken to have none).  A process of the client's uid with
   capabilities (a service's AmbientCapabilities=CAP_DAC_READ_SEARCH) may
   map what the client may not read, and the kernel does not let the
   client read it; nor one of its uid in someone else's user namespace.  */
static bool
same_user (const struct st_peer *peer, const struct st_pin *pin)
{
  char status[4096];
  unsigned long uids[4], gids[4];
  unsigned long long cap_prm;
  struct stat st;
  if (st_proc_read (pin->proc_fd, "status", status, sizeof status) < 0
      || !status_ids (status, "\nUid:", uids) || !status_ids (status, "\nGid:", gids)
      || !status_caps (status, "\nCapPrm:", &cap_prm) || cap_prm != 0
      || fstat (pin->proc_fd, &st) != 0)
    return false;
  for (int i = 0; i < 3; i++)
    if (uids[i] != peer->uid || gids[i] != peer->gid)
      return false;
  if (st.st_uid != peer->uid)
    return false;
  int ns = openat (pin->proc_fd, "ns/user", O_RDONLY | O_CLOEXEC);
  bool ours = ns >= 0 && same_namespace (ns, "/proc/self/ns/user");
  if (ns >= 0)
    close (ns);
  return ours;
}

/* The user namespace at the top of NS_FD's chain: the ancestor (or NS_FD
   itself) whose parent is the helper's own namespace, as a new descriptor;
   -ENOENT when NS_FD is the helper's own namespace.  For a process of the
   helper's namespace the kernel asks who owns that one only: its owner
   has every capability in it and below (ns_capable), the owner of a
   namespace nested further down has none there unless it owns the top
   too.  */
static int
top_user_namespace (int ns_fd)
{
  struct stat self;
  if (stat ("/proc/self/ns/user", &self) != 0)
    return -errno;
  int fd = fcntl (ns_fd, F_DUPFD_CLOEXEC, 3);
  for (int depth = 0; fd >= 0 && depth < MAX_USERNS_DEPTH; depth++)
    {
      struct stat st, up;
      if (fstat (fd, &st) != 0 || (st.st_dev == self.st_dev && st.st_ino == self.st_ino))
        break;
      int parent = ioctl (fd, NS_GET_PARENT);
      if (parent < 0)
        break;
      if (fstat (parent, &up) == 0 && up.st_dev == self.st_dev && up.st_ino == self.st_ino)
        {
          close (parent);
          return fd;
        }
      close (fd);
      fd = parent;
    }
  if (fd >= 0)
    close (fd);
  return -ENOENT;
}

/* Does the client own the process's user namespace, as the kernel's
   ptrace rule sees it: the top of its chain (top_user_namespace), and a
   process that is dumpable or whose memory belongs to that namespace (a
   non-dumpable process that took its memory from outside, a root program
   that entered the namespace, has a /proc/PID of the global root)?
   Owning a namespace nested in someone else's (root's container that maps
   the client's uid) proves nothing: the kernel does not let the client
   read such a process.  */
static bool
owns_user_namespace (const struct st_peer *peer, const struct st_pin *pin)
{
  int ns = openat (pin->proc_fd, "ns/user", O_RDONLY | O_CLOEXEC);
  if (ns < 0)
    return false;
  int top = top_user_namespace (ns);
  close (ns);
  if (top < 0)
    return false;
  uid_t owner;
  bool owned = ioctl (top, NS_GET_OWNER_UID, &owner) == 0 && owner == peer->uid;
  close (top);
  struct stat st;
  return owned && fstat (pin->proc_fd, &st) == 0 && st.st_uid != 0;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int
st_peer_account (int sock, const struct st_peer *peer, char *account, size_t size, char *why,
                 size_t why_size)
{
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  /* The very process that connected (Linux 6.5); before, its pid.  */
  if (getsockopt (sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) != 0)
    pidfd = errno == ENOPROTOOPT ? pidfd_open (peer->pid, 0) : -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) peer->pid);
  int ns = peer->pid > 0 ? open (path, O_RDONLY | O_CLOEXEC) : -1;
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
  /* Still running after the open: the namespace is its own.  */
  bool alive = pidfd >= 0 && poll (&pfd, 1, 0) == 0;
  if (pidfd >= 0)
    close (pidfd);
  if (ns < 0 || !alive)
    {
      if (ns >= 0)
        close (ns);
      snprintf (why, why_size,
                "the process that connected (pid %d) is gone: each connection is counted "
                "against the owner of the process that made it", (int) peer->pid);
      return -ESRCH;
    }
  int top = top_user_namespace (ns);
  close (ns);
  if (top == -ENOENT)
    {
      snprintf (account, size, "%u", (unsigned) peer->uid);
      return 0;
    }
  if (top < 0)
    {
      snprintf (why, why_size, "the user namespace of pid %d: %s", (int) peer->pid,
                strerror (-top));
      return top;
    }
  uid_t owner;
  struct stat st;
  int r = 0;
  if (ioctl (top, NS_GET_OWNER_UID, &owner) != 0 || fstat (top, &st) != 0)
    {
      r = -errno;
      snprintf (why, why_size, "the user namespace of pid %d: %s", (int) peer->pid,
                strerror (-r));
    }
  else if (owner != 0)
    /* The user who made it: its subordinate ids are that user's.  */
    snprintf (account, size, "%u", (unsigned) owner);
  else
    /* Root's container with a user namespace of its own: the container
       is the account, whatever uids it runs.  */
    snprintf (account, size, "userns-%lu", (unsigned long) st.st_ino);
  close (top);
  return r;
}

/* Is NS_FD a mount namespace, and the pinned process's?  */
static bool
passed_namespace (const struct st_pin *pin, int ns_fd)
{
  struct stat a, b;
  return ns_fd >= 0 && ioctl (ns_fd, NS_GET_NSTYPE) == CLONE_NEWNS && fstat (ns_fd, &a) == 0
         && fstat (pin->mnt_fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int
st_auth_check (const struct st_peer *peer, bool privileged, const struct st_pin *pin,
               int ns_fd, char *why, size_t why_size)
{
  if (peer->uid == 0)
    return ST_AUTH_MAPPED;
  if (st_pin_alive (pin))
    {
      if (same_user (peer, pin) || owns_user_namespace (peer, pin))
        return ST_AUTH_MAPPED;
    }
  else if (pin->auth != ST_AUTH_NONE)
    return pin->auth;   /* judged while it ran; it cannot change any more */
  if (passed_namespace (pin, ns_fd))
    /* A helper without privileges opens everything with the client's
       credentials anyway.  */
    return privileged ? ST_AUTH_CLIENT : ST_AUTH_MAPPED;
  snprintf (why, why_size, "uid %u may not read process %d%s", (unsigned) peer->uid, pin->pid,
            ns_fd >= 0 ? " (the namespace descriptor passed is not its mount namespace)" : "");
  return -EPERM;
}

bool
st_auth_still_mapped (const struct st_peer *peer, const struct st_pin *pin)
{
  return peer->uid == 0
         || (st_pin_alive (pin) && (same_user (peer, pin) || owns_user_namespace (peer, pin)));
}
