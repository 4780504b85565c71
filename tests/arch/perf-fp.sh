#!/bin/sh
# perf record -g: no stack copy, the kernel's frame-pointer call chain.  The
# deep workload built with frame pointers is shown as that chain,
# symbolized, with the stop reason "kernel call chain (frame pointers)", and
# equals perf script's in at least 99.5% of all samples (perf shows such a
# chain as it is, its callers' addresses not decremented: --raw-callers).
E2E_RECORD="-g"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run deep-fp "$TOP_BUILDDIR/tests/arch/deep-fp" 1500 -- --raw-callers
