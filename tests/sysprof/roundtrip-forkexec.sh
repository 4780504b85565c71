#!/bin/sh
# Processes that fork, exec and exit: the capture written from perf.data has
# their fork and exit frames, and the stack-user stream, whose processes are
# known only by its PROCESS, MAP, FORK and EXIT frames, unwinds every sample
# of every process as perf.data does.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"
FORKS=2
sysprof_roundtrip forkexec "$WORKLOADS/forkexec" 500 "$WORKLOADS/deep"
