#!/bin/sh
# bench-perf-script.sh: eu-stacktrace against `perf script`, side by side.
#
# Records four CPU-bound workloads with `perf record --call-graph dwarf`:
# deep (bench/workload.c: a deep -O2 call chain through the program and
# libc), cxx (tests/workloads/cxx.cc: an -O2 C++ program, templates,
# std:: containers, a recursion) and manyproc (tests/workloads/manyproc.c:
# BENCH_PROCS short processes, each tests/workloads/deep.c); then deep's
# workload with two threads recorded with `perf record --threads`, a
# directory of one file per CPU (threads).  On each it
# times `eu-stacktrace -f text` with -j 1 and -j 2 and `perf script
# --no-inline`, alternating runs so that all see the same machine state,
# and reports the medians, their ratios, and eu-stacktrace's nanoseconds
# per unwound frame at -j 1.  Two anchors say what -j 2 could gain here:
# two -j 1 runs at once on the same file (what two CPUs of this machine
# give for this work with nothing shared and nothing handed over: a
# memory-bound run slows down beside another), and -m none, which reads
# and parses the file without unwinding (the part -j N does not split, so
# Amdahl's bound).  Two more, on a file (perf-data-split.py cuts it): a run
# on its first 1% (the start: exec, set-up and the first samples' files,
# which a split of the samples does not divide, so Amdahl's bound again),
# and its two halves unwound at once by two -j 1 runs, the second carrying
# the first's process records (a split by bytes with nothing handed over;
# their outputs one after the other are checked to be the whole's).  Then
# records a deep run ten times longer and
# compares eu-stacktrace's peak RSS on both files: it should stay roughly
# flat, because samples are streamed, not kept.
#
# Nothing here asserts a time: the figures are printed for a person to read
# (and paste).  The script fails only when a step fails.
#
# Environment (defaults in brackets):
#   EU_STACKTRACE   the program under test [../eu-stacktrace next to this script]
#   EU_ARGS         more eu-stacktrace options, e.g. --unwinder=libdwfl []
#   PERF            perf [perf]
#   PYTHON3         python3, times the runs [python3]
#   GNU_TIME        GNU time, reads peak RSS [/usr/bin/time] (Debian: time)
#   CC, CFLAGS      compiler for the C workloads [cc, -O2 -g]
#   CXX             compiler for the C++ workload [c++]
#   BENCH_WORKLOAD  a prebuilt workload to use instead of building
#                   workload.c; it is run as `PROG SECONDS THREADS`
#   BENCH_SECONDS   CPU seconds of the deep and cxx recordings [6]
#   BENCH_PROCS     processes of the manyproc recording [600]
#   BENCH_PROC_MS   CPU milliseconds each of them burns [10]
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
BENCH_PROCS=${BENCH_PROCS:-600}
BENCH_PROC_MS=${BENCH_PROC_MS:-10}
CXX=${CXX:-c++}
EU_ARGS=${EU_ARGS:-}
min_samples=20000
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

say "machine: $machine"
say "eu-stacktrace: $EU_STACKTRACE ($("$EU_STACKTRACE" --version 2>/dev/null | head -n 1 || :)) $EU_ARGS"

# The other workloads, built into $work from the test workloads' sources.
wl=$here/../tests/workloads
build () {
  out=$work/$1
  shift
  [ -x "$out" ] && [ -z "$(find "$@" -newer "$out")" ] && return
  # shellcheck disable=SC2086 # CFLAGS is a list of flags
  case $1 in
    *.cc) $CXX $CFLAGS -o "$out" "$@" || die "cannot build $*" ;;
    *) $CC $CFLAGS -o "$out" "$@" || die "cannot build $*" ;;
  esac
}
build cxx "$wl/cxx.cc"
build deep-proc "$wl/deep.c"
build manyproc "$wl/manyproc.c"

# record_cmd NAME CMD...: records CMD into $work/NAME.data, unless an earlier
# run with the same command and settings left it there.
record_cmd () {
  name=$1
  shift
  data=$work/$name.data
  stamp="$* $BENCH_EVENT $BENCH_FREQ${rec_opts:+ $rec_opts}"
  for f in "$@"; do [ -f "$f" ] && stamp="$stamp $(cksum < "$f")"; done
  if [ -s "$data" ] && [ -f "$data.stamp" ] && [ "$(cat "$data.stamp")" = "$stamp" ]; then
    say "reusing $data"
    return
  fi
  rm -rf "$data" "$data.stamp"
  say "recording $name: $* ($BENCH_EVENT at $BENCH_FREQ Hz, --call-graph dwarf)"
  # shellcheck disable=SC2086 # rec_opts is a list of options
  "$PERF" record -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf $rec_opts \
    -o "$data" -- "$@" >/dev/null 2>"$work/record.log" || {
    sed 's/^/  | /' "$work/record.log" >&2
    die "perf record failed"
  }
  grep -iE 'captured|lost|throttl' "$work/record.log" | sed 's/^/  | /' >&2 || :
  echo "$stamp" > "$data.stamp"
}

