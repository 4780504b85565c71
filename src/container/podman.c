#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "basic/array.h"
#include "container/container.h"
#include "container/podman-storage.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/untrusted.h"

/* podman's storage (containers/storage): a graph root holds
   <driver>-containers/containers.json, <driver>-layers/layers.json and
   <driver>-images/images.json, and each layer's files under
   overlay/<layer>/diff or vfs/dir/<layer>.  Rootful and each user's
   rootless storage are read; a rootless user writes all of it, so ids are
   checked to be ids, and no symlink is followed on the way to a layer.  */

static const char *const drivers[] = { "overlay", "vfs" };

struct graph {
  int fd;                   /* O_PATH of the graph root */
  uid_t owner;              /* whose storage: 0 rootful, else the user's */
  char who[300];            /* for messages: "root", "user NAME (uid N)" */
  char runroot[256];
  const char *driver;
  json_object *containers, *layers, *images;  /* arrays (NULL: none) */
};

static bool
is_id (const char *s)
{
  if (s == NULL || strlen (s) != 64)
    return false;
  for (int i = 0; i < 64; i++)
    if (!isxdigit ((unsigned char) s[i]) || isupper ((unsigned char) s[i]))
      return false;
  return true;
}

static const char *
str_of (json_object *o, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v) || !json_object_is_type (v, json_type_string))
    return NULL;
  return json_object_get_string (v);
}

static const char *
first_name (json_object *o)
{
  json_object *v;
  if (json_object_object_get_ex (o, "names", &v) && json_object_is_type (v, json_type_array)
      && json_object_array_length (v) > 0)
    {
      json_object *n = json_object_array_get_idx (v, 0);
      if (json_object_is_type (n, json_type_string))
        return json_object_get_string (n);
    }
  return NULL;
}

/* Appends the elements of the array O to *ARR (our own array of
   references to them, so that the volatile file's elements can be added
   without touching a cached, shared O) and drops the reference O.
   -EINVAL, *ARR untouched, when O is not an array.  */
static int
append_array (json_object *o, json_object **arr)
{
  if (o == NULL || !json_object_is_type (o, json_type_array))
    {
      json_object_put (o);
      return -EINVAL;
    }
  if (*arr == NULL)
    *arr = json_object_new_array ();
  for (size_t i = 0; *arr != NULL && i < json_object_array_length (o); i++)
    json_object_array_add (*arr, json_object_get (json_object_array_get_idx (o, i)));
  json_object_put (o);
  return 0;
}

/* Appends the array in FILE (under the graph root) to *ARR.  The parsed
   file is shared (bounded-json.c caches it).  */
static void
load_array (const struct graph *g, const char *file, json_object **arr)
{
  append_array (st_storage_json_load (g->fd, file, g->owner, g->who), arr);
}

int
st_podman_storage_parse (const char *text, json_object **arr)
{
  return append_array (st_storage_json_parse (text, strlen (text), NULL), arr);
}

static void
graph_free (struct graph *g)
{
  json_object_put (g->containers);
  json_object_put (g->layers);
  json_object_put (g->images);
  if (g->fd >= 0)
    close (g->fd);
}

/* Loads the storage at ROOT with DRIVER.  -1 when it has none.  */
static int
graph_load (struct graph *g, const char *root, const char *runroot, const char *driver,
            uid_t owner, const char *who)
{
  *g = (struct graph) { .fd = -1, .driver = driver, .owner = owner };
  snprintf (g->who, sizeof g->who, "%s", who);
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  g->fd = (int) syscall (SYS_openat2, AT_FDCWD, root, &how, sizeof how);
  if (g->fd < 0)
    return -1;
  snprintf (g->runroot, sizeof g->runroot, "%s", runroot);
  char path[128];
  const char *const volatility[] = { "", "volatile-" };
  for (int v = 0; v < 2; v++)
    {
      snprintf (path, sizeof path, "%s-containers/%scontainers.json", driver, volatility[v]);
      load_array (g, path, &g->containers);
      snprintf (path, sizeof path, "%s-layers/%slayers.json", driver, volatility[v]);
      load_array (g, path, &g->layers);
    }
  snprintf (path, sizeof path, "%s-images/images.json", driver);
  load_array (g, path, &g->images);
  if (g->layers == NULL)
    {
      graph_free (g);
      return -1;
    }
  return 0;
}

