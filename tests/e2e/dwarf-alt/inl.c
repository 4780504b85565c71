/* A hot loop in a function inlined into its caller: under --inline the
   frame is named from the DWARF of its abstract origin, which
   tests/e2e/libdw-opens.sh moves to a dwz file (DW_FORM_GNU_strp_alt) or
   to a split DWARF .dwo file.  Argument: the outer loop's count.  */
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__ ((always_inline)) unsigned long
mix_the_values (unsigned long x)
{
  for (int i = 0; i < 1000; i++)
    x = x * 6364136223846793005UL + 1442695040888963407UL;
  return x;
}

__attribute__ ((noinline)) static void
spin_outer_loop (unsigned long n)
{
  for (unsigned long i = 0; i < n; i++)
    sink = mix_the_values (sink + i);
}

int
main (int argc, char **argv)
{
  spin_outer_loop (argc > 1 ? strtoul (argv[1], NULL, 10) : 100000);
  return 0;
}
