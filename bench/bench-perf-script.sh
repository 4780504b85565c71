#!/bin/sh
# bench-perf-script.sh: eu-stacktrace against `perf script`, side by side.
#
# Records a CPU-bound workload with `perf record --call-graph dwarf`, then
# times `eu-stacktrace -f text` and `perf script` on the same file,
# alternating runs so that both see the same machine state, and reports
# the medians and their ratio.  Then records a run ten times longer and
# compares eu-stacktrace's peak RSS on both files: it should stay roughly
# flat, because samples are streamed, not kept.
#
# Nothing here asserts a time: the figures are printed for a person to read
# (and paste).  The script fails only when a step fails.
#
# Environment (defaults in brackets):
#   EU_STACKTRACE   the program under test [../eu-stacktrace next to this script]
#   PERF            perf [perf]
#   PYTHON3         python3, times the runs [python3]
#   GNU_TIME        GNU time, reads peak RSS [/usr/bin/time] (Debian: time)
#   CC, CFLAGS      compiler for bench/workload.c [cc, -O2 -g]
#   BENCH_WORKLOAD  a prebuilt workload to use instead of building
#                   workload.c; it is run as `PROG SECONDS THREADS`
#   BENCH_SECONDS   CPU seconds per thread of the 1x recording [6]
#   BENCH_THREADS   workload threads [1]
#   BENCH_FREQ      sampling frequency in Hz [4000]
#   BENCH_EVENT     perf event [cpu-clock]
#   BENCH_RUNS      timed runs of each tool [5]
#   BENCH_SCALE     length of the long recording, times the 1x one [10];
#                   0 skips the peak RSS part
#   BENCH_DIR       keep the recordings here, and reuse the ones an earlier
#                   run left there [a temporary directory, removed at exit]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
BENCH_SECONDS=${BENCH_SECONDS:-6}
BENCH_SCALE=${BENCH_SCALE:-10}
min_samples=20000
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

say "machine: $machine"
say "eu-stacktrace: $EU_STACKTRACE ($("$EU_STACKTRACE" --version 2>/dev/null | head -n 1 || :))"

# --- 1x recording: throughput against perf script -----------------------
record 1x "$BENCH_SECONDS"
data1=$work/1x.data
samples=$(count_samples "$data1")
say "1x file: $samples samples, $(du -m "$data1" | cut -f1) MB"
[ "$samples" -ge "$min_samples" ] ||
  say "warning: fewer than $min_samples samples; raise BENCH_SECONDS"

eu_cmd () { "$EU_STACKTRACE" -i "$1" -f text -o "$2"; }
ps_cmd () { "$PERF" script -i "$1" -F comm,tid,ip,sym,dso --no-inline; }

