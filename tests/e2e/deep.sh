#!/bin/sh
# An -O2 program with deep call chains (8 distinct functions, then a 20-40
# frame recursion, then one of three leaves): eu-stacktrace's user frames
# equal perf script's in at least 99.5% of the samples perf unwound to _start.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run deep "$WORKLOADS/deep" 1500
