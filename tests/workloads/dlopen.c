/* Loads a library only after it has been running for a while, then spends
 * its time in it: live sampling must report the new mapping's module and
 * unwind through it.  Usage: dlopen PLUGIN.so [MS_BEFORE MS_AFTER [go]]
 *
 * With "go", it loads the library only once sent SIGUSR1 (at most 60 s
 * after MS_BEFORE): the test has done what must come before the load
 * (tests/ns-helper/restart.sh kills the namespace helper first).  */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline))

static volatile uint64_t sink;

static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static NOINLINE uint64_t
before_dlopen (uint64_t s)
{
  for (int i = 0; i < 100000; i++)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
  return s;
}

static NOINLINE uint64_t
run_plugin (uint64_t (*entry) (uint64_t), uint64_t s)
{
  uint64_t r = entry (s);
  sink = r;
  return r + 1;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s PLUGIN.so [MS_BEFORE MS_AFTER [go]]\n", argv[0]);
      return 2;
    }
  double before = argc > 2 ? atof (argv[2]) : 300, after = argc > 3 ? atof (argv[3]) : 1000;
  sigset_t go;
  sigemptyset (&go);
  sigaddset (&go, SIGUSR1);
  bool wait_go = argc > 4 && strcmp (argv[4], "go") == 0;
  if (wait_go)
    sigprocmask (SIG_BLOCK, &go, NULL);   /* before anyone may send it */
  double start = cpu_ms ();
  uint64_t s = 1;
  while (cpu_ms () - start < before)
    s = before_dlopen (s);
  struct timespec limit = { .tv_sec = 60 };
  while (wait_go && sigtimedwait (&go, NULL, &limit) < 0 && errno == EINTR)
    ;
  void *h = dlopen (argv[1], RTLD_NOW);
  if (h == NULL)
    {
      fprintf (stderr, "dlopen: %s\n", dlerror ());
      return 1;
    }
  uint64_t (*entry) (uint64_t) = (uint64_t (*) (uint64_t)) dlsym (h, "plugin_entry");
  if (entry == NULL)
    return 1;
  start = cpu_ms ();
  while (cpu_ms () - start < after)
    s = run_plugin (entry, s);
  sink = s;
  return 0;
}