static const char *
layer_parent (const struct graph *g, const char *layer)
{
  for (size_t i = 0; i < json_object_array_length (g->layers); i++)
    {
      json_object *l = json_object_array_get_idx (g->layers, i);
      const char *id = str_of (l, "id");
      if (id != NULL && strcmp (id, layer) == 0)
        return str_of (l, "parent");
    }
  return NULL;
}

/* Adds the host directories of LAYER and its parents to C (UPPER: LAYER is
   the container's own).  */
static void
add_layers (struct st_container *c, const struct graph *g, const char *id, const char *layer,
            bool upper)
{
  for (int depth = 0; layer != NULL && depth < ST_CONTAINER_MAX_DIRS; depth++)
    {
      if (!is_id (layer))
        {
          st_warning ("podman storage: refusing layer `%.80s' of %s: not a layer id", layer, id);
          break;
        }
      char path[128];
      if (strcmp (g->driver, "overlay") == 0)
        snprintf (path, sizeof path, "overlay/%s/diff", layer);
      else
        snprintf (path, sizeof path, "vfs/dir/%s", layer);
      int fd = st_open_beneath (g->fd, path, true);
      if (fd >= 0)
        st_container_add_dir (c, "/", fd, upper && depth == 0);
      /* An overlay layer may hold more below its diff: diff1, diff2...
         (a rootless --userns=keep-id container's id-mapped copy of the
         image's top layer keeps its files in diff1), in that order.  */
      for (int extra = 1; strcmp (g->driver, "overlay") == 0 && c->n_dirs < ST_CONTAINER_MAX_DIRS;
           extra++)
        {
          snprintf (path, sizeof path, "overlay/%s/diff%d", layer, extra);
          fd = st_open_beneath (g->fd, path, true);
          if (fd < 0)
            break;
          st_container_add_dir (c, "/", fd, false);
        }
      layer = layer_parent (g, layer);
    }
}

/* A container (or an image, UPPER false) from its top LAYER down.  */
static struct st_container *
make_from_layers (const struct graph *g, const char *name, const char *id, const char *layer,
                  bool upper)
{
  struct st_container *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  st_container_init (c, ST_CONTAINER_PODMAN, name, id);
  add_layers (c, g, id, layer, upper);
  return c;
}

/* /etc/passwd, read once per call with a stream of our own: getpwent's is
   shared by the whole process, and the parallel unwinders call this at the
   same time (one of them then missed users).  Bounded like any file.  */
static FILE *
open_passwd (char **text)
{
  *text = NULL;
  int fd = st_open_untrusted (AT_FDCWD, "/etc/passwd", 0, NULL);
  if (fd < 0)
    return NULL;
  size_t len = 0;
  int r = st_read_untrusted (fd, 16 << 20, text, &len);
  close (fd);
  if (r < 0)
    {
      st_warning ("/etc/passwd: %s", st_untrusted_strerror (r));
      return NULL;
    }
  FILE *f = fmemopen (*text, len, "r");
  if (f == NULL)
    {
      free (*text);
      *text = NULL;
    }
  return f;
}

/* Calls FN with each graph until it returns non-zero: root's, then each
   user's whose files may describe a process of OWNERS (NULL: every
   user's).  A user's storage is skipped before it is read: a process of
   root (a test in a private mount namespace, a service) must not make us
   read, and warn about, every user's metadata (tests/e2e/output-errors.sh
   got hostile.sh's user's refusals on its stderr).  */
static void
for_each_graph (const uid_t *owners, int (*fn) (struct graph *g, void *arg), void *arg)
{
  struct graph g;
  for (size_t d = 0; d < sizeof drivers / sizeof drivers[0]; d++)
    if (graph_load (&g, "/var/lib/containers/storage", "/run/containers/storage", drivers[d],
                    0, "root") == 0)
      {
        int r = fn (&g, arg);
        graph_free (&g);
        if (r)
          return;
      }
  /* Each user's rootless storage.  */
  char *passwd;
  FILE *users = open_passwd (&passwd);
  if (users == NULL)
    return;
  struct passwd pwbuf, *pw;
  char buf[2048];
  while (fgetpwent_r (users, &pwbuf, buf, sizeof buf, &pw) == 0)
    {
      if (pw->pw_uid == 0 || pw->pw_dir == NULL || pw->pw_dir[0] != '/')
        continue;
      if (owners != NULL && !st_proc_owned_by (owners, pw->pw_uid))
        continue;
      char root[512], runroot[256], who[300];
      snprintf (root, sizeof root, "%s/.local/share/containers/storage", pw->pw_dir);
      snprintf (runroot, sizeof runroot, "/run/user/%u/containers", (unsigned) pw->pw_uid);
      snprintf (who, sizeof who, "user %.200s (uid %u)", pw->pw_name, (unsigned) pw->pw_uid);
      struct stat st;
      if (stat (root, &st) != 0 || st.st_uid != pw->pw_uid)
        continue;
      for (size_t d = 0; d < sizeof drivers / sizeof drivers[0]; d++)
        if (graph_load (&g, root, runroot, drivers[d], pw->pw_uid, who) == 0)
          {
            int r = fn (&g, arg);
            graph_free (&g);
            if (r)
              {
                fclose (users);
                free (passwd);
                return;
              }
          }
    }
  fclose (users);
  free (passwd);
}

