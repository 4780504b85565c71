#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2 (a, b)
void ctrwork (void);
__attribute__((noinline)) void CAT (V, top) (void) { ctrwork (); __asm__ volatile (""); }
int main (void) { for (;;) CAT (V, top) (); }
