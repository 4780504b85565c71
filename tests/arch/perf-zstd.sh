#!/bin/sh
# perf record -z: the records come in zstd-compressed PERF_RECORD_COMPRESSED
# records.  The deep workload recorded that way equals perf script in at
# least 99.5% of the samples perf unwound to _start (as tests/e2e/deep.sh).
E2E_RECORD="-z --call-graph dwarf"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run deep-zstd "$WORKLOADS/deep" 1500
