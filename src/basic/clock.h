/* The monotonic clock in nanoseconds: timeouts, budgets and the intervals
 * --stats and the benchmarks report.  */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t
st_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}
