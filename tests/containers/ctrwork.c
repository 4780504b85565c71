/* The test library, built twice: -DV=ctr for the image, -DV=host for the
   host's file at the same path.  */
#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2 (a, b)
static volatile unsigned long x;
__attribute__((noinline)) void CAT (V, leaf) (void) { for (int i = 0; i < 2000; i++) x += i; }
__attribute__((noinline)) void CAT (V, mid) (void) { CAT (V, leaf) (); __asm__ volatile (""); }
__attribute__((noinline)) void ctrwork (void) { CAT (V, mid) (); __asm__ volatile (""); }
