#!/bin/sh
# Parallel unwinding changes nothing but the time: the text output of a real
# recording is byte for byte the same with 1, 2 and 3 unwinding threads,
# also for the sanitizer build (whose threads then run under ASan/UBSan).
set -u
: "${EU_STACKTRACE:?}" "${EU_STACKTRACE_ASAN:?}" "${TOP_BUILDDIR:?}" "${PERF:=perf}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-jobs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "1..4"
if HOME=$tmp "$PERF" record -q -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/perf.data" \
     -- "$TOP_BUILDDIR/tests/workloads/threads" >/dev/null 2>"$tmp/perf.err"; then
  echo "ok 1 - perf record of the multi-threaded workload"
else
  echo "not ok 1 - perf record of the multi-threaded workload"
  sed 's/^/# /' "$tmp/perf.err"
fi
"$EU_STACKTRACE" -j 1 -i "$tmp/perf.data" -o "$tmp/j1.txt" 2>"$tmp/j1.err"
samples=$(grep -c ' cpu [0-9]*:$' "$tmp/j1.txt" 2>/dev/null || echo 0)
n=2
for jobs in 2 3; do
  if "$EU_STACKTRACE" -j "$jobs" -i "$tmp/perf.data" -o "$tmp/j$jobs.txt" 2>"$tmp/j$jobs.err" \
     && [ "$samples" -gt 500 ] && cmp -s "$tmp/j1.txt" "$tmp/j$jobs.txt"; then
    echo "ok $n - -j $jobs writes the same $samples samples as -j 1"
  else
    echo "not ok $n - -j $jobs writes the same $samples samples as -j 1"
    cmp "$tmp/j1.txt" "$tmp/j$jobs.txt" 2>&1 | sed 's/^/# /'
  fi
  n=$((n + 1))
done
if ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$EU_STACKTRACE_ASAN" -j 3 -i "$tmp/perf.data" \
     -o "$tmp/asan.txt" 2>"$tmp/asan.err" && ! grep -q -e 'ERROR: AddressSanitizer' \
     -e 'runtime error:' -e 'LeakSanitizer' "$tmp/asan.err" && cmp -s "$tmp/j1.txt" "$tmp/asan.txt"; then
  echo "ok 4 - the sanitizer build with 3 threads runs clean and writes the same"
else
  echo "not ok 4 - the sanitizer build with 3 threads runs clean and writes the same"
  head -n 30 "$tmp/asan.err" | sed 's/^/# /'
fi
