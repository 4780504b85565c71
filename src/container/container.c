#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/array.h"
#include "container/container.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/untrusted.h"

struct st_containers {
  unsigned kinds;
  struct st_hashmap *by_pid;      /* pid -> struct entry */
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
  cs->kinds = kinds;
  *out = ST_TAKE_PTR (cs);
  return 0;
}

void
st_containers_free (struct st_containers *cs)
{
  if (cs == NULL)
    return;
  st_hashmap_free (cs->by_pid);
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

const struct st_container *
st_containers_of (struct st_containers *cs, pid_t pid)
{
  if (cs == NULL || cs->kinds == 0 || pid <= 0)
    return NULL;
  struct entry *e = st_hashmap_get (cs->by_pid, &pid, sizeof pid);
  if (e != NULL)
    return e->c;
  struct st_container *c = NULL;
  if (cs->kinds & ST_CONTAINER_FLATPAK)
    c = st_flatpak_detect (pid);
  if (c == NULL && (cs->kinds & ST_CONTAINER_PODMAN))
    c = st_podman_detect (pid, -1);
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
    {
      cs->all[cs->n_all++] = c;
      st_info ("pid %d: in %s container %s (%s), %zu host directories", (int) pid,
               c->label.kind, c->name, c->id, c->n_dirs);
    }
  e = malloc (sizeof *e);
  if (e != NULL)
    {
      e->c = c;
      e->adopted = false;
      if (st_hashmap_put (cs->by_pid, &pid, sizeof pid, e) < 0)
        free (e);
    }
  return c;
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
