/* The output file: see output.h.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/log.h"
#include "core/output/output-file.h"

/* Big blocks for files and pipes; on a terminal, samples show up as they
   are unwound.  */
static char buffer[1 << 16];

/* Creates "DIR/.BASE.XXXXXX" next to PATH, with ST's mode and owner when
   it replaces a file, else what open would give a new one.  An fd, or
   -errno.  */
static int
create_temporary (const char *path, const struct stat *st, char **tmp_path)
{
  char *dir_copy = strdup (path), *base_copy = strdup (path);
  char *tmp = NULL;
  int fd = -ENOMEM;
  if (dir_copy != NULL && base_copy != NULL
      && asprintf (&tmp, "%s/.%s.XXXXXX", dirname (dir_copy), basename (base_copy)) >= 0)
    {
      fd = mkostemp (tmp, O_CLOEXEC);
      if (fd < 0)
        fd = -errno;
    }
  else
    tmp = NULL;
  free (dir_copy);
  free (base_copy);
  if (fd < 0)
    {
      free (tmp);
      return fd;
    }
  if (st != NULL)
    {
      /* Best effort: root writing over a user's file gives it back.  */
      if (fchown (fd, st->st_uid, st->st_gid) != 0)
        st_debug ("%s: cannot keep the owner of %s: %m", tmp, path);
      fchmod (fd, st->st_mode & 07777);
    }
  else
    {
      mode_t mask = umask (0);   /* single-threaded still: read and restore */
      umask (mask);
      fchmod (fd, 0666 & ~mask);
    }
  *tmp_path = tmp;
  return fd;
}

int
st_output_open (struct st_output *out, const char *path, bool replace_whole)
{
  memset (out, 0, sizeof *out);
  if (path == NULL || strcmp (path, "-") == 0)
    {
      out->file = stdout;
      out->name = "standard output";
    }
  else
    {
      out->path = out->name = path;
      struct stat st;
      bool exists = lstat (path, &st) == 0;
      if (replace_whole && (!exists || (S_ISREG (st.st_mode) && st.st_nlink == 1)))
        {
          int fd = create_temporary (path, exists ? &st : NULL, &out->tmp_path);
          if (fd >= 0)
            {
              out->file = fdopen (fd, "w");
              if (out->file == NULL)
                {
                  int r = -errno;
                  close (fd);
                  unlink (out->tmp_path);
                  free (out->tmp_path);
                  out->tmp_path = NULL;
                  st_error ("cannot open %s for writing: %s", path, strerror (-r));
                  return r;
                }
            }
          else
            /* A directory we may not create files in, but a file in it we
               may write: in place, as before.  */
            st_debug ("no temporary file next to %s (%s): writing it in place", path,
                      strerror (-fd));
        }
      if (out->file == NULL)
        {
          out->file = fopen (path, "we");
          if (out->file == NULL)
            {
              int r = -errno;
              st_error ("cannot open %s for writing: %s", path, strerror (errno));
              return r;
            }
        }
    }
  setvbuf (out->file, buffer, isatty (fileno (out->file)) ? _IOLBF : _IOFBF, sizeof buffer);
  return 0;
}

int
st_output_close (struct st_output *out, bool keep, bool quiet)
{
  if (out->file == NULL)
    return 0;
  int r = 0;
  errno = 0;
  if (out->file == stdout)
    {
      if (fflush (stdout) != 0 || ferror (stdout))
        r = errno != 0 ? -errno : -EIO;
    }
  else
    {
      bool failed = ferror (out->file);
      if (fclose (out->file) != 0 || failed)
        r = errno != 0 ? -errno : -EIO;
    }
  out->file = NULL;
  if (r < 0 && !quiet)
    st_error ("writing %s: %s", out->name, strerror (-r));
  if (out->tmp_path != NULL)
    {
      if (keep && r == 0 && rename (out->tmp_path, out->path) != 0)
        {
          r = -errno;
          st_error ("cannot replace %s with %s: %s", out->path, out->tmp_path, strerror (-r));
        }
      if (!keep || r < 0)
        unlink (out->tmp_path);
      free (out->tmp_path);
      out->tmp_path = NULL;
    }
  return r;
}
