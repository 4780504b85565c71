#!/bin/sh
# A program that forks a child which burns CPU and then execs another program
# (the deep workload), and a child that execs the same program again, while
# the parent burns CPU: eu-stacktrace's user frames equal perf script's in at
# least 99.5% of the samples perf unwound to _start.
#
# perf 6.1 often stops early in the exec'd children (after one frame, or at
# __libc_start_call_main; it varies from run to run, and perf keeps the
# mappings a child inherited at fork after its exec): there perf is no full
# oracle, and the test asks instead that eu-stacktrace unwinds those samples
# to _start through the frames perf did find.  Where perf does reach _start
# in an exec'd image (deep, and exe: this program again) but leaves out the
# loader's frames in between (its frame-pointer fallback, seen in about one
# run in five, more often under load), --after-exec asks that ours hold all
# of perf's frames in order instead of equal them.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
e2e_run forkexec "$WORKLOADS/forkexec" 600 "$WORKLOADS/deep" \
  -- --after-exec deep,exe --expect-complete exec_leaf,leaf_hash,leaf_divide,leaf_float
