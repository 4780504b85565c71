#!/bin/sh
# A program with four threads running different call chains: eu-stacktrace's
# user frames equal perf script's in at least 99.5% of the samples perf
# unwound to the thread's clone3.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run threads "$WORKLOADS/threads" 400
