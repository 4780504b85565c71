#!/bin/sh
# bench-many-processes.sh: many short-lived processes against one long one.
#
# Records tests/workloads/manyproc: BENCH_PROCS fork/execs, one after the
# other, of tests/workloads/deep burning BENCH_PROC_MS of CPU each (a few
# samples per process, every process mapping the same program, libc and
# loader), and one process of bench/workload.c for BENCH_SECONDS.  Times
# `eu-stacktrace -f text` (-j 1 and the default -j) and `perf script` on
# both, alternating runs, and, when BASELINE names an older eu-stacktrace,
# that one too (once: it may take minutes) and checks that its output on the
# many-process recording is byte for byte the same.  Prints samples/s of
# each, and the ratios.
#
# Nothing here asserts a time: the figures are printed for a person to read.
#
# Environment (defaults in brackets), besides bench-lib.sh's (EU_STACKTRACE,
# PERF, PYTHON3, GNU_TIME, CC, CFLAGS, BENCH_EVENT, BENCH_RUNS, BENCH_DIR):
#   BASELINE        an eu-stacktrace to compare with (before a change) [none]
#   BENCH_PROCS     processes in the many-process recording [3000]
#   BENCH_PROC_MS   CPU milliseconds each of them burns [4]
#   BENCH_SECONDS   CPU seconds of the one-process recording [10]
#   BENCH_FREQ      sampling frequency in Hz [999]
#   BENCH_RUNS      timed runs of each tool [3]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
BENCH_PROCS=${BENCH_PROCS:-3000}
BENCH_PROC_MS=${BENCH_PROC_MS:-4}
BENCH_SECONDS=${BENCH_SECONDS:-10}
BENCH_FREQ=${BENCH_FREQ:-999}
BENCH_RUNS=${BENCH_RUNS:-3}
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

# perf keeps a build-id cache under $HOME/.debug: a private, empty one.
mkdir -p "$work/home"
HOME=$work/home
export HOME

if [ -n "${BASELINE:-}" ]; then
  command -v "$BASELINE" >/dev/null 2>&1 || die "BASELINE '$BASELINE' is not a program"
fi

say "machine: $machine"
say "eu-stacktrace: $EU_STACKTRACE"
[ -z "${BASELINE:-}" ] || say "baseline: $BASELINE"

# --- the recordings ------------------------------------------------------
wl=$here/../tests/workloads
for prog in deep manyproc; do
  if [ ! -x "$work/$prog" ] || [ -n "$(find "$wl/$prog.c" -newer "$work/$prog")" ]; then
    # shellcheck disable=SC2086 # CFLAGS is a list of flags
    $CC $CFLAGS -o "$work/$prog" "$wl/$prog.c" || die "cannot build $wl/$prog.c"
  fi
done

record 1x "$BENCH_SECONDS"
one=$work/1x.data

many=$work/many.data
stamp="$(cksum < "$work/manyproc") $(cksum < "$work/deep") $BENCH_PROCS $BENCH_PROC_MS $BENCH_EVENT $BENCH_FREQ"
if [ -s "$many" ] && [ -f "$many.stamp" ] && [ "$(cat "$many.stamp")" = "$stamp" ]; then
  say "reusing $many"
else
  rm -f "$many" "$many.stamp"
  say "recording many: manyproc $BENCH_PROCS $BENCH_PROC_MS deep ($BENCH_EVENT at $BENCH_FREQ Hz, --call-graph dwarf)"
  # -B: without it perf 6.1 aborted at the end of this recording, in its
  # build-id table (util/build-id.c assertion, then a buffer overflow); the
  # files are on this host, where eu-stacktrace and perf script find them.
  "$PERF" record -B -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf -o "$many" -- \
    "$work/manyproc" "$BENCH_PROCS" "$BENCH_PROC_MS" "$work/deep" >/dev/null 2>"$work/record.log" || {
    sed 's/^/  | /' "$work/record.log" >&2
    die "perf record failed"
  }
  echo "$stamp" > "$many.stamp"
fi

n_one=$(count_samples "$one")
n_many=$(count_samples "$many")
procs_many=$("$PERF" script -i "$many" -F pid 2>/dev/null | sort -u | wc -l | tr -d ' ')
say "one-process file: $n_one samples; many-process file: $n_many samples from $procs_many processes"

