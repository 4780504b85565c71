/* The library tests/workloads/dlopen loads after start.  */
#include <stdint.h>

#define NOINLINE __attribute__ ((noinline))

uint64_t plugin_entry (uint64_t s);

static volatile uint64_t sink;

static NOINLINE uint64_t
plugin_hot (uint64_t s)
{
  for (int i = 0; i < 20000; i++)
    s ^= (s << 13) ^ (s >> 7) ^ (s << 17);
  sink = s;
  return s;
}

static NOINLINE uint64_t
plugin_middle (uint64_t s)
{
  uint64_t r = plugin_hot (s + 1);
  sink = r;
  return r * 3;
}

NOINLINE uint64_t
plugin_entry (uint64_t s)
{
  uint64_t r = plugin_middle (s);
  sink = r;
  return r + 7;
}
