#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/array.h"
#include "container/container.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/untrusted.h"

struct st_containers {
  unsigned kinds;
  struct st_hashmap *by_pid;      /* pid -> struct entry */
  struct st_hashmap *by_ns;       /* ns_key -> struct ns_answer */
  struct stat self_mnt;           /* our own mount namespace (st_ino 0: unknown) */
  ino_t host_mnt;                 /* pid 1's, 0: not known (not ours to see) */
  size_t detected, reused;
  struct st_container **all;      /* every container detected: labels outlive forget */
  size_t n_all, cap_all;
  struct st_container **stored;   /* st_containers_foreach_stored, read once */
  size_t n_stored;
  bool stored_read;
  struct st_container **fstored;  /* flatpak deployments, read once */
  size_t n_fstored;
};

struct entry {
  const struct st_container *c;   /* NULL: the host; owned by all or stored */
  bool adopted;                   /* c is a stored one, by st_containers_adopt */
};

struct ns_answer {
  const struct st_container *c;   /* NULL: none; owned by all */
};

/* Every file below is opened through st_open_untrusted (basic/untrusted.h):
   whoever controls a container or a storage folder may have planted a
   FIFO, a device or a /proc file at the path.  */
int
st_open_in_root (int root_fd, const char *path, int resolve, struct st_why *why)
{
  unsigned flags = (resolve & RESOLVE_IN_ROOT) ? ST_UNTRUSTED_IN_ROOT : ST_UNTRUSTED_BENEATH;
  int fd = st_open_untrusted (root_fd, path, flags, NULL);
  if (fd < 0)
    return st_why_set (why, -fd, "%s", st_untrusted_strerror (fd));
  return fd;
}

/* A directory (or file) under DIR_FD without following any symlink: for
   host paths that someone other than root may control.  */
int
st_open_beneath (int dir_fd, const char *path, bool directory)
{
  if (!directory)
    {
      int fd = st_open_untrusted (dir_fd, path, ST_UNTRUSTED_BENEATH, NULL);
      if (fd < 0)
        {
          errno = -fd;
          return -1;
        }
      return fd;
    }
  struct open_how how = {
    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  return (int) syscall (SYS_openat2, dir_fd, path, &how, sizeof how);
}

/* FD must come from st_open_untrusted (or the kernel's own /proc): the
   read is bounded by MAX and never waits.  */
char *
st_read_small_file (int fd, size_t max, size_t *len)
{
  char *text = NULL;
  int r = st_read_untrusted (fd, max, &text, len);
  if (r < 0)
    errno = -r;
  return r < 0 ? NULL : text;
}

/* Labels end up in folded stacks, where ';' and whitespace separate.  */
static char *
label_safe (const char *s)
{
  char *copy = strdup (s ? s : "?");
  if (copy == NULL)
    return NULL;
  for (char *p = copy; *p; p++)
    if (*p == ';' || *p <= ' ' || *p == '[' || *p == ']' || *p == '"' || *p == '\\'
        || (unsigned char) *p >= 0x7f)
      *p = '_';
  return copy;
}

void
st_container_init (struct st_container *c, enum st_container_kind kind, const char *name,
                   const char *id)
{
  c->kind = kind;
  c->name = label_safe (name);
  c->id = label_safe (id);
  const char *k = kind == ST_CONTAINER_PODMAN ? "podman" : "flatpak";
  if (c->name != NULL && asprintf (&c->root_frame, "[%s:%s]", k, c->name) < 0)
    c->root_frame = NULL;
  c->label = (struct st_container_label) { k, c->name, c->id, c->root_frame };
}

int
st_container_add_dir (struct st_container *c, const char *prefix, int fd, bool upper)
{
  if (c->n_dirs == ST_CONTAINER_MAX_DIRS || fd < 0)
    {
      if (fd >= 0)
        close (fd);
      return -1;
    }
  c->dirs[c->n_dirs] = (struct st_container_dir) { strdup (prefix), fd, upper };
  c->n_dirs++;
  return 0;
}

void
st_container_free (struct st_container *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n_dirs; i++)
    {
      free (c->dirs[i].prefix);
      close (c->dirs[i].fd);
    }
  free (c->name);
  free (c->id);
  free (c->root_frame);
  free (c);
}

