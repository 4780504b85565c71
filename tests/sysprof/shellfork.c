/* Workload of the Sysprof call-graph test: a program that forks a shell
 * which runs a child command, as a launcher script does.
 *
 *   shellfork MS COMMAND [ARG...]
 *
 *   parent: parent_work burns MS of CPU, then waits for the child.
 *   child:  child_before_exec burns MS/2 in the parent's image (its maps
 *           are the parent's until it execs), then execs
 *           /bin/sh -c '"$@"; loop' sh COMMAND ARG...: the shell forks
 *           COMMAND (so COMMAND is a process of its own, not an exec of the
 *           shell) and then loops on its own for a while, so that it has
 *           samples under its exec'd name too.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile uint64_t sink;

static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static NOINLINE uint64_t
mix (uint64_t h)
{
  for (int i = 0; i < 20000; i++)
    {
      h = (h ^ (h >> 31)) * 0x94d049bb133111ebULL;
      BARRIER (h);
    }
  return h;
}

static NOINLINE void
parent_work (double ms)
{
  double start = cpu_ms ();
  uint64_t h = 1;
  while (cpu_ms () - start < ms)
    h = mix (h);
  sink = h;
}

static NOINLINE void
child_before_exec (double ms)
{
  double start = cpu_ms ();
  uint64_t h = 2;
  while (cpu_ms () - start < ms)
    h = mix (h);
  sink = h;
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: shellfork MS COMMAND [ARG...]\n");
      return 2;
    }
  double ms = atof (argv[1]);
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      perror ("shellfork: fork");
      return 1;
    }
  if (pid == 0)
    {
      child_before_exec (ms / 2);
      char **args = calloc (argc + 3, sizeof *args);
      if (args == NULL)
        _exit (127);
      args[0] = "sh";
      args[1] = "-c";
      args[2] = "\"$@\" || exit 1; i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done";
      args[3] = "sh";
      for (int i = 2; i < argc; i++)
        args[i + 2] = argv[i];
      execv ("/bin/sh", args);
      perror ("shellfork: exec /bin/sh");
      _exit (127);
    }
  parent_work (ms);
  int status;
  if (waitpid (pid, &status, 0) < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "shellfork: the shell failed\n");
      return 1;
    }
  return 0;
}
