/* Workload of tests/e2e/unwinder-debug-frame.sh: spin_in_main burns CPU
 * for NS nanoseconds (default 0.3 s), called from main directly, or, with
 * a second argument, through call_with_rbp0 of libnoeh.so (nocfi.c).  The
 * test builds it without .eh_frame for its own code, so that only
 * .debug_frame (in the program, or in a separate debug file) describes
 * spin_in_main.  */
#include <stdlib.h>
#include <time.h>

void call_with_rbp0 (void (*fn) (long), long ns);

volatile unsigned long sink;

__attribute__ ((noinline)) void
spin_in_main (long ns)
{
  struct timespec t0, t;
  clock_gettime (CLOCK_MONOTONIC, &t0);
  do
    {
      for (int i = 0; i < 100000; i++)
        sink += i;
      clock_gettime (CLOCK_MONOTONIC, &t);
    }
  while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

int
main (int argc, char **argv)
{
  long ns = argc > 1 ? atol (argv[1]) : 300000000L;
#ifdef WITH_NOEH
  if (argc > 2)
    {
      call_with_rbp0 (spin_in_main, ns);
      return 0;
    }
#endif
  spin_in_main (ns);
  return 0;
}
