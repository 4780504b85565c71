/* flatpak installations on the host: the system's /var/lib/flatpak and
 * each user's ~/.local/share/flatpak, the deployments in them (an app's or
 * a runtime's files), and their .removed/ ones.  Detection (flatpak.c)
 * opens the deployments a sandbox names; a process that is gone is looked
 * for in every one (st_flatpak_foreach_stored).  */
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
#include "basic/cleanup.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/untrusted.h"

/* The value of KEY= in group [GROUP] of keyfile TEXT, copied into OUT.  */
bool
st_flatpak_keyfile_get (const char *text, const char *group, const char *key, char *out, size_t size)
{
  size_t klen = strlen (key), glen = strlen (group);
  bool in_group = false;
  for (const char *p = text; p != NULL && *p; p = strchr (p, '\n'), p = p ? p + 1 : NULL)
    {
      if (*p == '[')
        in_group = strncmp (p + 1, group, glen) == 0 && p[1 + glen] == ']';
      else if (in_group && strncmp (p, key, klen) == 0 && p[klen] == '=')
        {
          const char *v = p + klen + 1;
          size_t n = strcspn (v, "\n");
          if (n >= size)
            return false;
          memcpy (out, v, n);
          out[n] = '\0';
          return true;
        }
    }
  return false;
}

static bool
valid_component (const char *s, size_t n)
{
  if (n == 0 || n > 255 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] == '/' || (unsigned char) s[i] <= ' ')
      return false;
  return true;
}

/* An installation's directory: the system's /var/lib/flatpak, or a user's
   ~/.local/share/flatpak under /root or /home/USER.  Below the home
   directory (which root's /home names) no symlink is followed.  *REST is
   set to what follows the installation in PATH.  */
