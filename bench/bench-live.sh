#!/bin/sh
# Live sampling overhead: the CPU time eu-stacktrace spends per second of
# sampled CPU time, on one busy process at 999 Hz with 8 KiB stacks,
# side by side with perf record's own cost for the same sampling (perf
# only writes the samples; eu-stacktrace also unwinds and symbolizes them).
# Then the whole machine (-a) while a shell starts short processes one after
# another next to the busy one: the profiler's CPU time against all the CPU
# time the machine used meanwhile (everything -a samples), and the samples
# the kernel lost.  Start-up time: bench-startup.sh.
#
# Environment: EU_STACKTRACE, PERF, CC, BENCH_SECONDS (default 10), BENCH_RUNS (3);
# BASELINE, another eu-stacktrace: its -a runs alternate with EU_STACKTRACE's,
# one of each per round, and both are summed up; BENCH_ALL_ONLY=1: only -a;
# BENCH_CHURN_MS (0): the -a churn also runs tests/workloads/deep.c burning
# that many ms of CPU, a short process that gets samples (as a compiler's).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
EU_STACKTRACE=${EU_STACKTRACE:-$here/../eu-stacktrace}
PERF=${PERF:-perf}
CC=${CC:-cc}
BENCH_SECONDS=${BENCH_SECONDS:-10}
BENCH_RUNS=${BENCH_RUNS:-3}
BASELINE=${BASELINE:-}
BENCH_ALL_ONLY=${BENCH_ALL_ONLY:-0}
BENCH_CHURN_MS=${BENCH_CHURN_MS:-0}
work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench-live.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$CC" -O2 -g -o "$work/workload" "$here/workload.c" -lpthread
"$CC" -O2 -g -o "$work/deep" "$here/../tests/workloads/deep.c"
cpu_of () {  # PID: its user+system CPU seconds so far
  awk '{ print ($14 + $15) / '"$(getconf CLK_TCK)"' }' "/proc/$1/stat"
}

# Runs PROFILER... -p PID against a fresh workload; prints
# "profiler-cpu-seconds workload-cpu-seconds".
measure () {
  "$work/workload" "$BENCH_SECONDS" > /dev/null &
  wl=$!
  # Sampled once it is the workload: a loaded machine may not have run the
  # exec yet, and -p would follow the shell.
  while [ "$(readlink "/proc/$wl/exe" || true)" != "$work/workload" ]; do
    kill -0 "$wl" 2>/dev/null || { echo "bench-live: the workload died" >&2; exit 1; }
    sleep 0.05
  done
  before=$(cpu_of "$wl")
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" -p "$wl" > /dev/null 2> "$work/err" || {
    cat "$work/err" >&2; exit 1; }
  wait "$wl" || true
  awk -v b="$before" -v a="$BENCH_SECONDS" '{ printf "%.3f %.3f\n", $1 + $2, a - b }' "$work/time"
}

echo "bench-live: $BENCH_RUNS runs of ${BENCH_SECONDS} s, one busy thread, -F 999, 8 KiB stacks"
: > "$work/eu"; : > "$work/perf"
i=1
[ "$BENCH_ALL_ONLY" = 1 ] && i=$((BENCH_RUNS + 1))
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
    printf "%-32s %.4f s CPU per %.2f s sampled: %.3f%% (median of %d)\n", label, p[m], s[m], 100 * p[m] / s[m], NR }'
}
if [ "$BENCH_ALL_ONLY" != 1 ]; then
  echo
  summary "$work/eu" "eu-stacktrace (samples, unwinds):"
  summary "$work/perf" "perf record (samples, writes):"
  echo "target: eu-stacktrace at most 1% (-p)"
fi

busy_jiffies () {  # the machine's non-idle CPU time so far, in clock ticks
  awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}
# PROFILER -a for BENCH_SECONDS with the busy workload and a stream of short
# processes; prints "profiler-cpu-s machine-cpu-s lost-samples".
measure_all () {
  "$work/workload" "$BENCH_SECONDS" > /dev/null &
  wl=$!
  (end=$(($(date +%s) + BENCH_SECONDS)); while [ "$(date +%s)" -lt "$end" ]; do
     /bin/true; /bin/ls / > /dev/null
     [ "$BENCH_CHURN_MS" = 0 ] || "$work/deep" "$BENCH_CHURN_MS" > /dev/null; done) &
  churn=$!
  b=$(busy_jiffies)
  # perf stat's task-clock (the profiler and the helpers it starts): GNU
  # time's centiseconds are 7% of the ~0.15 s a 5 s run costs.
  "$PERF" stat -x, -e task-clock -o "$work/time" -- "$1" -a -F 999 --stack-size 8192 \
    --stats -f folded -o /dev/null -- sleep "$BENCH_SECONDS" > /dev/null 2> "$work/err" || {
    cat "$work/err" >&2; exit 1; }
  a=$(busy_jiffies)
  wait "$wl" "$churn" || true
  lost=$(sed -n 's/^samples lost by the kernel: \([0-9]*\).*/\1/p' "$work/err")
  awk -F, -v b="$b" -v a="$a" -v hz="$(getconf CLK_TCK)" -v lost="${lost:-0}" \
    '$3 == "task-clock" { printf "%.4f %.3f %d\n", $1 / 1000, (a - b) / hz, lost }' "$work/time"
}
: > "$work/all"; : > "$work/base"
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  # Odd rounds start with the baseline, even ones with this build: neither
  # always follows the other into the same moment of the machine's load.
  if [ -n "$BASELINE" ] && [ $((i % 2)) = 1 ]; then
    b=$(measure_all "$BASELINE"); echo "$b" >> "$work/base"
    echo "-a run $i, baseline: $b (profiler CPU s, machine CPU s, samples lost)"
  fi
  r=$(measure_all "$EU_STACKTRACE")
  echo "$r" >> "$work/all"
  echo "-a run $i: $r (profiler CPU s, machine CPU s, samples lost)"
  if [ -n "$BASELINE" ] && [ $((i % 2)) = 0 ]; then
    b=$(measure_all "$BASELINE"); echo "$b" >> "$work/base"
    echo "-a run $i, baseline: $b (profiler CPU s, machine CPU s, samples lost)"
  fi
  i=$((i + 1))
done
# Each run's share, for the spread that a median hides.
shares () {
  awk '{ s = s sep sprintf("%.2f%%", 100 * $1 / $2); sep = ", " } END { print s }' "$1"
}
if [ -n "$BASELINE" ]; then
  summary "$work/base" "baseline -a, short processes:"
  echo "  runs: $(shares "$work/base"); samples lost: $(awk '{ s = s sep $3; sep = ", " } END { print s }' "$work/base")"
fi
summary "$work/all" "eu-stacktrace -a, short processes:"
[ -n "$BASELINE" ] && echo "  runs: $(shares "$work/all")"
echo "samples lost (-a): $(awk '{ s = s sep $3; sep = ", " } END { print s }' "$work/all")"
echo "target: eu-stacktrace -a at most 2%, no sample lost; load $(cut -d' ' -f1-3 /proc/loadavg)"