# measure3 CMD...: bench-lib.sh's measure, and the CPU seconds (user +
# system) of the run: "WALL_SECONDS PEAK_RSS_KB CPU_SECONDS".  On a machine
# that others load, the CPU time is the steadier figure: wall time then
# measures the scheduler as much as the program.
measure3_py='
import os, subprocess, sys, time
rss_file = os.environ["BENCH_RSS"]
with open(os.environ["BENCH_STDERR"], "wb") as err:
    start = time.perf_counter()
    status = subprocess.call([os.environ["GNU_TIME"], "-f", "%M %U %S", "-o", rss_file, "--"]
                             + sys.argv[1:], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
    wall = time.perf_counter() - start
if status != 0:
    sys.exit("exit status %d" % status)
with open(rss_file) as f:
    rss, user, system = f.read().split()[-3:]
print("%.4f %d %.2f" % (wall, int(rss), float(user) + float(system)))
'
# measure_both CMD1... :: CMD2...: CMD1 and CMD2 started together; the
# wall seconds until both have ended.
measure_both_py='
import subprocess, sys, time
cut = sys.argv.index("::")
start = time.perf_counter()
runs = [subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL) for cmd in (sys.argv[1:cut], sys.argv[cut + 1:])]
status = [p.wait() for p in runs]
wall = time.perf_counter() - start
if any(status):
    sys.exit("exit status %s" % status)
print("%.4f" % wall)
'
measure_both () {
  "$PYTHON3" -c "$measure_both_py" "$@" || die "failed: at once, $*"
}
# measure_pair CMD...: two runs of CMD started together; the wall seconds
# until both have ended.
measure_pair () {
  measure_both "$@" :: "$@"
}

measure3 () {
  GNU_TIME=$GNU_TIME BENCH_RSS=$work/rss BENCH_STDERR=$work/stderr \
    "$PYTHON3" -c "$measure3_py" "$@" || {
    say "failed: $*"
    sed 's/^/  | /' "$work/stderr" >&2
    exit 1
  }
}

rec_opts=
# shellcheck disable=SC2086 # EU_ARGS is a list of options
eu_cmd () { "$EU_STACKTRACE" $EU_ARGS -i "$1" -f text -o "$2"; }
ps_cmd () { "$PERF" script -i "$1" -F comm,tid,ip,sym,dso --no-inline; }

