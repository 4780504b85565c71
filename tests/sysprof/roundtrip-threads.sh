#!/bin/sh
# Four threads: samples keep their tids through the stack-user stream and
# the capture, and the call chains of every thread equal -f json's.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"
sysprof_roundtrip threads "$WORKLOADS/threads" 300