int
st_containers_parse_kinds (const char *arg)
{
  if (strcmp (arg, "auto") == 0)
    return ST_CONTAINER_ALL;
  if (strcmp (arg, "none") == 0)
    return 0;
  if (strcmp (arg, "podman") == 0)
    return ST_CONTAINER_PODMAN;
  if (strcmp (arg, "flatpak") == 0)
    return ST_CONTAINER_FLATPAK;
  return -1;
}

int
st_containers_new (unsigned kinds, struct st_containers **out)
{
  _cleanup_free_ struct st_containers *cs = calloc (1, sizeof *cs);
  if (cs == NULL || (cs->by_pid = st_hashmap_new (free)) == NULL)
    return -ENOMEM;
  if ((cs->by_ns = st_hashmap_new (free)) == NULL)
    {
      st_hashmap_free (cs->by_pid);
      return -ENOMEM;
    }
  cs->kinds = kinds;
  /* Ours lives as long as we do, so its inode stays its own; pid 1's is
     the host's (stat'ed once: it never changes), which this machine may
     not let us see.  */
  if (stat ("/proc/self/ns/mnt", &cs->self_mnt) != 0)
    cs->self_mnt.st_ino = 0;
  struct stat host;
  cs->host_mnt = stat ("/proc/1/ns/mnt", &host) == 0 ? host.st_ino : 0;
  *out = ST_TAKE_PTR (cs);
  return 0;
}

void
st_containers_free (struct st_containers *cs)
{
  if (cs == NULL)
    return;
  st_hashmap_free (cs->by_pid);
  st_hashmap_free (cs->by_ns);
  for (size_t i = 0; i < cs->n_all; i++)
    st_container_free (cs->all[i]);
  free (cs->all);
  for (size_t i = 0; i < cs->n_stored; i++)
    st_container_free (cs->stored[i]);
  free (cs->stored);
  for (size_t i = 0; i < cs->n_fstored; i++)
    st_container_free (cs->fstored[i]);
  free (cs->fstored);
  free (cs);
}

/* Detection by what the host sees (podman.c, flatpak.c): a new
   st_container, or NULL.  */
static struct st_container *
detect (struct st_containers *cs, pid_t pid, const struct st_proc_facts *facts)
{
  cs->detected++;
  struct st_container *c = NULL;
  if (cs->kinds & ST_CONTAINER_FLATPAK)
    c = st_flatpak_detect (pid, facts);
  if (c == NULL && (cs->kinds & ST_CONTAINER_PODMAN))
    c = st_podman_detect (pid, facts);
  if (c != NULL && c->root_frame == NULL)
    {
      st_container_free (c);
      c = NULL;
    }
  if (c != NULL && ST_GROW (cs->all, cs->cap_all, cs->n_all, 8) < 0)
    {
      st_container_free (c);
      return NULL;
    }
  if (c != NULL)
    cs->all[cs->n_all++] = c;
  return c;
}

/* The answers kept per mount namespace: a bound on their number (a
   machine that makes namespaces or cgroups without end), past which
   processes are detected one by one again.  A key is ~100-300 bytes on a
   usual machine, at most CGROUP_STACK_MAX: 4 MiB at worst.  */
#define NS_ANSWERS_MAX 1024
/* Bytes of /proc/PID/cgroup read on the stack: a line is a hierarchy's
   number, its controllers and one path, ~100 bytes even on a cgroup v1
   machine's dozen hierarchies.  A longer text (deep or long names, which
   a user with a delegated cgroup may choose) is read on the heap up to
   ST_PODMAN_CGROUP_MAX as before, and its process is detected alone.  */
#define CGROUP_STACK_MAX 4096

#ifndef NS_GET_MNTNS_ID
#define NS_GET_MNTNS_ID _IOR (0xb7, 0x5, uint64_t)   /* Linux 6.8 */
#endif

/* The key of a process's answer.  A process's container follows from its
   mount namespace, its cgroup (podman's libpod-<id>, flatpak's app scope),
   its users (whose metadata may describe it) and its root (where
   /run/.containerenv and /.flatpak-info are read): processes that agree
   on all four get the first one's answer without reading any container
   metadata.  The namespace must be the same one, not one that reuses its
   inode number (the kernel reuses them at once): ours while we run, else
   the namespace's unique id (NS_GET_MNTNS_ID).  */
struct ns_key {
  char kind;                /* 's': ours (id: inode), 'u': unique id */
  uint64_t id;
  uid_t owners[2];
  dev_t root_dev;
  ino_t root_ino;
  char cgroup[CGROUP_STACK_MAX];
};

