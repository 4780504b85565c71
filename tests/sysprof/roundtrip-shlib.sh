#!/bin/sh
# A program whose hot code is in a shared library of our own and in libc:
# its Sysprof captures, from perf.data and through the stack-user stream,
# hold the call chains of -f json, and every other frame passes through.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"
sysprof_roundtrip shlib "$WORKLOADS/shlib" 1200
