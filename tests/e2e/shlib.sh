#!/bin/sh
# A program whose hot code is in a shared library of our own (libwork.so)
# and in libc on its behalf (qsort calling back into the library, memcpy,
# strlen): eu-stacktrace's user frames equal perf script's in at least 99.5%
# of the samples perf unwound to _start.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run shlib "$WORKLOADS/shlib" 1500