/* Fills KEY->kind and KEY->id; FACTS' mount namespace from the same open
   file when it is not ours.  -errno when its identity is not known
   (a kernel before 6.8): no answer is then shared.  */
static int
ns_identity (const struct st_containers *cs, pid_t pid, struct st_proc_facts *facts,
             struct ns_key *key)
{
  if (cs->self_mnt.st_ino != 0 && facts->mnt_ino == cs->self_mnt.st_ino
      && facts->mnt_dev == cs->self_mnt.st_dev)
    {
      key->kind = 's';
      key->id = (uint64_t) facts->mnt_ino;
      return 0;
    }
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return -errno;
  uint64_t id;
  if (ioctl (fd, NS_GET_MNTNS_ID, &id) < 0)
    return -errno;
  /* The id is of the namespace the process has now: so are the facts.  */
  facts->mnt_ino = st.st_ino;
  facts->mnt_dev = st.st_dev;
  key->kind = 'u';
  key->id = id;
  return 0;
}

const struct st_container *
st_containers_of (struct st_containers *cs, pid_t pid)
{
  if (cs == NULL || cs->kinds == 0 || pid <= 0)
    return NULL;
  struct entry *e = st_hashmap_get (cs->by_pid, &pid, sizeof pid);
  if (e != NULL)
    return e->c;
  e = malloc (sizeof *e);
  if (e == NULL)
    return NULL;
  *e = (struct entry) { 0 };
  if (st_hashmap_put (cs->by_pid, &pid, sizeof pid, e) < 0)
    {
      free (e);
      e = NULL;
    }

  struct st_proc_facts facts = { 0 };
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  struct stat st;
  /* Gone, or the host's own mount namespace: not a container.  */
  if (stat (path, &st) != 0 || (cs->host_mnt != 0 && st.st_ino == cs->host_mnt))
    return NULL;
  facts.mnt_ino = st.st_ino;
  facts.mnt_dev = st.st_dev;
  if (st_proc_owners (pid, facts.owners) < 0)
    return NULL;

  struct ns_key key;
  /* Hashed as bytes: no padding left unset.  */
  memset (&key, 0, offsetof (struct ns_key, cgroup));
  _cleanup_free_ char *big = NULL;
  int n = st_proc_read_into (pid, "cgroup", key.cgroup, sizeof key.cgroup);
  bool keyed = n >= 0;
  if (n == -EFBIG)
    n = st_proc_read_file (pid, "cgroup", ST_PODMAN_CGROUP_MAX, &big);
  facts.cgroup = n < 0 ? NULL : big != NULL ? big : key.cgroup;
  facts.cgroup_len = n < 0 ? 0 : (size_t) n;
  struct stat root;
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  keyed = keyed && stat (path, &root) == 0 && ns_identity (cs, pid, &facts, &key) == 0;
  size_t key_len = 0;
  bool answered = false;
  if (keyed)
    {
      memcpy (key.owners, facts.owners, sizeof key.owners);
      key.root_dev = root.st_dev;
      key.root_ino = root.st_ino;
      key_len = offsetof (struct ns_key, cgroup) + (size_t) n;
      struct ns_answer *a = st_hashmap_get (cs->by_ns, &key, key_len);
      /* A flatpak instance's answer holds for its bwrap child's
         descendants only (flatpak.c): its user may have named any process
         of the namespace as that child, and a process that entered the
         namespace from outside (podman exec, nsenter) is detected as
         before.  The first answer is kept.  */
      answered = a != NULL;
      if (a != NULL && a->c != NULL && a->c->instance_child > 0
          && !st_flatpak_instance_holds (a->c->instance_child, facts.mnt_ino, pid))
        a = NULL;
      if (a != NULL)
        {
          cs->reused++;
          if (e != NULL)
            e->c = a->c;
          if (a->c != NULL)
            st_info ("pid %d: in %s container %s (%s), %zu host directories", (int) pid,
                     a->c->label.kind, a->c->name, a->c->id, a->c->n_dirs);
          return a->c;
        }
    }

  struct st_container *c = detect (cs, pid, &facts);
  if (c != NULL)
    st_info ("pid %d: in %s container %s (%s), %zu host directories", (int) pid,
             c->label.kind, c->name, c->id, c->n_dirs);
  if (e != NULL)
    e->c = c;
  /* Which answers stay right for the namespace's later processes: in
     ours, any (no container's metadata can come to name the namespace we
     already run in); in another, a container found with its files.  Not
     "none" there: a container's first process (runc's init) runs before
     podman writes its pidfile, and a flatpak label from the cgroup alone
     before the instance is known; each later process looks again, as
     before.  */
  bool keep = keyed && !answered && (key.kind == 's' || (c != NULL && c->n_dirs > 0))
              && st_hashmap_size (cs->by_ns) < NS_ANSWERS_MAX;
  struct ns_answer *a = keep ? malloc (sizeof *a) : NULL;
  if (a != NULL)
    {
      a->c = c;
      if (st_hashmap_put (cs->by_ns, &key, key_len, a) < 0)
        free (a);
    }
  return c;
}

