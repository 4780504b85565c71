/* Workload for the end-to-end tests: a process that forks two children that
 * exec.
 *
 *   parent:  forks A and B; parent_* functions burn CPU; waits for both.
 *   child A: child_before_exec burns CPU (the parent's image, copied by fork),
 *            then execs PROGRAM (another program, e.g. the deep workload).
 *   child B: execs this same program again (/proc/self/exe --exec), whose
 *            exec_* functions burn CPU: the same ELF file at another load
 *            address in a pid that first held the parent's mappings.
 *
 * So one recording holds samples of the parent, of a forked child before exec
 * (same mappings as the parent, other pid) and of new images after exec (same
 * pid, new mappings, new comm).
 *
 * Usage: forkexec [MILLISECONDS [PROGRAM]]
 *   MILLISECONDS: CPU time of the parent (default 700); the children burn
 *   about as much.  PROGRAM is run as "PROGRAM MILLISECONDS" (default: the
 *   deep workload next to this program). */

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
churn (uint64_t h, int rounds)
{
  for (int i = 0; i < rounds; i++)
    {
      h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
      BARRIER (h);
    }
  return h;
}

/* The parent's own chain. */
static NOINLINE uint64_t
parent_leaf (uint64_t s)
{
  uint64_t r = churn (s, 20000);
  BARRIER (r);
  return r + 1;
}

static NOINLINE uint64_t
parent_work (uint64_t s)
{
  uint64_t r = parent_leaf (s + 7);
  BARRIER (r);
  return r + 2;
}

/* The forked child, still running the parent's image. */
static NOINLINE uint64_t
child_before_exec (uint64_t s)
{
  uint64_t r = churn (s, 20000);
  BARRIER (r);
  return r + 3;
}

/* The exec'd image. */
static NOINLINE uint64_t
exec_leaf (uint64_t s)
{
  uint64_t h = s;
  for (int i = 0; i < 20000; i++)
    {
      h = (h << 5) + h + (uint64_t) i;
      BARRIER (h);
    }
  return h;
}

static NOINLINE uint64_t
exec_work (uint64_t s)
{
  uint64_t r = exec_leaf (s ^ 0xabc);
  BARRIER (r);
  return r + 4;
}

static void
burn (uint64_t (*fn) (uint64_t), double budget)
{
  double start = cpu_ms ();
  uint64_t acc = 0, s = 1;
  while (cpu_ms () - start < budget)
    for (int k = 0; k < 8; k++)
      acc += fn (s++);
  sink = acc;
}

static pid_t
spawn_exec (const char *path, char *const argv[], uint64_t (*before) (uint64_t),
            double before_ms)
{
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    {
      perror ("fork");
      exit (1);
    }
  if (pid == 0)
    {
      if (before != NULL)
        burn (before, before_ms);
      execv (path, argv);
      fprintf (stderr, "forkexec: exec %s: %m\n", path);
      _exit (127);
    }
  return pid;
}

static int
wait_ok (pid_t pid, const char *what)
{
  int status;
  if (waitpid (pid, &status, 0) < 0)
    {
      perror ("waitpid");
      return -1;
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "forkexec: %s failed (status 0x%x)\n", what, status);
      return -1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--exec") == 0)
    {
      burn (exec_work, argc > 2 ? atof (argv[2]) : 350.0);
      return 0;
    }

  double budget = argc > 1 ? atof (argv[1]) : 700.0;
  char program[PATH_MAX], half[32];

  if (argc > 2)
    snprintf (program, sizeof program, "%s", argv[2]);
  else
    {
      ssize_t n = readlink ("/proc/self/exe", program, sizeof program - 16);
      if (n < 0)
        {
          perror ("readlink /proc/self/exe");
          return 1;
        }
      program[n] = '\0';
      char *slash = strrchr (program, '/');
      strcpy (slash != NULL ? slash + 1 : program, "deep");
    }
  snprintf (half, sizeof half, "%g", budget / 2);

  char *argv_a[] = { program, half, NULL };
  pid_t a = spawn_exec (program, argv_a, child_before_exec, budget / 2);
  char self_name[] = "forkexec", exec_opt[] = "--exec";
  char *argv_b[] = { self_name, exec_opt, half, NULL };
  pid_t b = spawn_exec ("/proc/self/exe", argv_b, NULL, 0);

  burn (parent_work, budget);
  if (wait_ok (a, program) < 0 || wait_ok (b, "re-exec of itself") < 0)
    return 1;
  printf ("forkexec: done\n");
  return 0;
}
