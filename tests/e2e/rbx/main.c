/* tests/e2e/unwinder-rbx.sh's program: main calls mid (N), an assembly
   function of rbx-*.s.  In rbx-rip.s and rbx-rbp.s mid's CFI keeps a
   register in rbx (the return address; the caller's rbp, which main's CFA
   needs, main being built with a frame pointer), and mid calls leaf, which
   never touches rbx and so, by libdw 0.188's x86_64 ABI rules (which name
   rax where they mean rbx), leaves rbx undefined in mid's frame.
   rbx-unread.s has its own callees.  */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__ ((noinline)) void
leaf (unsigned long n)
{
  for (unsigned long i = 0; i < n; i++)
    sink += i;
}

void mid (unsigned long n);

int
main (int argc, char **argv)
{
  unsigned long n = argc > 1 ? strtoul (argv[1], NULL, 10) : 300000000UL;
  /* mid keeps what it needs in rbx: the call clobbers it.  */
  __asm__ volatile ("call mid" : : "D" (n)
                    : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory");
  return 0;
}