# --- warm-up and identity ----------------------------------------------
say "warm-up runs"
"$EU_STACKTRACE" -j 1 -i "$many" -f text -o "$work/after.txt" 2>"$work/stderr" || {
  sed 's/^/  | /' "$work/stderr" >&2
  die "eu-stacktrace failed on $many"
}
"$PERF" script -i "$many" -F comm,tid,ip,sym,dso --no-inline >/dev/null 2>&1 || die "perf script failed"
"$PERF" script -i "$one" -F comm,tid,ip,sym,dso --no-inline >/dev/null 2>&1 || die "perf script failed"
identity="not checked (no BASELINE)"
if [ -n "${BASELINE:-}" ]; then
  say "baseline run (once, timed)"
  base=$(measure "$BASELINE" -j 1 -i "$many" -f text -o "$work/before.txt")
  base1=$(measure "$BASELINE" -j 1 -i "$one" -f text -o /dev/null)
  if cmp -s "$work/before.txt" "$work/after.txt"; then
    identity="identical ($(wc -l < "$work/after.txt") lines of text)"
  else
    diff "$work/before.txt" "$work/after.txt" > "$work/identity.diff" || :
    identity="DIFFERENT: $(grep -c '^[<>]' "$work/identity.diff") lines differ (see below)"
    say "BASELINE's output differs; the first differences (all in $work/identity.diff):"
    head -n 20 "$work/identity.diff" | sed 's/^/  | /' >&2
  fi
  say "baseline: many $base, one $base1 (s, KB); output $identity"
fi
rm -f "$work/before.txt" "$work/after.txt"

# --- timed runs ----------------------------------------------------------
for f in eu_many eu1_many ps_many eu_one eu1_one ps_one; do : > "$work/$f.times"; done
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  measure "$EU_STACKTRACE" -i "$many" -f text -o /dev/null >> "$work/eu_many.times"
  measure "$EU_STACKTRACE" -j 1 -i "$many" -f text -o /dev/null >> "$work/eu1_many.times"
  measure "$PERF" script -i "$many" -F comm,tid,ip,sym,dso --no-inline >> "$work/ps_many.times"
  measure "$EU_STACKTRACE" -i "$one" -f text -o /dev/null >> "$work/eu_one.times"
  measure "$EU_STACKTRACE" -j 1 -i "$one" -f text -o /dev/null >> "$work/eu1_one.times"
  measure "$PERF" script -i "$one" -F comm,tid,ip,sym,dso --no-inline >> "$work/ps_one.times"
  say "run $i/$BENCH_RUNS: many: eu $(tail -n 1 "$work/eu_many.times"), -j 1 $(tail -n 1 "$work/eu1_many.times"), perf script $(tail -n 1 "$work/ps_many.times"); one: eu $(tail -n 1 "$work/eu_one.times"), -j 1 $(tail -n 1 "$work/eu1_one.times"), perf script $(tail -n 1 "$work/ps_one.times")"
  i=$((i + 1))
done

m () { median "$work/$1.times" 1; }
awk -v nm="$n_many" -v no="$n_one" -v procs="$procs_many" -v m="$machine" -v runs="$BENCH_RUNS" \
    -v freq="$BENCH_FREQ" -v ev="$BENCH_EVENT" -v np="$BENCH_PROCS" -v ms="$BENCH_PROC_MS" \
    -v em="$(m eu_many)" -v e1m="$(m eu1_many)" -v pm="$(m ps_many)" \
    -v eo="$(m eu_one)" -v e1o="$(m eu1_one)" -v po="$(m ps_one)" \
    -v base="${base:-}" -v base1="${base1:-}" -v ident="$identity" '
function rate(n, t) { return t > 0 ? sprintf("%7.0f samples/s", n / t) : "-" }
BEGIN {
  printf "\n"
  printf "machine: %s\n", m
  printf "many: %d samples from %d processes (manyproc %d x deep %s ms); one: %d samples from 1 process\n", nm, procs, np, ms, no
  printf "(%s at %d Hz, --call-graph dwarf; median of %d alternating runs, wall time)\n", ev, freq, runs
  printf "%-28s %10s %22s %10s %22s %s\n", "", "many s", "many", "one s", "one", "many/one"
  printf "%-28s %10.3f %22s %10.3f %22s %.2f\n", "eu-stacktrace -j 1", e1m, rate(nm, e1m), e1o, rate(no, e1o), (nm / e1m) / (no / e1o)
  printf "%-28s %10.3f %22s %10.3f %22s %.2f\n", "eu-stacktrace (default -j)", em, rate(nm, em), eo, rate(no, eo), (nm / em) / (no / eo)
  printf "%-28s %10.3f %22s %10.3f %22s %.2f\n", "perf script", pm, rate(nm, pm), po, rate(no, po), (nm / pm) / (no / po)
  split(base, b, " "); split(base1, b1, " ")
  if (base != "") {
    printf "%-28s %10.3f %22s %10.3f %22s %.2f\n", "BASELINE -j 1 (one run)", b[1], rate(nm, b[1]), b1[1], rate(no, b1[1]), (nm / b[1]) / (no / b1[1])
    printf "speed-up on many, -j 1, BASELINE / eu-stacktrace: %.1fx (one process: %.2fx)\n", b[1] / e1m, b1[1] / e1o
  }
  printf "ratio perf script / eu-stacktrace -j 1: many %.2fx, one %.2fx\n", pm / e1m, po / e1o
  printf "output of BASELINE and eu-stacktrace on many: %s\n", ident
}'
