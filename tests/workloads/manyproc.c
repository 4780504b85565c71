/* Workload for the end-to-end tests and bench/bench-many-processes.sh: many
 * short-lived processes, one after another, each a fork and an exec of the
 * deep workload that burns a few milliseconds of CPU and exits.  Every
 * process maps the same files (the program, libc, the dynamic loader), so
 * an unwinder that set up each file again for each process pays for it
 * once per process.
 *
 * Usage: manyproc [PROCESSES [MILLISECONDS [PROGRAM]]]
 *   (defaults 300, 8, and the "deep" next to this program) */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  long n = argc > 1 ? atol (argv[1]) : 300;
  const char *ms = argc > 2 ? argv[2] : "8";
  char program[PATH_MAX];
  if (argc > 3)
    snprintf (program, sizeof program, "%s", argv[3]);
  else
    {
      ssize_t len = readlink ("/proc/self/exe", program, sizeof program - 16);
      if (len < 0)
        {
          perror ("readlink /proc/self/exe");
          return 1;
        }
      program[len] = '\0';
      char *slash = strrchr (program, '/');
      strcpy (slash != NULL ? slash + 1 : program, "deep");
    }
  char ms_arg[32];
  snprintf (ms_arg, sizeof ms_arg, "%s", ms);
  char *child_argv[] = { program, ms_arg, NULL };
  for (long i = 0; i < n; i++)
    {
      fflush (NULL);
      pid_t pid = fork ();
      if (pid < 0)
        {
          perror ("fork");
          return 1;
        }
      if (pid == 0)
        {
          execv (program, child_argv);
          fprintf (stderr, "manyproc: exec %s: %m\n", program);
          _exit (127);
        }
      int status;
      if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
        {
          fprintf (stderr, "manyproc: process %ld failed\n", i);
          return 1;
        }
    }
  printf ("manyproc: %ld processes\n", n);
  return 0;
}