static int
open_installation (const char *path, const char **rest)
{
  if (strncmp (path, "/var/lib/flatpak/", 17) == 0)
    {
      *rest = path + 17;
      return open ("/var/lib/flatpak", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  char home[300];
  const char *p;
  if (strncmp (path, "/root/", 6) == 0)
    {
      snprintf (home, sizeof home, "/root");
      p = path + 6;
    }
  else if (strncmp (path, "/home/", 6) == 0)
    {
      size_t n = strcspn (path + 6, "/");
      if (!valid_component (path + 6, n) || path[6 + n] != '/' || n + 7 > sizeof home)
        return -1;
      snprintf (home, sizeof home, "/home/%.*s", (int) n, path + 6);
      p = path + 7 + n;
    }
  else
    return -1;
  if (strncmp (p, ".local/share/flatpak/", 21) != 0)
    return -1;
  *rest = p + 21;
  int hfd = open (home, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (hfd < 0)
    return -1;
  int fd = st_open_beneath (hfd, ".local/share/flatpak", true);
  close (hfd);
  return fd;
}

/* PATH names a deployment's files: <installation>/WHAT/ID/ARCH/BRANCH/
   COMMIT/files (WANT_ID, when given, must be its ID).  Returns an O_PATH fd
   of that directory, reached without following symlinks; once the ref was
   uninstalled while running, of the copy flatpak keeps for running
   instances in <installation>/.removed/ID-COMMIT/.  */
int
st_flatpak_open_deployment (const char *path, const char *what, const char *want_id)
{
  const char *rest;
  int inst = open_installation (path, &rest);
  if (inst < 0)
    return -1;
  const char *comp[6];
  size_t len[6], k = 0;
  for (const char *p = rest; k < 6; k++)
    {
      comp[k] = p;
      len[k] = strcspn (p, "/");
      if (!valid_component (p, len[k]))
        break;
      p += len[k];
      if (*p == '\0')
        {
          k++;
          break;
        }
      p++;
    }
  int fd = -1;
  if (k == 6 && comp[5][len[5]] == '\0' && len[0] == strlen (what)
      && strncmp (comp[0], what, len[0]) == 0 && len[5] == 5 && strncmp (comp[5], "files", 5) == 0
      && (want_id == NULL || (strlen (want_id) == len[1] && strncmp (comp[1], want_id, len[1]) == 0)))
    {
      fd = st_open_beneath (inst, rest, true);
      if (fd < 0 && errno == ENOENT)
        {
          char removed[600];
          snprintf (removed, sizeof removed, ".removed/%.*s-%.*s/files", (int) len[1], comp[1],
                    (int) len[4], comp[4]);
          fd = st_open_beneath (inst, removed, true);
          if (fd >= 0)
            st_info ("flatpak %.*s: uninstalled while running: its deployment is in .removed/",
                     (int) len[1], comp[1]);
        }
    }
  close (inst);
  return fd;
}

/* Every deployment in the flatpak installations on this host, each as a
   container with one host directory: apps (/app) and runtimes (/usr),
   live ones and those in .removed/ (uninstalled while running).  */
static void
stored_add (struct st_container ***cache, size_t *n, const char *name, const char *id, int fd,
            bool app)
{
  if (fd < 0)
    return;
  struct st_container *c = calloc (1, sizeof *c);
  struct st_container **a = c ? realloc (*cache, (*n + 1) * sizeof *a) : NULL;
  if (a == NULL)
    {
      free (c);
      close (fd);
      return;
    }
  *cache = a;
  st_container_init (c, ST_CONTAINER_FLATPAK, name, id);
  if (c->root_frame == NULL || st_container_add_dir (c, app ? "/app" : "/usr", fd, app) < 0)
    {
      st_container_free (c);
      return;
    }
  a[(*n)++] = c;
}

static DIR *
opendir_beneath (int dfd, const char *path)
{
  int fd = st_open_beneath (dfd, path, true);
  if (fd < 0)
    return NULL;
  /* O_PATH fds can't be read: reopen the directory itself.  */
  int rfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  close (fd);
  DIR *d = rfd >= 0 ? fdopendir (rfd) : NULL;
  if (d == NULL && rfd >= 0)
    close (rfd);
  return d;
}

static void
stored_installation (int inst, struct st_container ***cache, size_t *n)
{
  static const char *const kinds[] = { "app", "runtime" };
  for (size_t k = 0; k < 2; k++)
    {
      DIR *ids = opendir_beneath (inst, kinds[k]);
      struct dirent *i, *a, *b, *co;
      while (ids != NULL && (i = readdir (ids)) != NULL)
        {
          char p[1200];
          snprintf (p, sizeof p, "%s/%s", kinds[k], i->d_name);
          DIR *archs = i->d_name[0] == '.' ? NULL : opendir_beneath (inst, p);
          while (archs != NULL && (a = readdir (archs)) != NULL)
            {
              snprintf (p, sizeof p, "%s/%s/%s", kinds[k], i->d_name, a->d_name);
              DIR *brs = a->d_name[0] == '.' ? NULL : opendir_beneath (inst, p);
              while (brs != NULL && (b = readdir (brs)) != NULL)
                {
                  snprintf (p, sizeof p, "%s/%s/%s/%s", kinds[k], i->d_name, a->d_name, b->d_name);
                  DIR *cos = b->d_name[0] == '.' ? NULL : opendir_beneath (inst, p);
                  while (cos != NULL && (co = readdir (cos)) != NULL)
                    {
                      if (co->d_name[0] == '.' || strcmp (co->d_name, "active") == 0)
                        continue;
                      snprintf (p, sizeof p, "%s/%s/%s/%s/%s/files", kinds[k], i->d_name, a->d_name,
                                b->d_name, co->d_name);
                      stored_add (cache, n, i->d_name, co->d_name, st_open_beneath (inst, p, true),
                                  k == 0);
                    }
                  if (cos != NULL)
                    closedir (cos);
                }
              if (brs != NULL)
                closedir (brs);
            }
          if (archs != NULL)
            closedir (archs);
        }
      if (ids != NULL)
        closedir (ids);
    }
  /* .removed/ID-COMMIT: the deployment's metadata says app or runtime.  */
  DIR *rm = opendir_beneath (inst, ".removed");
  struct dirent *e;
  while (rm != NULL && (e = readdir (rm)) != NULL)
    {
      const char *dash = strrchr (e->d_name, '-');
      if (e->d_name[0] == '.' || dash == NULL || dash == e->d_name)
        continue;
      char p[600], id[256];
      snprintf (id, sizeof id, "%.*s", (int) (dash - e->d_name), e->d_name);
      snprintf (p, sizeof p, ".removed/%s/metadata", e->d_name);
      int fd = st_open_beneath (inst, p, false);
      char *meta = fd >= 0 ? st_read_small_file (fd, 1 << 16, NULL) : NULL;
      if (fd >= 0)
        close (fd);
      char name[256];
      bool app = meta != NULL && st_flatpak_keyfile_get (meta, "Application", "name", name, sizeof name);
      bool runtime = meta != NULL && !app && st_flatpak_keyfile_get (meta, "Runtime", "name", name, sizeof name);
      free (meta);
      if ((app || runtime) && strcmp (name, id) == 0)
        {
          snprintf (p, sizeof p, ".removed/%s/files", e->d_name);
          stored_add (cache, n, id, dash + 1, st_open_beneath (inst, p, true), app);
        }
    }
  if (rm != NULL)
    closedir (rm);
}

int
st_flatpak_foreach_stored (int (*fn) (const struct st_container *c, void *arg), void *arg,
                           struct st_container ***cache, size_t *n_cache)
{
  if (*n_cache == 0)
    {
      int inst = open ("/var/lib/flatpak", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (inst >= 0)
        {
          stored_installation (inst, cache, n_cache);
          close (inst);
        }
      const char *rest;
      inst = open_installation ("/root/.local/share/flatpak/", &rest);
      if (inst >= 0)
        {
          stored_installation (inst, cache, n_cache);
          close (inst);
        }
      DIR *home = opendir ("/home");
      struct dirent *e;
      while (home != NULL && (e = readdir (home)) != NULL)
        {
          char p[600];
          if (e->d_name[0] == '.')
            continue;
          snprintf (p, sizeof p, "/home/%s/.local/share/flatpak/", e->d_name);
          inst = open_installation (p, &rest);
          if (inst >= 0)
            {
              stored_installation (inst, cache, n_cache);
              close (inst);
            }
        }
      if (home != NULL)
        closedir (home);
    }
  for (size_t i = 0; i < *n_cache; i++)
    if (fn ((*cache)[i], arg))
      return 1;
  return 0;
}
