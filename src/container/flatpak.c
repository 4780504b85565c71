#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "container/container.h"
#include "container/flatpak-install.h"
#include "container/flatpak-parse.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/untrusted.h"

/* flatpak: each running sandbox has an instance directory,
   $XDG_RUNTIME_DIR/.flatpak/<instance>/, with bwrapinfo.json (the sandbox's
   pid and namespaces, written by bwrap on the host) and info (the keyfile
   that is also the sandbox's /.flatpak-info).  Without one, /.flatpak-info
   is read inside the process's root, never on the host.  Either way the
   app-path and runtime-path must be deployments inside a flatpak
   installation, reached without following symlinks.  */

bool
st_flatpak_app_from_cgroup_text (const char *text, char *out, size_t size)
{
  bool found = false;
  for (const char *line = text; !found && line != NULL && *line; line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    {
      size_t n = strcspn (line, "\n");
      const char *s = NULL;
      for (const char *q = line; q < line + n; q++)
        if ((q == line || q[-1] == '/') && strncmp (q, "app-flatpak-", 12) == 0)
          s = q + 12;
      if (s == NULL)
        continue;
      size_t m = strcspn (s, "/\n");
      if (m < 7 || strncmp (s + m - 6, ".scope", 6) != 0)
        continue;
      m -= 6;
      size_t d = m;
      while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
        d--;
      if (d == m || d < 2 || s[d - 1] != '-')
        continue;
      m = d - 1;
      size_t o = 0;
      bool ok = true;
      for (size_t i = 0; i < m && ok; i++)
        {
          char ch = s[i];
          unsigned v;
          if (ch == '\\' && i + 3 < m && s[i + 1] == 'x' && sscanf (s + i + 2, "%2x", &v) == 1)
            {
              ch = (char) v;
              i += 3;
            }
          ok = o + 1 < size && (ch == '.' || ch == '_' || ch == '-' || (ch >= '0' && ch <= '9')
                                || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'));
          if (ok)
            out[o++] = ch;
        }
      out[o] = '\0';
      found = ok && o > 0 && strchr (out, '.') != NULL;
    }
  return found;
}

static struct st_container *
from_info (const char *text, const char *instance, const char *source, const char *cgroup_app)
{
  char name[256], app[1024], runtime[1024], inst[128];
  if (!st_flatpak_keyfile_get (text, "Application", "name", name, sizeof name))
    return NULL;
  if (cgroup_app != NULL && strcmp (cgroup_app, name) != 0)
    {
      st_warning ("flatpak: %s names app %s, its cgroup %s: ignoring it", source, name, cgroup_app);
      return NULL;
    }
  if (instance == NULL && st_flatpak_keyfile_get (text, "Instance", "instance-id", inst, sizeof inst))
    instance = inst;
  struct st_container *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  st_container_init (c, ST_CONTAINER_FLATPAK, name, instance ? instance : "?");
  if (st_flatpak_keyfile_get (text, "Instance", "app-path", app, sizeof app)
      && st_container_add_dir (c, "/app", st_flatpak_open_deployment (app, "app", name), true) < 0)
    st_warning ("flatpak %s: refusing app-path %s from %s: not a deployment of it in a flatpak "
                "installation", name, app, source);
  if (st_flatpak_keyfile_get (text, "Instance", "runtime-path", runtime, sizeof runtime)
      && st_container_add_dir (c, "/usr", st_flatpak_open_deployment (runtime, "runtime", NULL), false) < 0)
    st_warning ("flatpak %s: refusing runtime-path %s from %s: not a runtime deployment in a "
                "flatpak installation", name, runtime, source);
  return c;
}

struct st_container *
st_flatpak_from_info_text (const char *text, const char *instance, const char *cgroup_app)
{
  return from_info (text, instance, instance ? "its instance directory" : "/.flatpak-info",
                    cgroup_app);
}

static long long
json_int (json_object *o, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v) || !json_object_is_type (v, json_type_int))
    return -1;
  return json_object_get_int64 (v);
}

void
st_flatpak_parse_bwrapinfo (const char *text, long long *mnt_ns, long long *child_pid)
{
  /* 64 KiB of bwrapinfo.json is small, but json-c's objects are not:
     bound them too.  */
  json_object *o = st_json_parse_bounded (text, strlen (text), 1000, 8, NULL);
  *mnt_ns = o ? json_int (o, "mnt-namespace") : -1;
  *child_pid = o ? json_int (o, "child-pid") : -1;
  json_object_put (o);
}

static pid_t
parent_of (pid_t pid)
{
  struct st_proc_stat st;
  return st_proc_stat (pid, &st) == 0 ? st.ppid : 0;
}

/* Instance directories outlive their sandboxes and namespace inodes are
   reused: the instance holds PID only while its bwrap child (CHILD) lives
   in mount namespace MNT and is PID or an ancestor of it.  */
static bool
instance_holds (long long child, ino_t mnt, pid_t pid)
{
  char path[64];
  struct stat st;
  if (child <= 1 || child > 0x7fffffff)
    return false;
  snprintf (path, sizeof path, "/proc/%lld/ns/mnt", child);
  if (stat (path, &st) != 0 || st.st_ino != mnt)
    return false;
  for (int depth = 0; pid > 1 && depth < 64; depth++, pid = parent_of (pid))
    if (pid == (pid_t) child)
      return true;
  return false;
}

bool
st_flatpak_instance_holds (pid_t child, ino_t mnt, pid_t pid)
{
  return instance_holds (child, mnt, pid);
}

/* Is FD (an instance directory or a file in it) one that may describe a
   process with OWNERS?  A user writes their own /run/user/UID: their
   bwrapinfo.json may name any pid, another user's too.  */
