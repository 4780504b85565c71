/* The namespace helper's test program (tests/ns-helper/): copied with its
 * library into a tmpfs that only a mount namespace has, then sampled.  Its
 * own functions are static or not exported, so that once stripped only
 * its separate debuginfo names them.
 *
 *   nsprog [MS]          spend MS ms of CPU (default 1000) in
 *                        main > ns_outer > ns_middle > ns_hidden_leaf
 *                                                   > nswork_run > nswork_leaf
 *   nsprog sleep SECONDS keep its mappings without using the CPU
 *
 * It finds libnswork.so in /app/lib (its RUNPATH, as a flatpak app would),
 * or through LD_LIBRARY_PATH.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nswork.h"

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile uint64_t sink;

static NOINLINE uint64_t
ns_hidden_leaf (uint64_t s)
{
  for (int i = 0; i < 20000; i++)
    {
      s ^= s >> 29;
      s *= 0xbf58476d1ce4e5b9ULL;
      BARRIER (s);
    }
  return s;
}

static NOINLINE uint64_t
ns_middle (uint64_t s)
{
  s = ns_hidden_leaf (s);
  s = nswork_run (s);
  BARRIER (s);
  return s;
}

static NOINLINE uint64_t
ns_outer (uint64_t s)
{
  s = ns_middle (s);
  BARRIER (s);
  return s + 1;
}

static double
cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int
main (int argc, char **argv)
{
  if (argc > 2 && strcmp (argv[1], "sleep") == 0)
    {
      unsigned seconds = (unsigned) atoi (argv[2]);
      while (seconds > 0)
        seconds = sleep (seconds);
      return 0;
    }
  double ms = argc > 1 ? atof (argv[1]) : 1000;
  double start = cpu_ms ();
  uint64_t s = 1;
  while (cpu_ms () - start < ms)
    s = ns_outer (s);
  sink = s;
  return 0;
}
