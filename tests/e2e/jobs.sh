#!/bin/sh
# Parallel unwinding changes nothing but the time: the text output of a real
# recording is byte for byte the same with 1, 2 and 3 unwinding threads,
# also for the sanitizer build (whose threads then run under ASan/UBSan);
# on a one-process recording and on one of several processes at once, where
# processes are split between the threads (--stats says how).
set -u
: "${EU_STACKTRACE:?}" "${EU_STACKTRACE_ASAN:?}" "${TOP_BUILDDIR:?}" "${PERF:=perf}"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-jobs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
tap_plan 8
if run_perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/perf.data" \
     -- "$TOP_BUILDDIR/tests/workloads/threads" >/dev/null 2>"$tmp/perf.err"; then
  tap_ok "perf record of the multi-threaded workload"
else
  tap_not_ok "perf record of the multi-threaded workload"
  sed 's/^/# /' "$tmp/perf.err"
fi
"$EU_STACKTRACE" -j 1 -i "$tmp/perf.data" -o "$tmp/j1.txt" 2>"$tmp/j1.err"
samples=$(grep -c ' cpu [0-9]*:$' "$tmp/j1.txt" 2>/dev/null || echo 0)
for jobs in 2 3; do
  if "$EU_STACKTRACE" -j "$jobs" -i "$tmp/perf.data" -o "$tmp/j$jobs.txt" 2>"$tmp/j$jobs.err" \
     && [ "$samples" -gt 500 ] && cmp -s "$tmp/j1.txt" "$tmp/j$jobs.txt"; then
    tap_ok "-j $jobs writes the same $samples samples as -j 1"
  else
    tap_not_ok "-j $jobs writes the same $samples samples as -j 1"
    cmp "$tmp/j1.txt" "$tmp/j$jobs.txt" 2>&1 | sed 's/^/# /'
  fi
done
if ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$EU_STACKTRACE_ASAN" -j 3 -i "$tmp/perf.data" \
     -o "$tmp/asan.txt" 2>"$tmp/asan.err" && ! grep -q -e 'ERROR: AddressSanitizer' \
     -e 'runtime error:' -e 'LeakSanitizer' "$tmp/asan.err" && cmp -s "$tmp/j1.txt" "$tmp/asan.txt"; then
  tap_ok "the sanitizer build with 3 threads runs clean and writes the same"
else
  tap_not_ok "the sanitizer build with 3 threads runs clean and writes the same"
  head -n 30 "$tmp/asan.err" | sed 's/^/# /'
fi

# Several processes at once: two deep ones and a stream of short ones.
w=$TOP_BUILDDIR/tests/workloads
if run_perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/multi.data" \
     -- sh -c "'$w/deep' 1000 & '$w/deep' 1000 & '$w/manyproc' 40 8 & wait" \
     >/dev/null 2>"$tmp/perf.err"; then
  tap_ok "perf record of several processes at once"
else
  tap_not_ok "perf record of several processes at once"
  sed 's/^/# /' "$tmp/perf.err"
fi
"$EU_STACKTRACE" -j 1 -i "$tmp/multi.data" -o "$tmp/m1.txt" 2>"$tmp/m1.err"
msamples=$(grep -c ' cpu [0-9]*:$' "$tmp/m1.txt" 2>/dev/null || echo 0)
if "$EU_STACKTRACE" -j 2 --stats -i "$tmp/multi.data" -o "$tmp/m2.txt" 2>"$tmp/m2.err" \
   && [ "$msamples" -gt 500 ] && cmp -s "$tmp/m1.txt" "$tmp/m2.txt"; then
  tap_ok "several processes: -j 2 writes the same $msamples samples as -j 1"
else
  tap_not_ok "several processes: -j 2 writes the same $msamples samples as -j 1"
  cmp "$tmp/m1.txt" "$tmp/m2.txt" 2>&1 | sed 's/^/# /'
fi
# "unwinding threads: 2, samples each: A B (N processes; ..."
split=$(sed -n 's/^unwinding threads: 2, samples each: \([0-9]*\) \([0-9]*\) (\([0-9]*\) processes.*/\1 \2 \3/p' \
        "$tmp/m2.err")
if [ -n "$split" ] && echo "$split" | awk -v n="$msamples" \
     '{ exit !($1 > 0 && $2 > 0 && $1 + $2 == n && $3 >= 3) }'; then
  tap_ok "several processes: both threads unwound some (samples each, processes: $split)"
else
  tap_not_ok "several processes: both threads unwound some (samples each, processes: $split)"
  grep -e 'unwinding threads' -e 'CPU seconds' "$tmp/m2.err" | sed 's/^/# /'
fi
if "$EU_STACKTRACE" -j 2 --stats -i "$tmp/perf.data" -o /dev/null 2>"$tmp/one.err" \
   && sed -n 's/^unwinding threads: 2, samples each: \([0-9]*\) \([0-9]*\) .*/\1 \2/p' "$tmp/one.err" \
      | awk -v n="$samples" '{ ok = $1 > 0 && $2 > 0 && $1 + $2 == n } END { exit !ok }'; then
  tap_ok "one process: its samples are split between both threads"
else
  tap_not_ok "one process: its samples are split between both threads"
  grep -e 'unwinding threads' "$tmp/one.err" | sed 's/^/# /'
fi
tap_done