static bool
instance_trusted (int fd, const char *dir, const char *file, const uid_t owners[2])
{
  struct stat st;
  if (fstat (fd, &st) != 0)
    return false;
  if (st_proc_owned_by (owners, st.st_uid))
    return true;
  char name[700], why[128];
  snprintf (name, sizeof name, "%s%s%s", dir, file ? "/" : "", file ? file : "");
  snprintf (why, sizeof why, "owned by uid %u, not by the process's user (uid %u) or root",
            (unsigned) st.st_uid, (unsigned) owners[0]);
  st_untrusted_refuse (name, NULL, why);
  return false;
}

/* The live instance whose sandbox holds PID (mount namespace MNT, owned by
   OWNERS), under RUNTIME_DIR.  */
static struct st_container *
from_instances (const char *runtime_dir, pid_t pid, ino_t mnt, const char *cgroup_app,
                const uid_t owners[2])
{
  char path[512];
  snprintf (path, sizeof path, "%s/.flatpak", runtime_dir);
  struct stat rst;
  /* Another user's runtime directory cannot hold this process's sandbox:
     not even looked at (its files are that user's to plant).  */
  if (stat (runtime_dir, &rst) != 0 || !st_proc_owned_by (owners, rst.st_uid))
    return NULL;
  /* The user's own .flatpak, not a symlink to someone else's.  */
  int dirfd_ = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  DIR *d = dirfd_ >= 0 ? fdopendir (dirfd_) : NULL;
  if (d == NULL)
    {
      if (dirfd_ >= 0)
        close (dirfd_);
      return NULL;
    }
  struct st_container *c = NULL;
  struct dirent *e;
  while (c == NULL && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      int dfd = openat (dirfd (d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      snprintf (path, sizeof path, "%s/.flatpak/%s", runtime_dir, e->d_name);
      if (!instance_trusted (dfd, path, NULL, owners))
        {
          close (dfd);
          continue;
        }
      int fd = st_open_beneath (dfd, "bwrapinfo.json", false);
      if (fd >= 0 && !instance_trusted (fd, path, "bwrapinfo.json", owners))
        {
          close (fd);
          fd = -1;
        }
      char *text = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
      if (fd >= 0)
        close (fd);
      long long ns = -1, child = -1;
      if (text != NULL)
        st_flatpak_parse_bwrapinfo (text, &ns, &child);
      free (text);
      if (ns < 0 && child > 0)
        {
          struct stat st;
          snprintf (path, sizeof path, "/proc/%lld/ns/mnt", child);
          if (stat (path, &st) == 0)
            ns = (long long) st.st_ino;
        }
      if (ns >= 0 && (ino_t) ns == mnt && instance_holds (child, mnt, pid))
        {
          fd = st_open_beneath (dfd, "info", false);
          snprintf (path, sizeof path, "%s/.flatpak/%s", runtime_dir, e->d_name);
          if (fd >= 0 && !instance_trusted (fd, path, "info", owners))
            {
              close (fd);
              fd = -1;
            }
          text = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
          if (fd >= 0)
            close (fd);
          if (text != NULL)
            c = from_info (text, e->d_name, "its instance directory", cgroup_app);
          if (c != NULL)
            c->instance_child = (pid_t) child;
          free (text);
        }
      close (dfd);
    }
  closedir (d);
  return c;
}

/* FACTS: a process outside the host's mount namespace (container.c).  */
struct st_container *
st_flatpak_detect (pid_t pid, const struct st_proc_facts *facts)
{
  char path[64], cg[256];
  const uid_t *owners = facts->owners;
  ino_t mnt = facts->mnt_ino;
  /* The app id from the app-flatpak-ID-N.scope cgroup (systemd escapes the
     id: \xNN), which flatpak sets from outside the sandbox.  */
  const char *cgroup_app = facts->cgroup != NULL && facts->cgroup_len <= ST_FLATPAK_CGROUP_MAX
                                   && st_flatpak_app_from_cgroup_text (facts->cgroup, cg, sizeof cg)
                               ? cg
                               : NULL;
  if (cgroup_app != NULL)
    st_info ("pid %d: its cgroup names flatpak app %s", (int) pid, cgroup_app);
  struct st_container *c = NULL;
  DIR *d = opendir ("/run/user");
  struct dirent *e;
  while (c == NULL && d != NULL && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      {
        char dir[300];
        snprintf (dir, sizeof dir, "/run/user/%s", e->d_name);
        c = from_instances (dir, pid, mnt, cgroup_app, owners);
      }
  if (d != NULL)
    closedir (d);
  /* Without XDG_RUNTIME_DIR (root, no logind) flatpak uses ~/.cache.  */
  if (c == NULL)
    c = from_instances ("/root/.cache", pid, mnt, cgroup_app, owners);
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (c == NULL && xdg != NULL && xdg[0] == '/')
    c = from_instances (xdg, pid, mnt, cgroup_app, owners);
  if (c != NULL)
    return c;
  /* No instance directory: /.flatpak-info inside the sandbox, never a
     host path (it may be a symlink to one).  */
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  int root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd = root < 0 ? -1 : st_open_untrusted_in (root, path, ".flatpak-info", ST_UNTRUSTED_IN_ROOT,
                                                 NULL);
  if (root >= 0)
    close (root);
  char *text = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
  if (fd >= 0)
    close (fd);
  if (text != NULL)
    c = from_info (text, NULL, "/.flatpak-info", cgroup_app);
  free (text);
  if (c == NULL && cgroup_app != NULL)
    {
      /* Its cgroup says which app it is; where its files are, only the
         stored deployments can tell.  */
      c = calloc (1, sizeof *c);
      if (c != NULL)
        st_container_init (c, ST_CONTAINER_FLATPAK, cgroup_app, "?");
    }
  return c;
}