: > "$work/summary"
# bench NAME: times the tools on $work/NAME.data, appends a summary line.
bench () {
  name=$1
  data=$work/$name.data
  samples=$(count_samples "$data")
  say "$name: $samples samples, $(du -m "$data" | cut -f1) MB"
  [ "$samples" -ge "$min_samples" ] ||
    say "warning: fewer than $min_samples samples; raise BENCH_SECONDS (or BENCH_PROCS)"
  # One untimed run of each, to warm the page cache and to check that both
  # did the same work: as many samples, about as many user frames.  A frame
  # is an indented line that starts with an address (eu-stacktrace's
  # "(unwind stopped: ...)" lines are not); perf script's kernel frames are
  # left out, since eu-stacktrace unwinds user stacks only.
  eu_cmd "$data" "$work/eu.txt" 2>"$work/stderr" || {
    sed 's/^/  | /' "$work/stderr" >&2
    die "eu-stacktrace failed on $data"
  }
  ps_cmd "$data" > "$work/ps.txt" 2>"$work/stderr" || {
    sed 's/^/  | /' "$work/stderr" >&2
    die "perf script failed on $data"
  }
  eu_counts=$(awk '/^[^ \t].*:[ \t]*$/ { s++; next } /^[ \t]+[0-9a-f]+ / { f++ }
                   END { printf "%d %d", s, f }' "$work/eu.txt")
  ps_counts=$(awk '/^[^ \t]/ { s++; next } /^[ \t]+[0-9a-f]+ / && !/\[kernel\.kallsyms\]\)$/ { f++ }
                   END { printf "%d %d", s, f }' "$work/ps.txt")
  # shellcheck disable=SC2086 # split the two counts
  set -- $eu_counts; eu_blocks=$1 eu_frames=$2
  # shellcheck disable=SC2086
  set -- $ps_counts; ps_blocks=$1 ps_frames=$2
  say "$name output: eu-stacktrace $eu_blocks samples, $eu_frames frames; perf script $ps_blocks samples, $ps_frames user frames"
  [ "$eu_blocks" = "$samples" ] ||
    say "warning: eu-stacktrace wrote $eu_blocks sample headers for $samples samples"
  # The split anchors (a file, not a --threads directory): the first 1%
  # of the recording, and its two halves, cut by perf-data-split.py.  The
  # halves' outputs one after the other must be the whole's, or their
  # times would not be the same work's.
  split=
  if [ -f "$data" ]; then
    for cut in "0.01 start rest" "0.5 half1 half2"; do
      # shellcheck disable=SC2086 # split the fraction and the two names
      set -- $cut
      "$PYTHON3" "$here/perf-data-split.py" "$data" "$1" "$work/$2.data" "$work/$3.data" >/dev/null ||
        die "cannot split $data"
    done
    rm -f "$work/rest.data"
    for half in half1 half2; do
      eu_cmd "$work/$half.data" "$work/$half.txt" 2>"$work/stderr" || {
        sed 's/^/  | /' "$work/stderr" >&2
        die "eu-stacktrace failed on $work/$half.data"
      }
    done
    if cat "$work/half1.txt" "$work/half2.txt" | cmp -s - "$work/eu.txt"; then
      split=yes
    else
      say "warning: $name's two halves do not unwind to the whole's output; no split anchors"
    fi
    rm -f "$work/half1.txt" "$work/half2.txt"
  fi
  rm -f "$work/eu.txt" "$work/ps.txt"

  : > "$work/eu1.times"
  : > "$work/eu2.times"
  : > "$work/ps.times"
  : > "$work/pair.times"
  : > "$work/none.times"
  : > "$work/start.times"
  : > "$work/halves.times"
  i=1
  while [ "$i" -le "$BENCH_RUNS" ]; do
    # shellcheck disable=SC2086 # EU_ARGS is a list of options
    eu1=$(measure3 "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$data" -f text -o /dev/null)
    # shellcheck disable=SC2086
    eu2=$(measure3 "$EU_STACKTRACE" $EU_ARGS -j 2 -i "$data" -f text -o /dev/null)
    ps=$(measure3 "$PERF" script -i "$data" -F comm,tid,ip,sym,dso --no-inline)
    # shellcheck disable=SC2086
    pair=$(measure_pair "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$data" -f text -o /dev/null)
    # shellcheck disable=SC2086
    none=$(measure3 "$EU_STACKTRACE" $EU_ARGS -j 1 -m none -i "$data" -f text -o /dev/null)
    echo "$eu1" >> "$work/eu1.times"
    echo "$eu2" >> "$work/eu2.times"
    echo "$ps" >> "$work/ps.times"
    echo "$pair" >> "$work/pair.times"
    echo "$none" >> "$work/none.times"
    split_say=
    if [ -n "$split" ]; then
      # shellcheck disable=SC2086 # EU_ARGS is a list of options
      start=$(measure3 "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$work/start.data" -f text -o /dev/null)
      # shellcheck disable=SC2086
      halves=$(measure_both "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$work/half1.data" -f text -o /dev/null :: \
                 "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$work/half2.data" -f text -o /dev/null)
      echo "$start" >> "$work/start.times"
      echo "$halves" >> "$work/halves.times"
      split_say="; first 1% $start; the halves at once $halves s"
    fi
    say "$name run $i/$BENCH_RUNS: eu-stacktrace -j 1 $eu1, -j 2 $eu2, perf script $ps (s, KB, CPU s); two -j 1 at once $pair s; -m none $none$split_say"
    i=$((i + 1))
  done
  echo "$name $samples $eu_frames $ps_frames $(median "$work/eu1.times" 1) $(median "$work/eu1.times" 2)" \
       "$(median "$work/eu2.times" 1) $(median "$work/eu2.times" 2)" \
       "$(median "$work/ps.times" 1) $(median "$work/ps.times" 2)" \
       "$(median "$work/eu1.times" 3) $(median "$work/eu2.times" 3) $(median "$work/ps.times" 3)" \
       "$(median "$work/pair.times" 1) $(median "$work/none.times" 1)" \
       "$(if [ -n "$split" ]; then echo "$(median "$work/start.times" 1) $(median "$work/halves.times" 1)"; else echo "- -"; fi)" \
       >> "$work/summary"
  rm -f "$work/start.data" "$work/half1.data" "$work/half2.data"
}

record_cmd deep "$workload" "$BENCH_SECONDS" "$BENCH_THREADS"
bench deep
record_cmd cxx "$work/cxx" "$((BENCH_SECONDS * 1000))"
bench cxx
# -B: perf 6.1's build-id pass over hundreds of processes aborts now and then
# ("assertion failed at util/build-id.c"); eu-stacktrace and perf script
# find the files by their paths.
rec_opts=-B
record_cmd manyproc "$work/manyproc" "$BENCH_PROCS" "$BENCH_PROC_MS" "$work/deep-proc"
bench manyproc
# perf record --threads: a directory, one data.N per CPU, merged by time by
# both tools (perf script sorts all of it in memory first).  Two threads of
# the deep workload, so that every CPU's file fills.
rec_opts=--threads
record_cmd threads "$workload" "$BENCH_SECONDS" 2
bench threads
eu_rss=$(awk '$1 == "deep" { print $6 }' "$work/summary")

# --- long recording: peak RSS flatness ----------------------------------
if [ "$BENCH_SCALE" != 0 ]; then
  long_seconds=$(awk -v s="$BENCH_SECONDS" -v k="$BENCH_SCALE" 'BEGIN { print s * k }')
  record "${BENCH_SCALE}x" "$long_seconds"
  data10=$work/${BENCH_SCALE}x.data
  samples10=$(count_samples "$data10")
  say "${BENCH_SCALE}x file: $samples10 samples, $(du -m "$data10" | cut -f1) MB"
  # shellcheck disable=SC2086 # EU_ARGS is a list of options
  long=$(measure "$EU_STACKTRACE" $EU_ARGS -j 1 -i "$data10" -f text -o /dev/null)
  # shellcheck disable=SC2086
  set -- $long; long_t=$1 long_rss=$2
  say "eu-stacktrace on the ${BENCH_SCALE}x file: $long (s, KB)"
fi

# --- summary -------------------------------------------------------------
# Peak RSS in MB, with a decimal when small: eu-stacktrace is meant to
# need a few MB, and "4 MB" against "4 MB" would hide a 20% growth.
awk_mb='function mb(kb) { return sprintf(kb < 10240 ? "%.1f MB" : "%.0f MB", kb / 1024) }'
printf '\nmachine: %s; load average at the end: %s\n' "$machine" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s at %s Hz, --call-graph dwarf; medians of %s alternating runs; eu-stacktrace %s\n' \
  "$BENCH_EVENT" "$BENCH_FREQ" "$BENCH_RUNS" "${EU_ARGS:-(default options)}"
awk "$awk_mb"'
{
  printf "%-9s %6d samples, %4.1f frames/sample: -j 1 %.3f s (%s), -j 2 %.3f s (%s), perf script %.3f s (%s)\n", \
    $1, $2, $3 / $2, $5, mb($6), $7, mb($8), $9, mb($10)
  printf "%-9s wall ratio perf script / eu-stacktrace: -j 1 %.2fx, -j 2 %.2fx; -j 2 / -j 1 %.2fx; %.0f ns per frame at -j 1\n", \
    "", $9 / $5, $9 / $7, $5 / $7, $5 * 1e9 / $3
  printf "%-9s CPU (user+sys): -j 1 %.2f s, -j 2 %.2f s, perf script %.2f s; ratio -j 1 %.2fx; %.0f CPU ns per frame at -j 1\n", \
    "", $11, $12, $13, $13 / ($11 > 0 ? $11 : 0.01), $11 * 1e9 / $3
  printf "%-9s what a split could gain here: %.2fx (two -j 1 runs at once %.3f s), %.2fx by Amdahl (-m none %.3f s)\n", \
    "", 2 * $5 / $14, $14, $5 / ($15 > $5 / 2 ? $15 : $5 / 2), $15
  if ($16 != "-")
    printf "%-9s a split by bytes, nothing handed over: the halves at once %.3f s, %.2fx; the first 1%% %.3f s, which no split divides: %.2fx by Amdahl with it\n", \
      "", $17, $5 / $17, $16, $5 / ($16 + ($5 - $16) / 2)
}' "$work/summary"
if [ "$BENCH_SCALE" != 0 ]; then
  awk -v k="$BENCH_SCALE" -v n="$samples10" -v t="$long_t" -v r1="$eu_rss" -v rk="$long_rss" "$awk_mb"'
  BEGIN {
    printf "peak RSS at -j 1, deep 1x file: %s, %dx file: %s (ratio %.2f; %d samples, %.0fk samples/s)\n", \
      mb(r1), k, mb(rk), rk / r1, n, n / t / 1000
  }'
fi
