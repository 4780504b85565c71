/* main() of the replay drivers (tests/fuzz/fuzz-*-replay): the targets
 * built without libFuzzer, for make check.  Each argument is an input file
 * or a directory of them (sorted, dot files skipped); each input goes
 * through LLVMFuzzerTestOneInput once.  A finding shows as a sanitizer
 * report or a signal, as it would under libFuzzer.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/log.h"
#include "fuzz.h"

int fuzz_verbose;

void
fuzz_init (void)
{
  static int done;
  if (done)
    return;
  done = 1;
  unsetenv ("DEBUGINFOD_URLS");
  const char *v = getenv ("FUZZ_VERBOSE");
  fuzz_verbose = v == NULL || *v == '\0' || strcmp (v, "0") == 0 ? 0
                 : strcmp (v, "error") == 0 ? 1 : 2;
  st_log_set_level (fuzz_verbose >= 2 ? ST_LOG_DEBUG : ST_LOG_ERROR);
}

char *
fuzz_strndup (const uint8_t *data, size_t size)
{
  char *s = malloc (size + 1);
  if (s == NULL)
    abort ();
  memcpy (s, data, size);
  s[size] = '\0';
  return s;
}

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
static int
replay_file (const char *path)
{
  FILE *f = fopen (path, "rbe");
  if (f == NULL)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  uint8_t *data = NULL;
  size_t size = 0, cap = 0;
  for (;;)
    {
      if (size == cap)
        {
          cap = cap ? 2 * cap : 65536;
          uint8_t *d = realloc (data, cap);
          if (d == NULL)
            {
              fprintf (stderr, "%s: out of memory\n", path);
              free (data);
              fclose (f);
              return -1;
            }
          data = d;
        }
      size_t n = fread (data + size, 1, cap - size, f);
      size += n;
      if (n == 0)
        break;
    }
  int bad = ferror (f);
  fclose (f);
  if (bad)
    {
      fprintf (stderr, "%s: read error\n", path);
      free (data);
      return -1;
    }
  if (fuzz_verbose)
    fprintf (stderr, "replaying %s (%zu bytes)\n", path, size);
  /* Exactly SIZE bytes, as libFuzzer hands them: a read past the end of
     the input is a heap overflow ASan reports.  */
  uint8_t *exact = malloc (size ? size : 1);
  if (exact == NULL)
    {
      free (data);
      return -1;
    }
  memcpy (exact, data, size);
  free (data);
  LLVMFuzzerTestOneInput (exact, size);
  free (exact);
  return 0;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp ((*(struct dirent *const *) a)->d_name, (*(struct dirent *const *) b)->d_name);
}

static int
replay_path (const char *path, size_t *count)
{
  struct stat st;
  if (stat (path, &st) != 0)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      int r = replay_file (path);
      if (r == 0)
        ++*count;
      return r;
    }
  struct dirent **names;
  int n = scandir (path, &names, NULL, NULL);
  if (n < 0)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  qsort (names, n, sizeof *names, compare_names);
  int r = 0;
  for (int i = 0; i < n; i++)
    {
      if (names[i]->d_name[0] != '.')
        {
          char *p;
          if (asprintf (&p, "%s/%s", path, names[i]->d_name) < 0)
            r = -1;
          else
            {
              if (replay_path (p, count) < 0)
                r = -1;
              free (p);
            }
        }
      free (names[i]);
    }
  free (names);
  return r;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE|DIR...\n"
               "Runs each input through the fuzz target once "
               "(FUZZ_VERBOSE=1 for messages, =error for the input's error).\n", argv[0]);
      return 64;
    }
  fuzz_init ();
  size_t count = 0;
  int status = 0;
  for (int i = 1; i < argc; i++)
    if (replay_path (argv[i], &count) < 0)
      status = 1;
  fprintf (stderr, "replayed %zu inputs\n", count);
  return status;
}
#endif
