#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "basic/elf-begin.h"
#include "basic/frozen-copy.h"
#include "core/resolve/debuginfo-host.h"
#include "core/resolve/elf-file.h"
#include "basic/log.h"
#include "basic/untrusted.h"

#define DEBUG_DIR "/usr/lib/debug"

/* The .gnu_debuglink CRC is zlib's CRC-32 of the whole file.  */
static bool
crc_matches (int fd, uint32_t want)
{
  unsigned char buf[65536];
  uLong crc = crc32 (0L, Z_NULL, 0);
  off_t off = 0;
  for (;;)
    {
      ssize_t n = pread (fd, buf, sizeof buf, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return false;
      if (n == 0)
        break;
      crc = crc32 (crc, buf, (uInt) n);
      off += n;
    }
  return (uint32_t) crc == want;
}

/* Opens FNAME and keeps it when it is the wanted debug file: the fd, or -1.
   What is checked (its build-id or CRC; its bounds, later) is what libdwfl
   reads: a copy, when others may write the file (basic/frozen-copy.h).  A
   candidate with a build-id is checked before it is copied too: a wrong
   one costs no copy.  */
static int
try_candidate (const char *fname, const struct st_debuginfo_want *w, char **path)
{
  struct stat st;
  int fd = st_open_untrusted (AT_FDCWD, fname, 0, &st);
  if (fd < 0)
    {
      if (fd != -ENOENT && fd != -ENOTDIR)
        st_debug ("%s: not a debug file candidate: %s", fname, st_untrusted_strerror (fd));
      return -1;
    }
  const char *wrong = NULL;
  if (w->has_main && st.st_dev == w->main_dev && st.st_ino == w->main_ino)
    wrong = "the module's own file";
  else if (w->build_id_size > 0 && !st_elf_fd_has_build_id (fd, w->build_id, w->build_id_size))
    wrong = "build-id differs";
  else if (w->build_id_size == 0 && (w->debuglink == NULL || w->crc == 0))
    /* Without a build-id only the debuglink's CRC can tell; an invented
       NAME.debug (no debuglink, no CRC) cannot be checked at all.  */
    wrong = "no build-id, no CRC";
  if (wrong == NULL)
    {
      struct st_why why = { 0 };
      int file = fd;
      fd = st_freeze (fd, false, w->owner, &why);
      if (fd < 0)
        {
          st_untrusted_refuse (fname, "debug file not read", why.text);
          return -1;
        }
      bool copied = fd != file;
      if (w->build_id_size > 0
            ? copied && !st_elf_fd_has_build_id (fd, w->build_id, w->build_id_size)
            : !crc_matches (fd, w->crc))
        wrong = w->build_id_size > 0 ? "build-id differs in the copy" : "no build-id, CRC does not match";
      else if (copied)
        st_frozen_say_copied (fname, fd);
    }
  if (wrong != NULL)
    {
      st_debug ("%s: not the wanted debug file (%s)", fname, wrong);
      st_frozen_close (fd);
      return -1;
    }
  *path = strdup (fname);
  if (*path == NULL)
    {
      st_frozen_close (fd);
      return -1;
    }
  return fd;
}

static int
try_build_id (const struct st_debuginfo_want *w, char **path)
{
  if (w->build_id_size < 2)
    return -1;
  char hex[2 * ST_BUILD_ID_MAX + 1];
  st_build_id_to_hex (w->build_id, w->build_id_size, hex);
  char fname[PATH_MAX];
  snprintf (fname, sizeof fname, DEBUG_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2);
  return try_candidate (fname, w, path);
}

static int
try_join (const char *a, const char *b, const char *c, const struct st_debuginfo_want *w,
          char **path)
{
  char fname[PATH_MAX];
  int n = snprintf (fname, sizeof fname, "%s%s%s%s%s", a ? a : "", a ? "/" : "", b ? b : "",
                    b ? "/" : "", c);
  if (n < 0 || (size_t) n >= sizeof fname)
    return -1;
  return try_candidate (fname, w, path);
}

static const char *
base_of (const char *p)
{
  const char *s = strrchr (p, '/');
  return s ? s + 1 : p;
}

/* The path search for FILE_NAME (one of the module's names).  */
static int
search_paths (const struct st_debuginfo_want *w, const char *file_name, char **path)
{
  const char *file_base = file_name ? base_of (file_name) : NULL;
  char dir[PATH_MAX];
  bool has_dir = file_name != NULL && file_base != file_name
                 && (size_t) (file_base - 1 - file_name) < sizeof dir;
  if (has_dir)
    snprintf (dir, sizeof dir, "%.*s", (int) (file_base - 1 - file_name), file_name);
  /* Beside the file only when its directory is absolute: a name without
     one ("[vdso]", a relative path in a recording) would be looked up in
     our current directory, whatever that holds.  */
  bool beside = has_dir && dir[0] == '/';
  int fd = -1;
  if (w->alt)
    {
      if (w->debuglink == NULL)
        return -1;
      const char *name = base_of (w->debuglink);
      /* An absolute name as it is (Debian's dh_dwz writes
         /usr/lib/debug/.dwz/TRIPLET/PACKAGE.debug, with no build-id link),
         as libdw's own search has it; then "" and ".debug" entries: beside
         the debug file; "/usr/lib/debug": its basename; each also in a
         .dwz subdirectory.  */
      if (w->debuglink[0] == '/' && (fd = try_candidate (w->debuglink, w, path)) >= 0)
        return fd;
      if (beside && w->debuglink[0] != '/' && (fd = try_join (dir, NULL, w->debuglink, w, path)) >= 0)
        return fd;
      if (beside && (fd = try_join (dir, ".dwz", name, w, path)) >= 0)
        return fd;
      if (beside && w->debuglink[0] != '/' && (fd = try_join (dir, ".debug", w->debuglink, w, path)) >= 0)
        return fd;
      if ((fd = try_join (DEBUG_DIR, NULL, name, w, path)) >= 0)
        return fd;
      return try_join (DEBUG_DIR, ".dwz", name, w, path);
    }
  if (file_base == NULL)
    return -1;
  char invented[NAME_MAX + 8];
  const char *link = w->debuglink;
  if (link == NULL)
    {
      snprintf (invented, sizeof invented, "%.*s.debug", NAME_MAX, file_base);
      link = invented;
    }
  if (!beside)
    return -1;
  if ((fd = try_join (dir, NULL, link, w, path)) >= 0)
    return fd;
  if ((fd = try_join (dir, ".debug", link, w, path)) >= 0)
    return fd;
  if (w->debuglink == NULL && (fd = try_join (dir, ".debug", file_base, w, path)) >= 0)
    return fd;
  /* /usr/lib/debug/DIR/LINK, then with DIR's leading components dropped
     one at a time, as libdwfl explores.  */
  for (const char *sub = strchr (dir, '/'); sub != NULL; sub = strchr (sub, '/'))
    {
      sub++;
      if (*sub == '\0')
        break;
      if ((fd = try_join (DEBUG_DIR, sub, link, w, path)) >= 0)
        return fd;
      if (w->debuglink == NULL && (fd = try_join (DEBUG_DIR, sub, file_base, w, path)) >= 0)
        return fd;
    }
  return -1;
}

int
st_debuginfo_host_find (const struct st_debuginfo_want *w, char **path)
{
  int fd = try_build_id (w, path);
  if (fd < 0)
    fd = search_paths (w, w->file_name, path);
  if (fd < 0 && w->file_name != NULL)
    {
      /* A symlink's debug file may be kept under its target's name.
         realpath only looks (lstat, readlink): it opens nothing.  */
      char *canon = realpath (w->file_name, NULL);
      if (canon != NULL && strcmp (canon, w->file_name) != 0)
        fd = search_paths (w, canon, path);
      free (canon);
    }
  errno = 0;
  return fd;
}
