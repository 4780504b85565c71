#!/bin/sh
# perf record --threads -z: a perf.data directory whose data.N files are
# each one zstd stream of PERF_RECORD_COMPRESSED records.  Each file is
# decompressed with its own state while the files are merged by time: the
# user frames equal perf script's in at least 99.5% of the samples perf
# unwound to the thread's clone3, in perf script's order.
E2E_RECORD="--threads -z --call-graph dwarf"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run perf-threads-zstd "$WORKLOADS/threads" 400 -- --in-order
