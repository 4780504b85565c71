#!/bin/sh
# perf record --threads writes a directory: the header in "data", each
# recording thread's records in a "data.N" of its own, one per CPU, with no
# FINISHED_ROUND.  Four threads on every CPU: eu-stacktrace reads the
# directory, its user frames equal perf script's in at least 99.5% of the
# samples perf unwound to the thread's clone3, and it writes the samples in
# perf script's order (time order, merged across the files).
E2E_RECORD="--threads --call-graph dwarf"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run perf-threads "$WORKLOADS/threads" 400 -- --in-order
