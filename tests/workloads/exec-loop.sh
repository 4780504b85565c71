#!/bin/sh
# Workload for the end-to-end tests: runs /bin/true COUNT times (default
# 300), one after the other, so that most samples land while the dynamic
# loader loads a program: their stacks end at ld.so's _start, which has no
# CFI (tests/e2e/unwinder-equal.sh).
#
# Usage: exec-loop.sh [COUNT]
count=${1:-300}
i=0
while [ "$i" -lt "$count" ]; do
  /bin/true
  i=$((i + 1))
done
