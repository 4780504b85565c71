#!/bin/sh
# bench-sysprof.sh: the Sysprof stream path against the perf.data path, on
# the same samples.
#
# Records a CPU-bound workload with `perf record --call-graph dwarf`, turns
# the recording into a Sysprof stack-user stream with
# `eu-stacktrace -m passthru -f sysprof` (the stream Sysprof hands to
# eu-stacktrace), then times, alternating, the unwinding of the same samples
# into a Sysprof capture from each input:
#
#   eu-stacktrace -i 1x.data   -f sysprof -o /dev/null     (perf.data)
#   eu-stacktrace -i 1x.stream -f sysprof -o /dev/null     (stream, a file)
#   cat 1x.stream | eu-stacktrace -f sysprof -o /dev/null  (stream, a pipe)
#
# and the same with -j 1.  It prints the medians, stack-user frames
# unwound per second and the ratios.  Nothing is asserted; the script fails
# only when a step fails, or when the two paths did not write the same call
# chains (the capture of each is checked once, untimed).
#
# Environment (defaults in brackets):
#   EU_STACKTRACE   the program under test [../eu-stacktrace next to this script]
#   PERF, PYTHON3   [perf, python3]
#   GNU_TIME        GNU time, reads peak RSS [/usr/bin/time] (Debian: time)
#   CC, CFLAGS      compiler for bench/workload.c [cc, -O2 -g]
#   BENCH_WORKLOAD  a prebuilt workload, run as `PROG SECONDS THREADS`
#   BENCH_SECONDS   CPU seconds per thread of the recording [6]
#   BENCH_THREADS   workload threads [1]
#   BENCH_FREQ      sampling frequency in Hz [4000]
#   BENCH_EVENT     perf event [cpu-clock]
#   BENCH_RUNS      timed runs of each command [5]
#   BENCH_DIR       keep the recording and stream here and reuse them
#                   [a temporary directory, removed at exit]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
BENCH_SECONDS=${BENCH_SECONDS:-6}
min_samples=20000
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

say "machine: $machine"

# --- the recording and the stream -----------------------------------------
record 1x "$BENCH_SECONDS"
stream=$work/1x.stream
"$EU_STACKTRACE" -i "$data" -m passthru -f sysprof -o "$stream" 2>"$work/stderr" || {
  sed 's/^/  | /' "$work/stderr" >&2
  die "eu-stacktrace -m passthru failed"
}

# --- one untimed run of each path: the same chains -----------------------
# Both captures' sample frames, from the frame lengths alone: the user
# addresses after PERF_CONTEXT_USER (the perf.data path also writes kernel
# frames before it).  Counts the stream's stack-user frames.
chains_py='
import struct, sys
def frames(path):
    data = open(path, "rb").read()
    at, out = 256, []
    while at + 24 <= len(data):
        n, _, _, _, t = struct.unpack_from("<HhiqI", data, at)
        out.append((t & 0xff, data[at:at + n]))
        at += n
    return out
if sys.argv[1] == "count":
    print(sum(t == 18 for t, _ in frames(sys.argv[2])))
    sys.exit(0)
def chains(path):
    out = []
    for t, f in frames(path):
        if t != 2:
            continue
        n = struct.unpack_from("<I", f, 24)[0] & 0xffff
        addrs = struct.unpack_from("<%dQ" % n, f, 32)
        user = addrs.index(2**64 - 512) + 1 if 2**64 - 512 in addrs else 0
        out.append(addrs[user:])
    return out
