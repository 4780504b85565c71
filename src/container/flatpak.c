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
#include "core/log.h"

/* flatpak: each running sandbox has an instance directory,
   $XDG_RUNTIME_DIR/.flatpak/<instance>/, with bwrapinfo.json (the sandbox's
   pid and namespaces, written by bwrap on the host) and info (the keyfile
   that is also the sandbox's /.flatpak-info).  Without one, /.flatpak-info
   is read inside the process's root, never on the host.  Either way the
   app-path and runtime-path must be deployments inside a flatpak
   installation, reached without following symlinks.  */

/* The value of KEY= in keyfile TEXT, copied into OUT.  */
static bool
keyfile_get (const char *text, const char *key, char *out, size_t size)
{
  size_t klen = strlen (key);
  for (const char *p = text; p != NULL && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp (p, key, klen) == 0 && p[klen] == '=')
      {
        const char *v = p + klen + 1;
        size_t n = strcspn (v, "\n");
        if (n >= size)
          return false;
        memcpy (out, v, n);
        out[n] = '\0';
        return true;
      }
  return false;
}

static bool
in_installation (const char *path, const char *what)
{
  if (path[0] != '/' || strstr (path, "/../") != NULL || strstr (path, "/./") != NULL)
    return false;
  char want[64];
  snprintf (want, sizeof want, "/flatpak/%s/", what);
  if (strncmp (path, "/var/lib/flatpak/", 17) == 0)
    return strncmp (path + 16, want, strlen (want)) == 0;
  const char *user = strstr (path, "/.local/share/flatpak/");
  return user != NULL && (strncmp (path, "/home/", 6) == 0 || strncmp (path, "/root/", 6) == 0)
         && strncmp (user + 13, want, strlen (want)) == 0;
}

static int
open_deploy (const char *path)
{
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  return (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static struct st_container *
from_info (const char *text, const char *instance, const char *source)
{
  char name[256], app[1024], runtime[1024], inst[128];
  if (!keyfile_get (text, "name", name, sizeof name))
    return NULL;
  if (instance == NULL && keyfile_get (text, "instance-id", inst, sizeof inst))
    instance = inst;
  struct st_container *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  st_container_init (c, ST_CONTAINER_FLATPAK, name, instance ? instance : "?");
  if (keyfile_get (text, "app-path", app, sizeof app))
    {
      char want[300];
      snprintf (want, sizeof want, "/app/%s/", name);
      if (in_installation (app, "app") && strstr (app, want) != NULL)
        st_container_add_dir (c, "/app", open_deploy (app), true);
      else
        st_warning ("flatpak %s: refusing app-path %s from %s", name, app, source);
    }
  if (keyfile_get (text, "runtime-path", runtime, sizeof runtime))
    {
      if (in_installation (runtime, "runtime"))
        st_container_add_dir (c, "/usr", open_deploy (runtime), false);
      else
        st_warning ("flatpak %s: refusing runtime-path %s from %s", name, runtime, source);
    }
  return c;
}

static long long
json_int (json_object *o, const char *key)
{
  json_object *v;
  if (!json_object_object_get_ex (o, key, &v) || !json_object_is_type (v, json_type_int))
    return -1;
  return json_object_get_int64 (v);
}

/* The instance whose sandbox has mount namespace MNT, under RUNTIME_DIR.  */
static struct st_container *
from_instances (const char *runtime_dir, ino_t mnt)
{
  char path[512];
  snprintf (path, sizeof path, "%s/.flatpak", runtime_dir);
  DIR *d = opendir (path);
  if (d == NULL)
    return NULL;
  struct st_container *c = NULL;
  struct dirent *e;
  while (c == NULL && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] == '.')
        continue;
      int dfd = openat (dirfd (d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      int fd = st_open_beneath (dfd, "bwrapinfo.json", false);
      char *text = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
      if (fd >= 0)
        close (fd);
      json_object *o = text ? json_tokener_parse (text) : NULL;
      free (text);
      long long ns = o ? json_int (o, "mnt-namespace") : -1;
      long long child = o ? json_int (o, "child-pid") : -1;
      json_object_put (o);
      if (ns < 0 && child > 0)
        {
          struct stat st;
          snprintf (path, sizeof path, "/proc/%lld/ns/mnt", child);
          if (stat (path, &st) == 0)
            ns = (long long) st.st_ino;
        }
      if (ns >= 0 && (ino_t) ns == mnt)
        {
          fd = st_open_beneath (dfd, "info", false);
          text = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
          if (fd >= 0)
            close (fd);
          if (text != NULL)
            c = from_info (text, e->d_name, "its instance directory");
          free (text);
        }
      close (dfd);
    }
  closedir (d);
  return c;
}

struct st_container *
st_flatpak_detect (pid_t pid)
{
  char path[64];
  struct stat st, host;
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  if (stat (path, &st) != 0)
    return NULL;
  if (stat ("/proc/1/ns/mnt", &host) == 0 && st.st_ino == host.st_ino)
    return NULL;
  struct st_container *c = NULL;
  DIR *d = opendir ("/run/user");
  struct dirent *e;
  while (c == NULL && d != NULL && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      {
        char dir[300];
        snprintf (dir, sizeof dir, "/run/user/%s", e->d_name);
        c = from_instances (dir, st.st_ino);
      }
  if (d != NULL)
    closedir (d);
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (c == NULL && xdg != NULL && xdg[0] == '/')
    c = from_instances (xdg, st.st_ino);
  if (c != NULL)
    return c;
  /* No instance directory: /.flatpak-info inside the sandbox, never a
     host path (it may be a symlink to one).  */
  char why[64];
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  int root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return NULL;
  int fd = st_open_in_root (root, ".flatpak-info", RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, why,
                            sizeof why);
  close (root);
  if (fd < 0)
    return NULL;
  char *text = st_read_small_file (fd, 1 << 16, NULL);
  close (fd);
  if (text != NULL)
    c = from_info (text, NULL, "/.flatpak-info");
  free (text);
  return c;
}
