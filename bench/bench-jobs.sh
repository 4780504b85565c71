#!/bin/sh
# bench-jobs.sh: -j 2 against -j 1 on 2 CPUs.
#
# Records BENCH_PROCS copies of bench/workload.c running at once (BENCH_SECONDS
# of CPU each) and one copy alone (BENCH_PROCS x BENCH_SECONDS), then times,
# alternating, `eu-stacktrace -j 1` and `-j 2 -f text -o /dev/null` on each
# (median wall time, and the ratio).  A wall time is only as good as the
# machine is idle: the -j 2 run's --stats also gives each thread's CPU
# seconds, from which the time on two idle CPUs follows (at least the
# reading thread's, at least the total over two), and that ratio is printed
# too.  Nothing here asserts a time.
#
# Then, with perf stat -r BENCH_RUNS -e task-clock, the CPU time of all
# threads and the mean wall time of -j 1 and -j 2 on each recording; with
# BASELINE (another eu-stacktrace) set, the baseline's and this one's in
# turn, so that both meet the same load.  CPU time is the figure to read on
# a loaded machine: what -j 2 costs beyond -j 1 shows there, not in the
# scheduler's noise.
#
# Environment, besides bench-lib.sh's: BENCH_PROCS [6], BENCH_SECONDS [4],
# BENCH_FREQ [999], BENCH_RUNS [5], BASELINE [none].  With BENCH_DIR, the
# recordings an earlier run left there are used again.

set -eu
here=$(cd "$(dirname "$0")" && pwd)
BENCH_PROCS=${BENCH_PROCS:-6}
BENCH_SECONDS=${BENCH_SECONDS:-4}
BENCH_FREQ=${BENCH_FREQ:-999}
BENCH_RUNS=${BENCH_RUNS:-5}
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
mkdir -p "$work/home"
HOME=$work/home
export HOME

if [ -n "${BENCH_DIR:-}" ] && [ -s "$work/several.data" ] && [ -s "$work/one.data" ]; then
  say "reusing $work/several.data and $work/one.data"
else
say "recording $BENCH_PROCS processes at once, and one"
"$PERF" record -q -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf -o "$work/several.data" \
  -- sh -c "i=0; while [ \$i -lt $BENCH_PROCS ]; do '$workload' $BENCH_SECONDS & i=\$((i + 1)); done; wait" \
  > /dev/null 2>&1
"$PERF" record -q -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf -o "$work/one.data" \
  -- "$workload" "$((BENCH_PROCS * BENCH_SECONDS))" > /dev/null 2>&1
fi

for rec in several one; do
  : > "$work/$rec.j1"; : > "$work/$rec.j2"
  i=1
  while [ "$i" -le "$BENCH_RUNS" ]; do
    measure "$EU_STACKTRACE" -j 1 -i "$work/$rec.data" -f text -o /dev/null >> "$work/$rec.j1"
    measure "$EU_STACKTRACE" -j 2 -i "$work/$rec.data" -f text -o /dev/null >> "$work/$rec.j2"
    i=$((i + 1))
  done
  "$GNU_TIME" -f '%U %S' -o "$work/$rec.t1" "$EU_STACKTRACE" -j 1 --stats -i "$work/$rec.data" \
    -o /dev/null 2> "$work/$rec.s1" || true
  "$EU_STACKTRACE" -j 2 --stats -i "$work/$rec.data" -o /dev/null 2> "$work/$rec.s2" || true
done

echo "machine: $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
for rec in several one; do
  n=$(sed -n 's/^samples read: *\([0-9]*\).*/\1/p' "$work/$rec.s1")
  w1=$(median "$work/$rec.j1" 1); w2=$(median "$work/$rec.j2" 1)
  split=$(sed -n 's/^unwinding threads: 2, samples each: //p' "$work/$rec.s2")
  # "CPU seconds: reading and writing R, unwinding A B (total T)"
  cpu=$(sed -n 's/^CPU seconds: reading and writing \([0-9.]*\), unwinding .*(total \([0-9.]*\))/\1 \2/p' \
        "$work/$rec.s2")
  echo "$rec: $n samples; -j 1 median $w1 s, -j 2 median $w2 s: $(echo "$w1 $w2" | awk '{ printf "%.2fx", $1 / $2 }') (wall, median of $BENCH_RUNS)"
  echo "  -j 2 samples each: $split"
  c1=$(awk '{ print $1 + $2 }' "$work/$rec.t1")
  echo "$cpu $c1" | awk '{ t = $1 > $2 / 2 ? $1 : $2 / 2;
    printf "  CPU seconds: -j 1 %.2f; -j 2 reader %.3f, total %.3f: on 2 idle CPUs at least %.3f s, %.2fx\n",
           $3, $1, $2, t, $3 / t }'
done
echo "target: -j 2 at least 1.7x -j 1 on several processes"

# stat_cpu PROGRAM J REC: "CPU_MS WALL_S", perf stat's means over BENCH_RUNS
# runs of PROGRAM -j J on REC (task-clock counts every thread).
stat_cpu () {
  LC_ALL=C "$PERF" stat -r "$BENCH_RUNS" -e task-clock -o "$work/stat" -- \
    "$1" -j "$2" -i "$work/$3.data" -f text -o /dev/null > /dev/null 2>&1 ||
    die "perf stat of $1 -j $2 on $3.data failed"
  awk '/task-clock/ { t = $1 } /seconds time elapsed/ { w = $1 }
       END { gsub(",", "", t); print t, w }' "$work/stat"
}

echo "perf stat -r $BENCH_RUNS -e task-clock (CPU of all threads; wall is the mean elapsed):"
progs=this
[ -n "${BASELINE:-}" ] && progs="baseline this"
prog_of () { if [ "$1" = baseline ]; then echo "$BASELINE"; else echo "$EU_STACKTRACE"; fi; }
for rec in several one; do
  for p in $progs; do : > "$work/$rec.stat.$p"; done
  for j in 1 2; do
    for p in $progs; do
      echo "$j $(stat_cpu "$(prog_of "$p")" "$j" "$rec")" >> "$work/$rec.stat.$p"
    done
  done
  for p in $progs; do
    awk -v rec="$rec" -v prog="$p" '{ cpu[$1] = $2; wall[$1] = $3 }
      END { printf "  %s, %s: -j 1 %.1f ms CPU, %.4f s wall; -j 2 %.1f ms CPU, %.4f s wall; CPU -j 2 / -j 1 %.2fx, wall -j 1 / -j 2 %.2fx\n",
                   rec, prog, cpu[1], wall[1], cpu[2], wall[2], cpu[2] / cpu[1], wall[1] / wall[2] }' \
      "$work/$rec.stat.$p"
  done
done
