/* A small CPU workload for the corpus: recursion, a callback through libc
   (qsort) and floating point, so that samples land in the program, in libc
   and in libm at several depths.  Built with every linker the corpus
   covers.  */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

static int __attribute__ ((noinline))
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static void __attribute__ ((noinline))
sort_some (unsigned seed)
{
  double v[512];
  for (int i = 0; i < 512; i++)
    {
      seed = seed * 1103515245 + 12345;
      v[i] = sin (seed % 1000);
    }
  qsort (v, 512, sizeof v[0], compare);
  sink = v[17];
}

static double __attribute__ ((noinline))
walk (int depth, unsigned seed)
{
  if (depth == 0)
    {
      sort_some (seed);
      return sink;
    }
  double r = walk (depth - 1, seed * 31 + depth);
  return r + sqrt ((double) depth);
}

int
main (int argc, char **argv)
{
  double seconds = argc > 1 ? atof (argv[1]) : 2.0;
  struct timespec t0, t;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  unsigned n = 0;
  do
    {
      sink = walk (1 + n % 24, n);
      n++;
      clock_gettime (CLOCK_MONOTONIC, &t);
    }
  while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
  printf ("%u rounds\n", n);
  return 0;
}
