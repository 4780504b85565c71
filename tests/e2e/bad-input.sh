#!/bin/sh
# Malformed input ends with a clear error and exit status 2, never a crash or
# a hang, and every sample read before the fault is still written.
#
# Records the demo once to a perf.data file and once to a pipe-mode stream,
# then corrupt-perf-data.py makes the malformed variants (truncations, size-0
# records, sizes past the end, stacks larger than their record, dyn_size
# larger than the stack, bad headers, a data section whose size wraps around)
# and two that are not malformed but hostile (random user registers; a mapped
# file's name swapped for a FIFO's, which must not block the run): for those,
# exit 0 and every sample written.  Each runs with the plain and the
# sanitizer build, which are checked for: the exit
# status, `byte offset N' inside the faulty record or header field, the
# samples written, no sanitizer report, no signal, at most 60 s a run.
#
# Set E2E_KEEP=1 to keep the recordings and the failing variants.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

DEMO="$TOP_BUILDDIR/demo/eu-stacktrace-demo"
HELPER="$TOP_SRCDIR/tests/e2e/corrupt-perf-data.py"

fail_all ()
{
  tap_plan 1
  tap_not_ok "bad input: $*"
  tap_done
}

e2e_setup

problem=$(tools_problem "perf:$PERF" "python3:$PYTHON3" "eu-stacktrace:$EU_STACKTRACE" \
         "eu-stacktrace-asan:$EU_STACKTRACE_ASAN" "the demo workload:$DEMO")
[ -z "$problem" ] || fail_all "$problem"

# 0.3 s at 999 Hz: ~300 samples of 8 KiB stacks, ~2.5 MB each.
record="record -e cpu-clock -F 999 --call-graph dwarf"
# shellcheck disable=SC2086  # $record is perf's words on purpose
if ! run_perf $record -o "$tmp/file.data" -- "$DEMO" 0.3 \
       > "$tmp/record.out" 2> "$tmp/record.err" || ! [ -s "$tmp/file.data" ]; then
  tap_diag_file "$tmp/record.err" 40 >&2
  fail_all "perf $record -o FILE -- $DEMO 0.3 failed"
fi
# shellcheck disable=SC2086  # $record is perf's words on purpose
if ! run_perf $record -o - -- "$DEMO" 0.3 > "$tmp/pipe.data" 2> "$tmp/record-pipe.err" \
     || ! [ -s "$tmp/pipe.data" ]; then
  tap_diag_file "$tmp/record-pipe.err" 40 >&2
  fail_all "perf $record -o - -- $DEMO 0.3 failed"
fi

keep=""
[ -n "${E2E_KEEP:-}" ] && keep=--keep-failures
mkdir "$tmp/variants"
"$PYTHON3" "$HELPER" test --file "$tmp/file.data" --pipe "$tmp/pipe.data" \
  --tool "$EU_STACKTRACE" --tool "$EU_STACKTRACE_ASAN" --tmp "$tmp/variants" \
  --timeout 60 $keep \
  --recorded "perf $record -o perf.data (file mode) of the demo" \
  --recorded "perf $record -o - (pipe mode) of the demo" \
  > "$tmp/tap.out" 2> "$tmp/tap.err"
rc=$?
cat "$tmp/tap.out"
if [ "$rc" -ne 0 ] || ! grep -q '^1\.\.' "$tmp/tap.out"; then
  # The helper died: the driver sees a short stream; say why.
  echo "# corrupt-perf-data.py exited with status $rc"
  tap_diag_file "$tmp/tap.err" 40
  grep -q '^1\.\.' "$tmp/tap.out" || { tap_plan 1; tap_not_ok "corrupt-perf-data.py failed"; }
fi
exit 0
