#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
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

/* ptrace's own rule for a client without privileges: the same real,
   effective and saved ids, and a dumpable process (the kernel makes a
   non-dumpable process's /proc/PID root's).  */
static bool
same_user (const struct st_peer *peer, const struct st_pin *pin)
{
  char status[4096];
  unsigned long uids[4], gids[4];
  struct stat st;
  if (st_proc_read (pin->proc_fd, "status", status, sizeof status) < 0
      || !status_ids (status, "\nUid:", uids) || !status_ids (status, "\nGid:", gids)
      || fstat (pin->proc_fd, &st) != 0)
    return false;
  for (int i = 0; i < 3; i++)
    if (uids[i] != peer->uid || gids[i] != peer->gid)
      return false;
  return st.st_uid == peer->uid;
}

/* Does the client own the process's user namespace, or one of its
   ancestors below the helper's own?  Owning one gives it every capability
   there, CAP_SYS_PTRACE included.  */
static bool
owns_user_namespace (const struct st_peer *peer, const struct st_pin *pin)
{
  struct stat self;
  if (stat ("/proc/self/ns/user", &self) != 0)
    return false;
  int fd = openat (pin->proc_fd, "ns/user", O_RDONLY | O_CLOEXEC);
  bool owned = false;
  for (int depth = 0; fd >= 0 && depth < MAX_USERNS_DEPTH && !owned; depth++)
    {
      struct stat st;
      uid_t owner;
      if (fstat (fd, &st) != 0 || (st.st_dev == self.st_dev && st.st_ino == self.st_ino))
        break;
      if (ioctl (fd, NS_GET_OWNER_UID, &owner) == 0 && owner == peer->uid)
        owned = true;
      int parent = ioctl (fd, NS_GET_PARENT);
      close (fd);
      fd = parent;
    }
  if (fd >= 0)
    close (fd);
  return owned;
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
