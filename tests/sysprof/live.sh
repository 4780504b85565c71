#!/bin/sh
# Live sampling writes Sysprof captures too: -f sysprof of a command gives a
# capture that libsysprof-capture reads, with its maps and a sample frame
# per sample; -m passthru -f sysprof gives a stack-user stream that
# `eu-stacktrace -m naive` unwinds.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"

plan=3
tap_plan "$plan"
e2e_setup
problem=$(tools_problem)
E=$EU_STACKTRACE
if [ -n "$problem" ]; then
  tap_fill "not run ($problem)"
  exit 0
fi

# shellcheck disable=SC2317  # called by name through check
live_capture ()
{
  # SCHED_FIFO, reset on fork (as tests/live/no-lost.sh): the samples are counted.
  chrt -f -R 1 "$E" -f sysprof -o "$tmp/live.cap" -s -- "$WORKLOADS/deep" 400 > /dev/null 2> "$tmp/live.err"
  _r=$?
  cat "$tmp/live.err"
  [ "$_r" -eq 0 ] && "$CHECK" --samples "$tmp/live.samples" "$tmp/live.cap" > "$tmp/live.check" &&
    cat "$tmp/live.check" &&
    [ "$(count_of maps "$tmp/live.check")" -gt 0 ] &&
    [ "$(count_of samples "$tmp/live.check")" -gt 100 ] &&
    [ "$(count_of samples "$tmp/live.check")" -eq "$(sed -n 's/^samples read: *//p' "$tmp/live.err")" ]
}
check "eu-stacktrace -f sysprof -- COMMAND: a capture libsysprof-capture reads, every sample in it" \
  live_capture

# shellcheck disable=SC2317  # called by name through check
live_stream ()
{
  "$E" -m passthru -f sysprof -o "$tmp/live.stream" -- "$WORKLOADS/deep" 400 > /dev/null &&
    "$E" -i "$tmp/live.stream" -f json -s -o "$tmp/live.jsonl" 2> "$tmp/stream.err" &&
    cat "$tmp/stream.err" &&
    grep -q '"stop":"end"' "$tmp/live.jsonl" &&
    [ "$(grep -c '"stop":"end"' "$tmp/live.jsonl")" -gt "$(($(wc -l < "$tmp/live.jsonl") * 9 / 10))" ]
}
check "-m passthru -f sysprof -- COMMAND: a stream whose samples unwind (90% to the end)" \
  live_stream

# shellcheck disable=SC2317  # called by name through check
live_asan ()
{
  run_asan -f sysprof -o "$tmp/asan.cap" -- "$WORKLOADS/deep" 300 > /dev/null
  _r=$?
  cat "$tmp/asan.err"
  [ "$_r" -eq 0 ] && sanitizer_clean "$tmp/asan.err" && "$CHECK" "$tmp/asan.cap"
}
check "the sanitizer build samples live into a capture, clean" live_asan

tap_done
