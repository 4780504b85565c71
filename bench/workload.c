/* A CPU-bound workload for the benchmarks in bench/.
 *
 * It burns CPU for a fixed number of seconds of CPU time, so that a
 * `perf record -F HZ` of it yields a predictable number of samples
 * (about HZ x SECONDS per thread), whatever the machine's speed.
 *
 * The work is spread over a call chain that is typical of real programs
 * and exercises the unwinder: several noinline functions of the program,
 * libc (qsort calling back into the program's comparator, memcpy, memset),
 * and recursion several frames deep.  Build it with -O2 -g, as a program
 * would be shipped:
 *
 *   gcc -O2 -g -pthread -o workload workload.c
 *   ./workload [SECONDS [THREADS]]       (defaults: 5 seconds, 1 thread)
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline, noipa))

enum { BATCH = 4096, WALK_DEPTH = 12 };

struct worker
{
  double cpu_seconds;
  uint64_t seed;
  uint64_t result;
};

/* Keeps the results alive so the compiler cannot drop the work.  */
static volatile uint64_t sink;

static double
thread_cpu_seconds (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static uint64_t
mix (uint64_t x)
{
  /* splitmix64 finaliser, repeated so that leaf frames get samples.  */
  for (int i = 0; i < 8; i++)
    {
      x += 0x9e3779b97f4a7c15ULL;
      x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
      x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
      x ^= x >> 31;
    }
  return x;
}

NOINLINE static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return (x > y) - (x < y);
}

NOINLINE static void
fill_batch (uint64_t *a, size_t n, uint64_t seed)
{
  for (size_t i = 0; i < n; i++)
    a[i] = mix (seed + i);
}

NOINLINE static void
copy_batch (uint64_t *dst, const uint64_t *src, size_t n)
{
  /* Several passes so that memcpy shows up in the profile.  */
  for (int pass = 0; pass < 64; pass++)
    {
      memcpy (dst, src, n * sizeof *dst);
      memset ((char *) dst + (pass & 7), pass, 64);
    }
}

NOINLINE static void
sort_batch (uint64_t *a, size_t n)
{
  qsort (a, n, sizeof *a, compare_u64);
}

NOINLINE static uint64_t
leaf_work (uint64_t x)
{
  uint64_t acc = x;

  for (int i = 0; i < 8192; i++)
    acc = mix (acc ^ (uint64_t) i);
  return acc;
}

/* Real recursion: the call is not in tail position, so every level keeps
   its frame on the stack.  */
NOINLINE static uint64_t
walk (int depth, uint64_t x)
{
  uint64_t r;

  if (depth == 0)
    return leaf_work (x);
  r = walk (depth - 1, x * 31 + (uint64_t) depth);
  return mix (r ^ (uint64_t) depth);
}

NOINLINE static uint64_t
do_round (uint64_t *src, uint64_t *dst, uint64_t seed)
{
  fill_batch (src, BATCH, seed);
  copy_batch (dst, src, BATCH);
  sort_batch (dst, BATCH);
  return dst[BATCH / 2] ^ walk (WALK_DEPTH, seed);
}

NOINLINE static void *
run_worker (void *arg)
{
  struct worker *w = arg;
  uint64_t *src = malloc (BATCH * sizeof *src);
  uint64_t *dst = malloc (BATCH * sizeof *dst);
  double end = thread_cpu_seconds () + w->cpu_seconds;
  uint64_t seed = w->seed, acc = 0;

  if (src == NULL || dst == NULL)
    {
      perror ("workload: malloc");
      exit (EXIT_FAILURE);
    }
  while (thread_cpu_seconds () < end)
    acc ^= do_round (src, dst, seed++);
  w->result = acc;
  free (src);
  free (dst);
  return NULL;
}

int
main (int argc, char **argv)
{
  double seconds = argc > 1 ? strtod (argv[1], NULL) : 5.0;
  long nthreads = argc > 2 ? strtol (argv[2], NULL, 10) : 1;
  struct worker *workers;
  pthread_t *threads;
  uint64_t acc = 0;

  if (argc > 3 || !(seconds > 0) || nthreads < 1 || nthreads > 256)
    {
      fprintf (stderr, "usage: %s [SECONDS [THREADS]]\n", argv[0]);
      return 64;
    }
  workers = calloc (nthreads, sizeof *workers);
  threads = calloc (nthreads, sizeof *threads);
  if (workers == NULL || threads == NULL)
    {
      perror ("workload: calloc");
      return EXIT_FAILURE;
    }
  for (long i = 0; i < nthreads; i++)
    {
      workers[i].cpu_seconds = seconds;
      workers[i].seed = 0x1234567ULL * (uint64_t) (i + 1);
    }
  /* The main thread is worker 0, so one thread means no pthread at all.  */
  for (long i = 1; i < nthreads; i++)
    {
      int r = pthread_create (&threads[i], NULL, run_worker, &workers[i]);
      if (r != 0)
        {
          errno = r;
          perror ("workload: pthread_create");
          return EXIT_FAILURE;
        }
    }
  run_worker (&workers[0]);
  for (long i = 1; i < nthreads; i++)
    pthread_join (threads[i], NULL);
  for (long i = 0; i < nthreads; i++)
    acc ^= workers[i].result;
  sink = acc;
  free (workers);
  free (threads);
  return 0;
}
