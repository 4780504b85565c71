/* Workload for the end-to-end tests: a multi-threaded program.
 *
 * Four worker threads run different call chains of noinline functions
 * (alpha_*, beta_*, gamma_*, delta_*) while the main thread waits in
 * pthread_join.  Each worker burns its own CPU budget.
 *
 * Usage: threads [MILLISECONDS]   (CPU time per thread; default 600) */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

#define N_THREADS 4

static double budget_ms = 600.0;
static volatile uint64_t sink[N_THREADS];

static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static NOINLINE uint64_t
spin (uint64_t h, int rounds)
{
  for (int i = 0; i < rounds; i++)
    {
      h = h * 6364136223846793005ULL + 1442695040888963407ULL;
      BARRIER (h);
    }
  return h;
}

/* alpha: three levels. */
static NOINLINE uint64_t
alpha_leaf (uint64_t s)
{
  uint64_t r = spin (s, 30000);
  BARRIER (r);
  return r + 1;
}

static NOINLINE uint64_t
alpha_mid (uint64_t s)
{
  uint64_t r = alpha_leaf (s ^ 0x55);
  BARRIER (r);
  return r + 2;
}

static NOINLINE uint64_t
alpha_top (uint64_t s)
{
  uint64_t r = alpha_mid (s + 3);
  BARRIER (r);
  return r + 3;
}

/* beta: floating point in its own leaf. */
static NOINLINE double
beta_leaf (double x)
{
  for (int i = 0; i < 20000; i++)
    {
      x = x * 0.999999 + 1.0 / (x + 2.0);
      BARRIER (x);
    }
  return x;
}

static NOINLINE uint64_t
beta_top (uint64_t s)
{
  double d = beta_leaf ((double) (s & 0xff));
  BARRIER (d);
  return (uint64_t) d + s;
}

/* gamma: a short recursion. */
static NOINLINE uint64_t
gamma_rec (unsigned depth, uint64_t s)
{
  uint64_t r = depth == 0 ? spin (s, 20000) : gamma_rec (depth - 1, s + depth);
  BARRIER (r);
  return r ^ depth;
}

static NOINLINE uint64_t
gamma_top (uint64_t s)
{
  uint64_t r = gamma_rec (6, s);
  BARRIER (r);
  return r + 5;
}

/* delta: two alternating leaves. */
static NOINLINE uint64_t
delta_even (uint64_t s)
{
  uint64_t r = spin (s, 25000);
  BARRIER (r);
  return r;
}

static NOINLINE uint64_t
delta_odd (uint64_t s)
{
  uint64_t h = s;
  for (int i = 0; i < 25000; i++)
    {
      h = (h << 7) ^ (h >> 3) ^ (uint64_t) i;
      BARRIER (h);
    }
  return h;
}

static NOINLINE uint64_t
delta_top (uint64_t s)
{
  uint64_t r = (s & 1) ? delta_odd (s) : delta_even (s);
  BARRIER (r);
  return r;
}

typedef uint64_t (*work_fn) (uint64_t);

static void *
worker (void *arg)
{
  static const work_fn works[N_THREADS] = { alpha_top, beta_top, gamma_top, delta_top };
  int idx = (int) (intptr_t) arg;
  work_fn fn = works[idx];
  double start = thread_cpu_ms ();
  uint64_t acc = 0, s = (uint64_t) idx;

  while (thread_cpu_ms () - start < budget_ms)
    for (int k = 0; k < 8; k++)
      acc += fn (s++);
  sink[idx] = acc;
  return NULL;
}

int
main (int argc, char **argv)
{
  pthread_t th[N_THREADS];

  if (argc > 1)
    budget_ms = atof (argv[1]);
  for (int i = 0; i < N_THREADS; i++)
    if (pthread_create (&th[i], NULL, worker, (void *) (intptr_t) i) != 0)
      {
        perror ("pthread_create");
        return 1;
      }
  for (int i = 0; i < N_THREADS; i++)
    pthread_join (th[i], NULL);
  printf ("threads: done\n");
  return 0;
}
