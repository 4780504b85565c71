/* A workload for epilogue.sh: stops inside an x86 epilogue (between the
   pops and at the tail call after them), where the CFI places the saved
   registers in slots already below the stack pointer, and stops in the
   PLT stubs lld writes without CFI, lazy path included.  Built with
   frame pointers, so that the caller's CFA needs the popped %rbp.  */
#include <stdlib.h>

typedef long (*op_fn) (long, long);

__attribute__ ((noinline)) static long
mix (long a, long b)
{
  return a * 31 + b;
}

/* Called through a pointer nobody can see through: a tail call by `jmp'
   after the epilogue.  */
op_fn volatile op = mix;
char digits[4][8] = { "17", "-5", "250", "3" };

/* atol goes through the PLT; the values live across the calls, in
   callee-saved registers that the epilogue pops.  */
__attribute__ ((noinline)) long
work (long a, long b, long c)
{
  long x = atol (digits[a & 3]) + a;
  long y = atol (digits[(b + x) & 3]) + b;
  long z = atol (digits[(c + y) & 3]) + c;
  return op (x + y, z * a + b);
}

__attribute__ ((noinline)) long
outer (long n)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    s += work (i, i + 1, i + 2);
  return s;
}

int
main (int argc, char **argv)
{
  (void) argv;
  return outer (argc + 2) == 42;
}
