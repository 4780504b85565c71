/* Workload for tests/debuginfod/: a program whose only CFI will be the
 * .debug_frame of a separate debug file.
 *
 * It is compiled with -fno-asynchronous-unwind-tables -fno-unwind-tables,
 * so that gcc writes its CFI to .debug_frame rather than .eh_frame; the test
 * then moves .debug_frame (and the symbol table) to a debug file with
 * objcopy --only-keep-debug and removes the .eh_frame that the C runtime's
 * objects bring.  The binary itself then has no unwind information at all,
 * and without frame pointers only the debug file can unwind it.
 *
 * The work goes through a chain of noinline functions and through libc
 * (qsort calling back into the program), so that unwinding has to cross
 * between the program and libc in both directions.
 *
 * Usage: nocfi [MILLISECONDS]   (CPU time to burn; default 1500) */

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

static volatile uint64_t sink;

static NOINLINE uint64_t
mix (uint64_t seed)
{
  uint64_t h = seed ^ 0xcbf29ce484222325ULL;
  for (int i = 0; i < 3000; i++)
    {
      h ^= (uint64_t) i;
      h *= 0x100000001b3ULL;
      BARRIER (h);
    }
  return h;
}

static NOINLINE int
compare (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  BARRIER (x);
  return x < y ? -1 : x > y;
}

static NOINLINE uint64_t
sort_some (uint64_t seed)
{
  uint64_t v[256];
  for (int i = 0; i < 256; i++)
    {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      v[i] = seed >> 11;
    }
  qsort (v, 256, sizeof v[0], compare);
  return v[seed & 255];
}

static NOINLINE uint64_t
stage_two (uint64_t seed)
{
  uint64_t r = (seed & 1) ? mix (seed) : sort_some (seed);
  BARRIER (r);
  return r + 1;
}

static NOINLINE uint64_t
stage_one (uint64_t seed)
{
  uint64_t r = stage_two (seed * 31 + 7);
  BARRIER (r);
  return r ^ seed;
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
  double ms = argc > 1 ? atof (argv[1]) : 1500;
  double start = cpu_ms ();
  uint64_t seed = 1;
  while (cpu_ms () - start < ms)
    for (int i = 0; i < 64; i++)
      seed = stage_one (seed);
  sink = seed;
  return 0;
}
