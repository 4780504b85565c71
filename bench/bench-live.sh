#!/bin/sh
# Live sampling overhead: the CPU time eu-stacktrace spends per second of
# sampled CPU time, on one busy process at 999 Hz with 8 KiB stacks,
# side by side with perf record's own cost for the same sampling (perf
# only writes the samples; eu-stacktrace also unwinds and symbolizes them).
#
# Environment: EU_STACKTRACE, PERF, CC, BENCH_SECONDS (default 10), BENCH_RUNS (3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
EU_STACKTRACE=${EU_STACKTRACE:-$here/../eu-stacktrace}
PERF=${PERF:-perf}
CC=${CC:-cc}
BENCH_SECONDS=${BENCH_SECONDS:-10}
BENCH_RUNS=${BENCH_RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench-live.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$CC" -O2 -g -o "$work/workload" "$here/workload.c" -lpthread
cpu_of () {  # PID: its user+system CPU seconds so far
  awk '{ print ($14 + $15) / '"$(getconf CLK_TCK)"' }' "/proc/$1/stat"
}

# Runs PROFILER... -p PID against a fresh workload; prints
# "profiler-cpu-seconds workload-cpu-seconds".
measure () {
  "$work/workload" "$BENCH_SECONDS" > /dev/null &
  wl=$!
  sleep 0.2
  before=$(cpu_of "$wl")
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" -p "$wl" > /dev/null 2> "$work/err" || {
    cat "$work/err" >&2; exit 1; }
  wait "$wl" || true
  awk -v b="$before" -v a="$BENCH_SECONDS" '{ printf "%.3f %.3f\n", $1 + $2, a - b }' "$work/time"
}

echo "bench-live: $BENCH_RUNS runs of ${BENCH_SECONDS} s, one busy thread, -F 999, 8 KiB stacks"
: > "$work/eu"; : > "$work/perf"
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  eu=$(measure "$EU_STACKTRACE" -F 999 --stack-size 8192 -f folded -o /dev/null)
  pr=$(measure "$PERF" record -q -e cpu-clock -F 999 --call-graph dwarf,8192 -o "$work/perf.data")
  echo "$eu" >> "$work/eu"; echo "$pr" >> "$work/perf"
  echo "run $i: eu-stacktrace $eu, perf record $pr (profiler CPU s, sampled CPU s)"
  i=$((i + 1))
done
summary () {
  sort -n "$1" | awk -v label="$2" '{ p[NR] = $1; s[NR] = $2 } END {
    m = int((NR + 1) / 2);
    printf "%-32s %.3f s CPU per %.2f s sampled: %.2f%% (median of %d)\n", label, p[m], s[m], 100 * p[m] / s[m], NR }'
}
echo
summary "$work/eu" "eu-stacktrace (samples, unwinds):"
summary "$work/perf" "perf record (samples, writes):"
echo "target: eu-stacktrace under 2%"
