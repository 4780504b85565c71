/* Workload for the end-to-end tests: a program whose hot code lives in a
 * shared library of our own (libwork.so) and in libc on its behalf.
 *
 * Usage: shlib [MILLISECONDS]   (CPU time to burn; default 1500) */

#include "libwork.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile uint64_t sink;

static NOINLINE uint64_t
run_compute (uint64_t seed)
{
  uint64_t r = work_compute (seed);
  BARRIER (r);
  return r;
}

static NOINLINE uint64_t
run_libc (uint64_t seed)
{
  uint64_t r;
  switch (seed % 3)
    {
    case 0:
      r = work_sort (seed);
      break;
    case 1:
      r = work_copy (seed);
      break;
    default:
      r = work_strings (seed);
      break;
    }
  BARRIER (r);
  return r;
}

static NOINLINE uint64_t
dispatch (uint64_t seed)
{
  uint64_t r = (seed & 4) ? run_compute (seed) : run_libc (seed);
  BARRIER (r);
  return r;
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
  double budget = argc > 1 ? atof (argv[1]) : 1500.0;
  double start = cpu_ms ();
  uint64_t seed = 1, acc = 0;

  while (cpu_ms () - start < budget)
    acc += dispatch (seed++);
  sink = acc;
  printf ("shlib: %llu calls\n", (unsigned long long) seed);
  return 0;
}
