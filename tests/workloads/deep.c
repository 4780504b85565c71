/* Workload for the end-to-end tests: an -O2 program with deep call chains.
 *
 * Every sample should unwind through a chain of distinct functions
 * (chain_0 .. chain_7), then a recursion whose depth changes over time
 * (20 to 40 frames of the same function), then one of a few distinct leaf
 * functions.  The compiler must keep every frame: functions are noinline and
 * noclone, and each call is followed by work that uses its result, so no call
 * becomes a tail call or a loop.
 *
 * Usage: deep [MILLISECONDS]   (CPU time to burn; default 1500) */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline, noclone))

/* Keeps the compiler from merging or removing work it can see through. */
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile uint64_t sink;

static NOINLINE uint64_t
leaf_hash (uint64_t seed)
{
  uint64_t h = seed ^ 0xcbf29ce484222325ULL;
  for (int i = 0; i < 4000; i++)
    {
      h ^= (uint64_t) i;
      h *= 0x100000001b3ULL;
      BARRIER (h);
    }
  return h;
}

static NOINLINE uint64_t
leaf_divide (uint64_t seed)
{
  uint64_t acc = seed | 1;
  for (int i = 1; i < 1500; i++)
    {
      acc += (acc * 7 + (uint64_t) i) % (uint64_t) (i + 3);
      BARRIER (acc);
    }
  return acc;
}

static NOINLINE double
leaf_float (uint64_t seed)
{
  double x = (double) (seed & 0xffff) + 0.5;
  for (int i = 0; i < 3000; i++)
    {
      x = x * 1.0000001 + 0.25 / (x + 1.0);
      BARRIER (x);
    }
  return x;
}

static NOINLINE uint64_t
leaf_work (uint64_t seed)
{
  uint64_t r;
  switch (seed % 3)
    {
    case 0:
      r = leaf_hash (seed);
      break;
    case 1:
      r = leaf_divide (seed);
      break;
    default:
      r = (uint64_t) leaf_float (seed);
      break;
    }
  BARRIER (r);
  return r + 1;
}

/* The recursion: DEPTH frames of recurse () above leaf_work (). */
static NOINLINE uint64_t
recurse (unsigned depth, uint64_t seed)
{
  uint64_t r;
  if (depth == 0)
    r = leaf_work (seed);
  else
    r = recurse (depth - 1, seed * 31 + depth);
  BARRIER (r);
  return r ^ depth;
}

/* A chain of distinct functions above the recursion. */
#define CHAIN(n, next)                                  \
  static NOINLINE uint64_t                              \
  chain_##n (unsigned depth, uint64_t seed)             \
  {                                                     \
    uint64_t r = next (depth, seed + n);                \
    BARRIER (r);                                        \
    return r + n;                                       \
  }

CHAIN (7, recurse)
CHAIN (6, chain_7)
CHAIN (5, chain_6)
CHAIN (4, chain_5)
CHAIN (3, chain_4)
CHAIN (2, chain_3)
CHAIN (1, chain_2)
CHAIN (0, chain_1)

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
  unsigned iter = 0;

  while (cpu_ms () - start < budget)
    for (int k = 0; k < 16; k++, iter++)
      {
        /* Depth 20..40, changing every call. */
        unsigned depth = 20 + (iter * 7) % 21;
        acc += chain_0 (depth, seed++);
      }
  sink = acc;
  printf ("deep: %u iterations\n", iter);
  return 0;
}