void
st_containers_counts (const struct st_containers *cs, size_t *detected, size_t *reused)
{
  *detected = cs != NULL ? cs->detected : 0;
  *reused = cs != NULL ? cs->reused : 0;
}

const struct st_container *
st_containers_detected (struct st_containers *cs, pid_t pid)
{
  const struct st_container *c = st_containers_of (cs, pid);
  struct entry *e = c ? st_hashmap_get (cs->by_pid, &pid, sizeof pid) : NULL;
  return e != NULL && e->adopted ? NULL : c;
}

void
st_containers_adopt (struct st_containers *cs, pid_t pid, const struct st_container *c)
{
  if (cs == NULL || c == NULL || pid <= 0)
    return;
  struct entry *e = st_hashmap_get (cs->by_pid, &pid, sizeof pid);
  if (e != NULL && e->c != NULL)
    return;
  if (e == NULL)
    {
      e = malloc (sizeof *e);
      if (e == NULL || st_hashmap_put (cs->by_pid, &pid, sizeof pid, e) < 0)
        {
          free (e);
          return;
        }
    }
  /* Stored containers live until st_containers_free, like the entry.  */
  e->c = c;
  e->adopted = true;
  st_info ("pid %d: labelled %s: it ran files of its own (the process was gone)", (int) pid,
           c->root_frame);
}

void
st_containers_forget (struct st_containers *cs, pid_t pid)
{
  if (cs != NULL)
    st_hashmap_remove (cs->by_pid, &pid, sizeof pid);
}

int
st_container_open (const struct st_container *c, const char *path, size_t *next_dir,
                   bool *upper, struct st_why *why)
{
  for (size_t i = *next_dir; i < c->n_dirs; i++)
    {
      const struct st_container_dir *d = &c->dirs[i];
      size_t plen = strlen (d->prefix);
      const char *rest;
      if (strcmp (d->prefix, "/") == 0)
        rest = path;
      else if (strncmp (path, d->prefix, plen) == 0 && (path[plen] == '/' || path[plen] == '\0'))
        rest = path + plen;
      else
        continue;
      while (*rest == '/')
        rest++;
      if (*rest == '\0')
        continue;
      /* Symlinks in the layer are the container's: they resolve inside
         it, never on the host.  */
      int fd = st_open_in_root (d->fd, rest, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, NULL);
      if (fd >= 0)
        {
          *next_dir = i + 1;
          *upper = d->upper;
          return fd;
        }
    }
  *next_dir = c->n_dirs;
  return st_why_set (why, ENOENT, "not in the %s container's host directories", c->label.kind);
}

static int
add_stored (const struct st_container *c, void *arg)
{
  (void) c;
  (void) arg;
  return 0;
}

int
st_containers_foreach_stored (struct st_containers *cs,
                              int (*fn) (const struct st_container *c, void *arg), void *arg)
{
  if (cs == NULL || cs->kinds == 0)
    return 0;
  if (!cs->stored_read)
    {
      cs->stored_read = true;
      if (cs->kinds & ST_CONTAINER_PODMAN)
        st_podman_foreach_stored (add_stored, NULL, &cs->stored, &cs->n_stored);
      if (cs->kinds & ST_CONTAINER_FLATPAK)
        st_flatpak_foreach_stored (add_stored, NULL, &cs->fstored, &cs->n_fstored);
    }
  for (size_t i = 0; i < cs->n_stored; i++)
    {
      int r = fn (cs->stored[i], arg);
      if (r != 0)
        return r;
    }
  for (size_t i = 0; i < cs->n_fstored; i++)
    {
      int r = fn (cs->fstored[i], arg);
      if (r != 0)
        return r;
    }
  return 0;
}
