#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ns-helper/debuginfo.h"

struct list {
  char (*out)[ST_NSH_PATH_MAX];
  size_t n;
};

static void __attribute__ ((format (printf, 2, 3)))
add (struct list *l, const char *fmt, ...)
{
  if (l->n == ST_DEBUGINFO_MAX_CANDIDATES)
    return;
  va_list ap;
  va_start (ap, fmt);
  int len = vsnprintf (l->out[l->n], ST_NSH_PATH_MAX, fmt, ap);
  va_end (ap);
  /* A path that does not fit is no candidate.  */
  if (len > 0 && len < ST_NSH_PATH_MAX)
    l->n++;
}

size_t
st_debuginfo_candidates (const char *path, const uint8_t *id, size_t id_size,
                         const char *debuglink,
                         char out[ST_DEBUGINFO_MAX_CANDIDATES][ST_NSH_PATH_MAX])
{
  struct list l = { out, 0 };
  if (id_size >= 2)
    {
      char rest[2 * ST_NSH_BUILD_ID_MAX + 1];
      st_nsh_hex (id + 1, id_size - 1, rest);
      add (&l, "/usr/lib/debug/.build-id/%02x/%s.debug", id[0], rest);
      add (&l, "/app/lib/debug/.build-id/%02x/%s.debug", id[0], rest);
    }
  if (debuglink[0] == '\0')
    return l.n;
  /* DIR: the binary's directory, without its trailing slash ("" for /).  */
  const char *slash = strrchr (path, '/');
  int dir_len = slash != NULL ? (int) (slash - path) : 0;
  add (&l, "%.*s/%s", dir_len, path, debuglink);
  add (&l, "%.*s/.debug/%s", dir_len, path, debuglink);
  add (&l, "/usr/lib/debug%.*s/%s", dir_len, path, debuglink);
  bool in_app = dir_len >= 4 && strncmp (path, "/app", 4) == 0 && (dir_len == 4 || path[4] == '/');
  if (in_app)
    add (&l, "/app/lib/debug%.*s/%s", dir_len - 4, path + 4, debuglink);
  return l.n;
}
