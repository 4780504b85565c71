#!/bin/sh
# Parallel unwinding changes nothing but the time: the text output of a real
# recording is byte for byte the same with 1, 2 and 3 unwinding threads,
# also for the sanitizer build (whose threads then run under ASan/UBSan).
set -u
: "${EU_STACKTRACE:?}" "${EU_STACKTRACE_ASAN:?}" "${TOP_BUILDDIR:?}" "${PERF:=perf}"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-jobs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 4
if HOME=$tmp "$PERF" record -q -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/perf.data" \
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
tap_done
