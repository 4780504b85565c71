/* libnswork.so: hot code in a library that only the test's mount
 * namespaces have (tests/ns-helper/).  */
#include "nswork.h"

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

NOINLINE uint64_t nswork_leaf (uint64_t s);

NOINLINE uint64_t
nswork_leaf (uint64_t s)
{
  for (int i = 0; i < 20000; i++)
    {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      BARRIER (s);
    }
  return s;
}

NOINLINE uint64_t
nswork_run (uint64_t s)
{
  s = nswork_leaf (s);
  BARRIER (s);
  return s ^ (s >> 7);
}
