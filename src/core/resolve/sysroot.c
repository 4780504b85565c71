#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/untrusted.h"
#include "basic/why.h"
#include "core/resolve/sysroot.h"

struct st_sysroot {
  char *root;               /* NULL: none */
  int root_fd;              /* O_PATH, -1: none */
  char **dirs;              /* the search path */
  size_t n_dirs;
};

void
st_sysroot_free (struct st_sysroot *s)
{
  if (s == NULL)
    return;
  if (s->root_fd >= 0)
    close (s->root_fd);
  free (s->root);
  for (size_t i = 0; i < s->n_dirs; i++)
    free (s->dirs[i]);
  free (s->dirs);
  free (s);
}

static int
check_dir (const char *dir, const char *option, struct st_why *why)
{
  struct stat st;
  if (stat (dir, &st) != 0)
    return st_why_set (why, errno, "%s=%s", option, dir);
  if (!S_ISDIR (st.st_mode))
    return st_why_set (why, ENOTDIR, "%s=%s", option, dir);
  return 0;
}

int
st_sysroot_new (const char *root, const char *search_path, struct st_sysroot **out,
                struct st_why *why)
{
  *out = NULL;
  if (root == NULL && search_path == NULL)
    return 0;
  struct st_sysroot *s = calloc (1, sizeof *s);
  if (s == NULL)
    return -ENOMEM;
  s->root_fd = -1;
  int r = 0;
  if (root != NULL)
    {
      r = check_dir (root, "--sysroot", why);
      if (r == 0)
        {
          s->root = strdup (root);
          s->root_fd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
          if (s->root == NULL)
            r = -ENOMEM;
          else if (s->root_fd < 0)
            r = st_why_set (why, errno, "--sysroot=%s", root);
        }
    }
  if (r == 0 && search_path != NULL)
    {
      _cleanup_free_ char *copy = strdup (search_path);
      if (copy == NULL)
        r = -ENOMEM;
      char *save = NULL;
      for (char *d = copy ? strtok_r (copy, ":", &save) : NULL; d != NULL && r == 0;
           d = strtok_r (NULL, ":", &save))
        {
          r = check_dir (d, "--search-path", why);
          if (r < 0)
            break;
          char **dirs = realloc (s->dirs, (s->n_dirs + 1) * sizeof *dirs);
          if (dirs == NULL || (dirs[s->n_dirs] = strdup (d)) == NULL)
            r = -ENOMEM;
          if (dirs != NULL)
            s->dirs = dirs;
          if (r == 0)
            s->n_dirs++;
        }
    }
  if (r < 0)
    {
      st_sysroot_free (s);
      return r;
    }
  *out = s;
  return 0;
}

const char *
st_sysroot_root (const struct st_sysroot *s)
{
  return s ? s->root : NULL;
}

int
st_sysroot_open (const struct st_sysroot *s, const char *path, struct stat *st)
{
  if (s == NULL || s->root_fd < 0 || path[0] != '/')
    return 1;
  /* RESOLVE_IN_ROOT: the sysroot's lib -> usr/lib and absolute links such
     as /lib/ld-linux-aarch64.so.1 -> /lib/aarch64-linux-gnu/... are the
     recording machine's, to be followed inside the sysroot.  */
  return st_open_untrusted_in (s->root_fd, s->root, path + 1, ST_UNTRUSTED_IN_ROOT, st);
}

int
st_sysroot_search (const struct st_sysroot *s, const char *path, struct stat *st,
                   const char **dir)
{
  if (s == NULL || s->n_dirs == 0)
    return 1;
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  if (base[0] == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return -ENOENT;
  int last = -ENOENT;
  for (size_t i = 0; i < s->n_dirs; i++)
    {
      size_t len = strlen (s->dirs[i]) + 1 + strlen (base) + 1;
      _cleanup_free_ char *p = malloc (len);
      if (p == NULL)
        return -ENOMEM;
      snprintf (p, len, "%s/%s", s->dirs[i], base);
      int fd = st_open_untrusted (AT_FDCWD, p, ST_UNTRUSTED_QUIET, st);
      if (fd >= 0)
        {
          *dir = s->dirs[i];
          return fd;
        }
      if (fd != -ENOENT)
        last = fd;
    }
  return last;
}
