/* The shared library of the shlib workload (libwork.so). */
#ifndef WORKLOADS_LIBWORK_H
#define WORKLOADS_LIBWORK_H

#include <stdint.h>

uint64_t work_compute (uint64_t seed);
uint64_t work_sort (uint64_t seed);
uint64_t work_copy (uint64_t seed);
uint64_t work_strings (uint64_t seed);

#endif