# One untimed run of each, to warm the page cache and to check that both
# did the same work: as many samples, about as many user frames.  A frame
# is an indented line that starts with an address (eu-stacktrace's
# "(unwind stopped: ...)" lines are not); perf script's kernel frames are
# left out, since eu-stacktrace unwinds user stacks only.
say "warm-up runs"
eu_cmd "$data1" "$work/eu.txt" 2>"$work/stderr" || {
  sed 's/^/  | /' "$work/stderr" >&2
  die "eu-stacktrace failed on $data1"
}
ps_cmd "$data1" > "$work/ps.txt" 2>"$work/stderr" || {
  sed 's/^/  | /' "$work/stderr" >&2
  die "perf script failed on $data1"
}
eu_counts=$(awk '/^[^ \t].*:[ \t]*$/ { s++; next } /^[ \t]+[0-9a-f]+ / { f++ }
                 END { printf "%d %.1f", s, s ? f / s : 0 }' "$work/eu.txt")
ps_counts=$(awk '/^[^ \t]/ { s++; next } /^[ \t]+[0-9a-f]+ / && !/\[kernel\.kallsyms\]\)$/ { f++ }
                 END { printf "%d %.1f", s, s ? f / s : 0 }' "$work/ps.txt")
# shellcheck disable=SC2086 # split the two counts
set -- $eu_counts; eu_blocks=$1 eu_fps=$2
# shellcheck disable=SC2086
set -- $ps_counts; ps_blocks=$1 ps_fps=$2
say "output: eu-stacktrace $eu_blocks samples, $eu_fps frames/sample; perf script $ps_blocks samples, $ps_fps user frames/sample"
[ "$eu_blocks" = "$samples" ] ||
  say "warning: eu-stacktrace wrote $eu_blocks sample headers for $samples samples"
rm -f "$work/eu.txt" "$work/ps.txt"

: > "$work/eu.times"
: > "$work/eu1.times"
: > "$work/ps.times"
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  # The default (one unwinding thread per CPU, at most 4), then one thread:
  # perf script has one.
  eu=$(measure "$EU_STACKTRACE" -i "$data1" -f text -o /dev/null)
  eu1=$(measure "$EU_STACKTRACE" -j 1 -i "$data1" -f text -o /dev/null)
  ps=$(measure "$PERF" script -i "$data1" -F comm,tid,ip,sym,dso --no-inline)
  echo "$eu" >> "$work/eu.times"
  echo "$eu1" >> "$work/eu1.times"
  echo "$ps" >> "$work/ps.times"
  say "run $i/$BENCH_RUNS: eu-stacktrace $eu, with -j 1 $eu1, perf script $ps (s, KB)"
  i=$((i + 1))
done

eu_t=$(median "$work/eu.times" 1); eu_rss=$(median "$work/eu.times" 2)
eu1_t=$(median "$work/eu1.times" 1); eu1_rss=$(median "$work/eu1.times" 2)
ps_t=$(median "$work/ps.times" 1); ps_rss=$(median "$work/ps.times" 2)

# --- long recording: peak RSS flatness ----------------------------------
if [ "$BENCH_SCALE" != 0 ]; then
  long_seconds=$(awk -v s="$BENCH_SECONDS" -v k="$BENCH_SCALE" 'BEGIN { print s * k }')
  record "${BENCH_SCALE}x" "$long_seconds"
  data10=$work/${BENCH_SCALE}x.data
  samples10=$(count_samples "$data10")
  say "${BENCH_SCALE}x file: $samples10 samples, $(du -m "$data10" | cut -f1) MB"
  long=$(measure "$EU_STACKTRACE" -i "$data10" -f text -o /dev/null)
  # shellcheck disable=SC2086
  set -- $long; long_t=$1 long_rss=$2
  say "eu-stacktrace on the ${BENCH_SCALE}x file: $long (s, KB)"
fi

# --- summary -------------------------------------------------------------
# Peak RSS in MB, with a decimal when small: eu-stacktrace is meant to
# need a few MB, and "4 MB" against "4 MB" would hide a 20% growth.
awk_mb='function mb(kb) { return sprintf(kb < 10240 ? "%.1f MB" : "%.0f MB", kb / 1024) }'
awk -v n="$samples" -v et="$eu_t" -v er="$eu_rss" -v pt="$ps_t" -v pr="$ps_rss" \
    -v e1t="$eu1_t" -v e1r="$eu1_rss" -v jobs="$(nproc)" \
    -v runs="$BENCH_RUNS" -v freq="$BENCH_FREQ" -v ev="$BENCH_EVENT" -v m="$machine" \
    -v efps="$eu_fps" -v pfps="$ps_fps" "$awk_mb"'
BEGIN {
  printf "\n"
  printf "machine: %s\n", m
  printf "samples: %d (%s at %d Hz, --call-graph dwarf; median of %d alternating runs)\n", n, ev, freq, runs
  printf "eu-stacktrace -f text: median %.3f s (%.0fk samples/s), peak RSS %s (default -j: %d CPUs, at most 4)\n", et, n / et / 1000, mb(er), jobs
  printf "eu-stacktrace -j 1:    median %.3f s (%.0fk samples/s), peak RSS %s\n", e1t, n / e1t / 1000, mb(e1r)
  printf "perf script:           median %.3f s (%.0fk samples/s), peak RSS %s\n", pt, n / pt / 1000, mb(pr)
  printf "ratio (perf script / eu-stacktrace): %.2fx; with -j 1: %.2fx\n", pt / et, pt / e1t
  printf "user frames per sample: eu-stacktrace %s, perf script %s\n", efps, pfps
}'
if [ "$BENCH_SCALE" != 0 ]; then
  awk -v k="$BENCH_SCALE" -v n="$samples10" -v t="$long_t" -v r1="$eu_rss" -v rk="$long_rss" "$awk_mb"'
  BEGIN {
    printf "peak RSS 1x file: %s, %dx file: %s (ratio %.2f; %d samples, %.0fk samples/s)\n", \
      mb(r1), k, mb(rk), rk / r1, n, n / t / 1000
  }'
fi
