/* What any user can make the kernel tell a profiler of the whole machine:
 * names.  tests/live/user-names.sh runs it as nobody under eu-stacktrace -a.
 *
 *   names comm N        renames its thread N times (prctl PR_SET_NAME):
 *                       a COMM record each, a name never seen before
 *   names paths N DIR   maps a file executable N times, each time under a
 *                       path never seen before, about 3.7 KB long (nested
 *                       directories under DIR, and a hard link made and
 *                       removed each time): an MMAP2 record each
 *
 * Prints how many it made.  */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static int
comm (unsigned long n)
{
  /* The kernel keeps 15 bytes of a name: "n" and up to 14 digits.  */
  char name[32];
  for (unsigned long i = 0; i < n; i++)
    {
      snprintf (name, sizeof name, "n%lu", i % 100000000000000ul);
      if (prctl (PR_SET_NAME, name) != 0)
        {
          perror ("prctl");
          return 1;
        }
    }
  printf ("%lu names\n", n);
  return 0;
}

static int
paths (unsigned long n, const char *top)
{
  char dir[4096];
  snprintf (dir, sizeof dir, "%s", top);
  /* 14 levels of 250 bytes: paths of about 3.7 KB, under PATH_MAX.  */
  for (int level = 0; level < 14; level++)
    {
      size_t len = strlen (dir);
      if (len + 252 >= sizeof dir - 256)
        break;
      dir[len] = '/';
      memset (dir + len + 1, 'd', 250);
      dir[len + 251] = '\0';
      if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        {
          perror ("mkdir");
          return 1;
        }
    }
  char src[4096 + 16], name[4096 + 256];
  snprintf (src, sizeof src, "%s/file", dir);
  int fd = open (src, O_RDWR | O_CREAT | O_TRUNC, 0700);
  if (fd < 0 || ftruncate (fd, 4096) != 0)
    {
      perror (src);
      return 1;
    }
  close (fd);
  void *at = NULL;
  for (unsigned long i = 0; i < n; i++)
    {
      snprintf (name, sizeof name, "%s/%0200lu", dir, i);
      if (link (src, name) != 0 || (fd = open (name, O_RDONLY)) < 0)
        {
          perror (name);
          return 1;
        }
      /* The same place each time: each mapping replaces the one before.  */
      void *p = mmap (at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);
      if (p == MAP_FAILED)
        {
          perror ("mmap (PROT_EXEC)");
          return 1;
        }
      at = p;
      close (fd);
      unlink (name);
    }
  printf ("%lu paths of %zu bytes\n", n, strlen (name));
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "comm") == 0)
    return comm (strtoul (argv[2], NULL, 10));
  if (argc >= 4 && strcmp (argv[1], "paths") == 0)
    return paths (strtoul (argv[2], NULL, 10), argv[3]);
  fprintf (stderr, "usage: %s comm N | paths N DIR\n", argv[0]);
  return 2;
}
