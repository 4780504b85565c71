#!/bin/sh
# bench-startup.sh: start-up time and peak memory.
#
# 1. Start-up: the time from starting `eu-stacktrace -f folded -o /dev/null
#    -- SPIN` to SPIN's first sample, which is what a user waits for, side
#    by side with `perf record -e cpu-clock:u -F 999 --call-graph dwarf --
#    SPIN` and with SPIN run directly.  SPIN prints CLOCK_MONOTONIC at its
#    first instruction of main, renames itself (a PERF_RECORD_COMM stamped
#    with the perf clock between two CLOCK_MONOTONIC readings: the offset
#    between the two clocks to a few microseconds), and spins for
#    BENCH_SPIN_MS of CPU time.  The samples' times come from the records
#    (eu-stacktrace --record FILE, perf record -o FILE, read back with
#    perf script).  Each run prints the time from the start (Python's clock
#    just before it spawns the tool) to the command's exec (its COMM exec
#    record), to its main, and to its first sample; the exec-to-first-sample
#    part is the sampling period (cpu-clock at 999 Hz: about 1 ms of the
#    command's CPU time) and whatever keeps the command off the CPU.
#    EU_BASELINE names a second eu-stacktrace timed alternately with the
#    first (before and after a change, in one run).  Also the whole run's
#    wall and CPU time, and what a loaded machine blurs least: the CPU
#    time the tool and SPIN spent until SPIN's main (SPIN's own clock,
#    which counts its time before its exec, and its parent's
#    /proc/PID/schedstat), and what both waited for a CPU meanwhile.
# 2. Peak RSS at -j 1 (and the default -j) on a recording of bench/workload.c
#    and on one four times longer: it must not grow with the length.
#
# Nothing here asserts a time.  Environment, besides bench-lib.sh's:
#   BENCH_RUNS      start-up runs of each (median) [11]
#   BENCH_SPIN_MS   CPU milliseconds the started command spins [5]
#   BENCH_SECONDS   CPU seconds of the short recording [2]
#   BENCH_SKIP_RSS  set: the start-up figures only
#   EU_BASELINE     another eu-stacktrace to time alternately

set -eu
here=$(cd "$(dirname "$0")" && pwd)
BENCH_RUNS=${BENCH_RUNS:-11}
BENCH_SPIN_MS=${BENCH_SPIN_MS:-5}
BENCH_SECONDS=${BENCH_SECONDS:-2}
BENCH_FREQ=${BENCH_FREQ:-999}
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

mkdir -p "$work/home"
HOME=$work/home
export HOME

cat > "$work/spin.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long
ns (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A task's time on a CPU and its time waiting for one, in ns (-1 -1: not
   known); for a task that sleeps, as ours and the tool do here, up to
   date.  */
static void
sched (const char *path, long long *run, long long *wait)
{
  FILE *f = fopen (path, "r");
  *run = *wait = -1;
  if (f != NULL && fscanf (f, "%lld %lld", run, wait) != 2)
    *run = *wait = -1;
  if (f != NULL)
    fclose (f);
}

int
main (int argc, char **argv)
{
  long long start = ns (CLOCK_MONOTONIC);
  /* What the start cost in CPU: this process's (before its exec too: a
     tool's child, or its clone, is this process) and its parent's, and
     what each waited for a CPU until here.  */
  long long cpu_self = ns (CLOCK_PROCESS_CPUTIME_ID), run, wait_self, cpu_parent, wait_parent;
  sched ("/proc/self/schedstat", &run, &wait_self);
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/schedstat", (int) getppid ());
  sched (path, &cpu_parent, &wait_parent);
  long long before = ns (CLOCK_MONOTONIC);
  prctl (PR_SET_NAME, "spin-calib");
  long long after = ns (CLOCK_MONOTONIC);
  long long cpu = atoll (argv[1]) * 1000000LL;
  volatile unsigned long n = 0;
  while (ns (CLOCK_THREAD_CPUTIME_ID) < cpu)
    n++;
  printf ("%lld %lld %lld %lld %lld %lld %lld\n", start, before, after, cpu_self, wait_self,
          cpu_parent, wait_parent);
  return 0;
}
EOF
"$CC" -O2 -o "$work/spin" "$work/spin.c"

# One run of TOOL (direct, eu, base, perf): prints "TO_EXEC TO_MAIN
# TO_FIRST_SAMPLE EXEC_TO_FIRST_SAMPLE WALL CPU CPU_TO_MAIN WAIT_TO_MAIN" in
# milliseconds ("-" where a run has no records).  CPU_TO_MAIN is the CPU
# time of the tool and of SPIN (its time before its exec included) until
# SPIN's main, WAIT_TO_MAIN what both waited for a CPU meanwhile (SPIN
# alone when run directly): the start's work, and what the load added.
startup_py='
import os, resource, subprocess, sys, time
tool, perf, spin, spin_ms, rec = sys.argv[1:6]
argv = sys.argv[6:]
if tool == "direct":
    argv = [spin, spin_ms]