a, b = chains(sys.argv[1]), chains(sys.argv[2])
frames_n = sum(len(c) for c in a)
print("%d %d %.1f %d" % (len(a), len(b), frames_n / max(len(a), 1), a == b))
'
samples=$("$PYTHON3" -c "$chains_py" count "$stream")
say "$samples samples; stream $(du -m "$stream" | cut -f1) MB, perf.data $(du -m "$data" | cut -f1) MB"
[ "$samples" -ge "$min_samples" ] || say "warning: fewer than $min_samples samples; raise BENCH_SECONDS"
say "warm-up runs"
# shellcheck disable=SC2015  # the last command runs when any step before it fails, as meant
"$EU_STACKTRACE" -i "$data" -f sysprof -o "$work/perf.cap" 2>"$work/stderr" &&
  "$EU_STACKTRACE" -i "$stream" -f sysprof -o "$work/stream.cap" 2>>"$work/stderr" || {
  sed 's/^/  | /' "$work/stderr" >&2
  die "eu-stacktrace -f sysprof failed"
}
# shellcheck disable=SC2046 # four numbers
set -- $("$PYTHON3" -c "$chains_py" "$work/perf.cap" "$work/stream.cap")
# shellcheck disable=SC2015  # the last command runs when any step before it fails, as meant
[ "$1" = "$samples" ] && [ "$2" = "$samples" ] && [ "$4" = 1 ] ||
  die "the two paths wrote different call chains ($1 and $2 samples of $samples, equal: $4)"
fps=$3
say "both paths: $samples samples, $fps user frames per sample, the same chains"
rm -f "$work/perf.cap" "$work/stream.cap"

# --- timed runs, alternating ---------------------------------------------
for f in perf stream pipe perf1 stream1; do : > "$work/$f.times"; done
i=1
while [ "$i" -le "$BENCH_RUNS" ]; do
  p=$(measure "$EU_STACKTRACE" -i "$data" -f sysprof -o /dev/null)
  s=$(measure "$EU_STACKTRACE" -i "$stream" -f sysprof -o /dev/null)
  # shellcheck disable=SC2016  # expanded by the inner shell
  q=$(measure sh -c 'cat "$1" | "$2" -f sysprof -o /dev/null' - "$stream" "$EU_STACKTRACE")
  p1=$(measure "$EU_STACKTRACE" -j 1 -i "$data" -f sysprof -o /dev/null)
  s1=$(measure "$EU_STACKTRACE" -j 1 -i "$stream" -f sysprof -o /dev/null)
  echo "$p" >> "$work/perf.times"
  echo "$s" >> "$work/stream.times"
  echo "$q" >> "$work/pipe.times"
  echo "$p1" >> "$work/perf1.times"
  echo "$s1" >> "$work/stream1.times"
  say "run $i/$BENCH_RUNS: perf.data $p, stream $s, stream pipe $q; -j 1: perf.data $p1, stream $s1 (s, KB)"
  i=$((i + 1))
done

# --- summary -------------------------------------------------------------
row () {  # LABEL FILE
  awk -v l="$1" -v n="$samples" -v t="$(median "$2" 1)" -v r="$(median "$2" 2)" '
    BEGIN { printf "%-38s median %.3f s, %6.1fk stack samples/s, peak RSS %.0f MB\n", l, t, n / t / 1000, r / 1024 }'
}
echo
echo "machine: $machine"
echo "samples: $samples ($BENCH_EVENT at $BENCH_FREQ Hz, --call-graph dwarf; $fps user frames each; median of $BENCH_RUNS alternating runs)"
row "perf.data -> -f sysprof:" "$work/perf.times"
row "stack-user stream (file) -> capture:" "$work/stream.times"
row "stack-user stream (pipe) -> capture:" "$work/pipe.times"
row "-j 1, perf.data -> -f sysprof:" "$work/perf1.times"
row "-j 1, stream (file) -> capture:" "$work/stream1.times"
awk -v p="$(median "$work/perf.times" 1)" -v s="$(median "$work/stream.times" 1)" \
    -v q="$(median "$work/pipe.times" 1)" -v p1="$(median "$work/perf1.times" 1)" \
    -v s1="$(median "$work/stream1.times" 1)" '
  BEGIN { printf "ratio (perf.data time / stream time): file %.2fx, pipe %.2fx; -j 1: %.2fx\n", p / s, p / q, p1 / s1 }'
