#!/bin/sh
# bench-startup.sh: start-up time and peak memory.
#
# 1. Start-up: the time from the exec of `eu-stacktrace -f folded -o
#    /dev/null -- STAMP` to STAMP's first instruction, which is when its
#    sampling begins (the events are enabled on its exec).  STAMP is a tiny
#    program that prints CLOCK_MONOTONIC at its start; the same program run
#    directly gives the cost of the fork and exec themselves, which is
#    subtracted.  Also the whole run's wall and CPU time.
# 2. Peak RSS at -j 1 (and the default -j) on a recording of bench/workload.c
#    and on one four times longer: it must not grow with the length.
#
# Nothing here asserts a time.  Environment, besides bench-lib.sh's:
#   BENCH_RUNS      start-up runs (median) [11]
#   BENCH_SECONDS   CPU seconds of the short recording [2]

set -eu
here=$(cd "$(dirname "$0")" && pwd)
BENCH_RUNS=${BENCH_RUNS:-11}
BENCH_SECONDS=${BENCH_SECONDS:-2}
BENCH_FREQ=${BENCH_FREQ:-999}
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

mkdir -p "$work/home"
HOME=$work/home
export HOME

cat > "$work/stamp.c" <<'EOF'
#include <stdio.h>
#include <time.h>
int
main (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  printf ("%lld\n", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec);
  return 0;
}
EOF
"$CC" -O2 -o "$work/stamp" "$work/stamp.c"

# Prints "TO_FIRST_INSTRUCTION_MS WALL_MS CPU_MS" of one run of CMD... STAMP.
startup_py='
import os, resource, subprocess, sys, time
argv = sys.argv[1:]
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic_ns()
out = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, check=True).stdout
t1 = time.monotonic_ns()
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
stamp = int(out.split()[-1])
cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
print("%.2f %.2f %.2f" % ((stamp - t0) / 1e6, (t1 - t0) / 1e6, cpu * 1e3))
'
: > "$work/direct"; : > "$work/eu"
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  "$PYTHON3" -c "$startup_py" "$work/stamp" >> "$work/direct"
  "$PYTHON3" -c "$startup_py" "$EU_STACKTRACE" -f folded -o /dev/null -- "$work/stamp" \
    >> "$work/eu"
  i=$((i + 1))
done
base=$(median "$work/direct" 1)
first=$(median "$work/eu" 1)
wall=$(median "$work/eu" 2)
cpu=$(median "$work/eu" 3)

say "recording ${BENCH_SECONDS} s and $((BENCH_SECONDS * 4)) s of the workload at $BENCH_FREQ Hz"
"$PERF" record -q -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf -o "$work/1x.data" \
  -- "$workload" "$BENCH_SECONDS" > /dev/null 2>&1
"$PERF" record -q -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf -o "$work/4x.data" \
  -- "$workload" "$((BENCH_SECONDS * 4))" > /dev/null 2>&1
rss () {  # FILE [-j N]: peak RSS in KB
  f=$1; shift
  measure "$EU_STACKTRACE" "$@" -i "$f" -f text -o /dev/null | awk '{ print $2 }'
}
r1=$(rss "$work/1x.data" -j 1); r4=$(rss "$work/4x.data" -j 1)
d1=$(rss "$work/1x.data"); d4=$(rss "$work/4x.data")
n1=$("$EU_STACKTRACE" -i "$work/1x.data" -f folded 2>/dev/null | awk '{ n += $NF } END { print n }')
n4=$("$EU_STACKTRACE" -i "$work/4x.data" -f folded 2>/dev/null | awk '{ n += $NF } END { print n }')

echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'start-up, exec to the command'"'"'s first instruction (median of %d): %.1f ms (%.1f ms minus the %.1f ms of fork and exec alone)\n' \
  "$BENCH_RUNS" "$(echo "$first $base" | awk '{ print $1 - $2 }')" "$first" "$base"
printf 'eu-stacktrace -f folded -o /dev/null -- /bin/true-like: %.1f ms wall, %.1f ms CPU (median)\n' "$wall" "$cpu"
echo "peak RSS -j 1: $((r1 / 1024)) MB on $n1 samples, $((r4 / 1024)) MB on $n4 samples (ratio $(echo "$r4 $r1" | awk '{ printf "%.2f", $1 / $2 }'))"
echo "peak RSS default -j: $((d1 / 1024)) MB, $((d4 / 1024)) MB"
echo "targets: start-up at most 20 ms; peak RSS at -j 1 at most 16 MB, flat in the length"