struct find {
  char id[65];              /* wanted, or empty: match by mount namespace */
  uid_t owners[2];          /* the process's (basic/procfs.h) */
  ino_t mnt_ino;
  dev_t mnt_dev;
  struct st_container *found;
};

/* Does the container's pidfile name a process in F's mount namespace?
   The runroot is the user's (/run/user/UID/containers): the pidfile is
   believed only when it belongs to the process's user or root, and opened
   like any untrusted file.  */
static bool
pid1_shares_mnt (const struct graph *g, const char *id, const struct find *f)
{
  char path[512];
  snprintf (path, sizeof path, "%s/%s-containers/%s/userdata/pidfile", g->runroot + 1, g->driver,
            id);
  int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return false;
  struct stat st;
  int fd = st_open_untrusted (rootfd, path, ST_UNTRUSTED_BENEATH, &st);
  close (rootfd);
  if (fd < 0)
    return false;
  if (!st_proc_owned_by (f->owners, st.st_uid))
    {
      char why[128];
      snprintf (why, sizeof why, "owned by uid %u, not by the process's user or root",
                (unsigned) st.st_uid);
      close (fd);
      snprintf (path, sizeof path, "%s/%s-containers/%s/userdata/pidfile", g->runroot, g->driver,
                id);
      st_untrusted_refuse (path, g->who, why);
      return false;
    }
  char *text = st_read_small_file (fd, 64, NULL);
  close (fd);
  int pid = text ? atoi (text) : 0;
  free (text);
  if (pid <= 0)
    return false;
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", pid);
  return stat (path, &st) == 0 && st.st_ino == f->mnt_ino && st.st_dev == f->mnt_dev;
}

static int
find_in_graph (struct graph *g, void *arg)
{
  struct find *f = arg;
  /* Only root's storage and the process's own user's may name it.  */
  if (!st_proc_owned_by (f->owners, g->owner))
    return 0;
  for (size_t i = 0; g->containers && i < json_object_array_length (g->containers); i++)
    {
      json_object *o = json_object_array_get_idx (g->containers, i);
      const char *id = str_of (o, "id");
      if (!is_id (id))
        continue;
      if (f->id[0] ? strcmp (id, f->id) != 0 : !pid1_shares_mnt (g, id, f))
        continue;
      f->found = make_from_layers (g, first_name (o), id, str_of (o, "layer"), true);
      return 1;
    }
  return 0;
}

bool
st_podman_id_from_cgroup_text (const char *text, char id[65])
{
  for (const char *p = text; (p = strstr (p, "libpod-")) != NULL; p += 7)
    {
      if (strncmp (p, "libpod-conmon-", 14) == 0)
        continue;
      /* 64 bytes only when the text has them: a short name at its end
         must not be copied past its NUL.  */
      if (strnlen (p + 7, 64) < 64)
        continue;
      memcpy (id, p + 7, 64);
      id[64] = '\0';
      if (is_id (id))
        return true;
    }
  return false;
}

/* /run/.containerenv, read inside the process's root.  Untrusted: only a
   hint, used when storage knows the id.  */
static bool
id_from_containerenv (pid_t pid, char id[65])
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  int root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return false;
  int fd = st_open_untrusted_in (root, path, "run/.containerenv", ST_UNTRUSTED_IN_ROOT, NULL);
  close (root);
  if (fd < 0)
    return false;
  char *text = st_read_small_file (fd, 1 << 16, NULL);
  close (fd);
  bool ok = text != NULL && st_podman_id_from_containerenv_text (text, id);
  free (text);
  return ok;
}

bool
st_podman_id_from_containerenv_text (const char *text, char id[65])
{
  const char *p = strstr (text, "\nid=\"");
  if (p == NULL || strlen (p + 5) < 64)
    return false;
  memcpy (id, p + 5, 64);
  id[64] = '\0';
  return is_id (id);
}

