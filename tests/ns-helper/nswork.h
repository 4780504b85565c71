/* libnswork.so: the shared library of the namespace helper's test program,
 * which exists only inside the test's mount namespaces.  */
#pragma once

#include <stdint.h>

uint64_t nswork_run (uint64_t s);