elif tool == "perf":
    argv = [perf, "record", "-q", "-e", "cpu-clock:u", "-F", "999", "--call-graph", "dwarf",
            "-o", rec, "--", spin, spin_ms]
else:
    argv = argv + ["-f", "folded", "-o", "/dev/null", "--record", rec, "--", spin, spin_ms]
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic_ns()
out = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, check=True).stdout
t1 = time.monotonic_ns()
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
start, before, after, cpu_self, wait_self, cpu_parent, wait_parent = \
    (int(x) for x in out.split()[-7:])
cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
ms = lambda ns: "%.2f" % (ns / 1e6)
if tool == "direct":
    print("-", ms(start - t0), "-", "-", ms(t1 - t0), "%.2f" % (cpu * 1e3), ms(cpu_self),
          ms(wait_self))
    sys.exit(0)
script = subprocess.run([perf, "script", "-i", rec, "--ns", "-F", "comm,tid,time,event", "-G",
                         "--show-task-events"], stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
exec_t = calib_t = first_t = None
for line in script.decode().splitlines():
    if ":" not in line:
        continue
    t = int(round(float(line.split(":")[0].split()[-1]) * 1e9))
    if "PERF_RECORD_COMM exec" in line and exec_t is None:
        exec_t = t
    elif "PERF_RECORD_COMM" in line and "spin-calib" in line and calib_t is None:
        calib_t = t
    elif "cpu-clock" in line and first_t is None:
        first_t = t
if exec_t is None or calib_t is None or first_t is None:
    sys.exit("bench: %s: no exec, rename or sample in %s, run again" % (tool, rec))
offset = calib_t - (before + after) // 2     # perf clock - CLOCK_MONOTONIC
print(ms(exec_t - offset - t0), ms(start - t0), ms(first_t - offset - t0),
      ms(first_t - exec_t), ms(t1 - t0), "%.2f" % (cpu * 1e3), ms(cpu_self + cpu_parent),
      ms(wait_self + wait_parent))
'
tools="direct eu perf"
[ -n "${EU_BASELINE:-}" ] && tools="direct base eu perf"
for t in $tools; do : > "$work/$t"; done
say "start-up: $BENCH_RUNS runs each of $tools, alternating"
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  for t in $tools; do
    bin=$EU_STACKTRACE
    [ "$t" = base ] && bin=$EU_BASELINE
    # A run without the records it needs (perf 6.1 aborts now and then
    # under load) is said and run again, twice at most, then left out.
    n=0
    until "$PYTHON3" -c "$startup_py" "$t" "$PERF" "$work/spin" "$BENCH_SPIN_MS" \
        "$work/rec.data" "$bin" >> "$work/$t" 2> "$work/py.err"; do
      n=$((n + 1))
      tail -1 "$work/py.err" >&2
      [ "$n" -lt 3 ] || { say "$t: run $i left out"; break; }
    done
  done
  i=$((i + 1))
done
echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "start-up, milliseconds from the start (medians of $BENCH_RUNS; a spin of $BENCH_SPIN_MS ms of CPU):"
printf '  %-20s %8s %8s %13s %12s %8s %8s %12s %12s\n' "" "to exec" "to main" "to 1st sample" \
  "exec->sample" "wall" "CPU" "CPU to main" "wait to main"
for t in $tools; do
  case $t in
    direct) name="$(basename "$work/spin") directly" ;;
    eu) name="eu-stacktrace" ;;
    base) name="EU_BASELINE" ;;
    perf) name="perf record" ;;
  esac
  printf '  %-20s' "$name ($(wc -l < "$work/$t"))"
  for c in 1 2 3 4 5 6 7 8; do
    case $c in 3) w=13 ;; 4 | 7 | 8) w=12 ;; *) w=8 ;; esac
    if [ ! -s "$work/$t" ] || [ "$(awk -v c="$c" 'NR == 1 { print $c }' "$work/$t")" = - ]; then
      printf " %${w}s" -
    else printf " %${w}.1f" "$(median "$work/$t" $c)"; fi
  done
  echo
done
[ -n "${BENCH_SKIP_RSS:-}" ] && exit 0

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

echo "peak RSS -j 1: $((r1 / 1024)) MB on $n1 samples, $((r4 / 1024)) MB on $n4 samples (ratio $(echo "$r4 $r1" | awk '{ printf "%.2f", $1 / $2 }'))"
echo "peak RSS default -j: $((d1 / 1024)) MB, $((d4 / 1024)) MB"
echo "targets: start-up (to the first sample) at most 20 ms; peak RSS at -j 1 at most 16 MB, flat in the length"