/* FACTS: a process outside the host's mount namespace (container.c).  */
struct st_container *
st_podman_detect (pid_t pid, const struct st_proc_facts *facts)
{
  struct find f = { .id = "", .mnt_ino = facts->mnt_ino, .mnt_dev = facts->mnt_dev };
  memcpy (f.owners, facts->owners, sizeof f.owners);
  /* The libpod-<id> cgroup (not libpod-conmon-<id>, conmon's).  */
  if (facts->cgroup != NULL && facts->cgroup_len <= ST_PODMAN_CGROUP_MAX
      && st_podman_id_from_cgroup_text (facts->cgroup, f.id))
    {
      for_each_graph (f.owners, find_in_graph, &f);
      if (f.found)
        return f.found;
    }
  f.id[0] = '\0';
  for_each_graph (f.owners, find_in_graph, &f);
  if (f.found)
    return f.found;
  if (id_from_containerenv (pid, f.id))
    for_each_graph (f.owners, find_in_graph, &f);
  return f.found;
}

struct collect {
  struct st_container ***cache;
  size_t *n;
  size_t cap;
};

static void
collect_add (struct collect *c, struct st_container *ct)
{
  if (ct == NULL)
    return;
  if (ST_GROW (*c->cache, c->cap, *c->n, 16) < 0)
    {
      st_container_free (ct);
      return;
    }
  (*c->cache)[(*c->n)++] = ct;
}

static int
collect_graph (struct graph *g, void *arg)
{
  struct collect *c = arg;
  for (size_t i = 0; g->containers && i < json_object_array_length (g->containers); i++)
    {
      json_object *o = json_object_array_get_idx (g->containers, i);
      const char *id = str_of (o, "id");
      if (is_id (id))
        collect_add (c, make_from_layers (g, first_name (o), id, str_of (o, "layer"), true));
    }
  for (size_t i = 0; g->images && i < json_object_array_length (g->images); i++)
    {
      json_object *o = json_object_array_get_idx (g->images, i);
      const char *id = str_of (o, "id");
      if (!is_id (id))
        continue;
      struct st_container *ct = make_from_layers (g, first_name (o), id, str_of (o, "layer"),
                                                  false);
      /* The image's id-mapped copies of its top layer (made for rootless
         --userns=keep-id containers): their files are the ones such a
         container mapped, and they outlive it.  */
      json_object *mapped;
      if (ct != NULL && json_object_object_get_ex (o, "mapped-layers", &mapped)
          && json_object_is_type (mapped, json_type_array))
        for (size_t m = 0; m < json_object_array_length (mapped); m++)
          {
            json_object *l = json_object_array_get_idx (mapped, m);
            if (json_object_is_type (l, json_type_string))
              add_layers (ct, g, id, json_object_get_string (l), false);
          }
      collect_add (c, ct);
    }
  return 0;
}

/* graph_load and st_podman_foreach_stored on texts rather than files.  */
int
st_podman_storage_collect (int graph_fd, const char *driver,
                           const char *const texts[ST_PODMAN_STORAGE_N],
                           struct st_container ***cache, size_t *n_cache)
{
  struct graph g = { .fd = -1, .driver = driver };
  json_object **arrays[ST_PODMAN_STORAGE_N] = {
    [ST_PODMAN_CONTAINERS] = &g.containers, [ST_PODMAN_LAYERS] = &g.layers,
    [ST_PODMAN_VOLATILE_CONTAINERS] = &g.containers, [ST_PODMAN_VOLATILE_LAYERS] = &g.layers,
    [ST_PODMAN_IMAGES] = &g.images,
  };
  for (int i = 0; i < ST_PODMAN_STORAGE_N; i++)
    if (texts[i] != NULL)
      st_podman_storage_parse (texts[i], arrays[i]);
  if (g.layers == NULL)
    {
      graph_free (&g);
      return -1;
    }
  g.fd = graph_fd;
  struct collect c = { cache, n_cache, *n_cache };
  collect_graph (&g, &c);
  g.fd = -1;
  graph_free (&g);
  return 0;
}

int
st_podman_foreach_stored (int (*fn) (const struct st_container *c, void *arg), void *arg,
                          struct st_container ***cache, size_t *n_cache)
{
  struct collect c = { cache, n_cache, 0 };
  for_each_graph (NULL, collect_graph, &c);
  for (size_t i = 0; i < *n_cache; i++)
    if (fn ((*cache)[i], arg))
      return 1;
  return 0;
}
