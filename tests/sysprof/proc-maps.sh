#!/bin/sh
# A stream that carries no MAP and no PROCESS frames (as when Sysprof did
# not record them): while the process runs, its maps and its name are read
# from /proc, once, and every sample unwinds and is named as from the
# perf.data recording; the capture gets the MAP and PROCESS frames that were
# missing.  Once the process is gone, /proc is not used (it could be
# another process by now): the samples are still all written, not unwound,
# with a warning.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"

plan=6
tap_plan "$plan"
e2e_setup
problem=$(tools_problem)
E=$EU_STACKTRACE
wpid=""
trap 'test -n "$wpid" && kill "$wpid" 2>/dev/null; test -n "${E2E_KEEP:-}" || rm -rf "$tmp"' EXIT

record_running ()
{
  "$WORKLOADS/deep" 60000 > /dev/null &
  wpid=$!
  # Recorded once it is deep, past its exec (a bounded poll of a minute,
  # not a guess of 0.3 s).
  _i=0
  while [ "$(cat "/proc/$wpid/comm" 2> /dev/null)" != deep ] && [ "$_i" -lt 1200 ]; do
    sleep 0.05
    _i=$((_i + 1))
  done
  echo "# recording: perf record --call-graph dwarf -p $wpid -- sleep 1.5"
  run_perf record -e cpu-clock -F 999 --call-graph dwarf -p "$wpid" -o "$tmp/perf.data" \
    -- sleep 1.5 > "$tmp/record.out" 2> "$tmp/record.err" &&
    "$E" -i "$tmp/perf.data" -f json -o "$tmp/oracle.jsonl" &&
    [ -s "$tmp/oracle.jsonl" ] &&
    "$E" -i "$tmp/perf.data" -m passthru -f sysprof -o "$tmp/stream" &&
    "$PYTHON3" "$TOOL" strip "$tmp/stream" "$tmp/bare" 3 4 &&
    ! "$PYTHON3" "$TOOL" frames "$tmp/bare" | grep -q -e ' 3 ' -e ' 4 '
}
if [ -z "$problem" ] && record_running; then
  tap_ok "a running process recorded; its stream without MAP and PROCESS frames"
else
  [ -n "$problem" ] || problem="recording or -m passthru failed"
  tap_diag_file "$tmp/record.err" 20
  tap_not_ok "a running process recorded: $problem"
  tap_fill "not run ($problem)"
  exit 0
fi

# shellcheck disable=SC2317  # called by name through check
alive_json ()
{
  "$E" -f json < "$tmp/bare" > "$tmp/bare.jsonl" 2> "$tmp/bare.err" &&
    cmp "$tmp/oracle.jsonl" "$tmp/bare.jsonl"
}
check "while it runs: -f json of the bare stream equals the recording's, names included" \
  alive_json

# shellcheck disable=SC2317  # called by name through check
alive_capture ()
{
  "$E" -f sysprof < "$tmp/bare" > "$tmp/bare.cap" &&
    "$CHECK" --samples "$tmp/bare.samples" "$tmp/bare.cap" > "$tmp/bare.check" &&
    cat "$tmp/bare.check" &&
    [ "$(count_of maps "$tmp/bare.check")" -gt 0 ] &&
    [ "$(count_of processes "$tmp/bare.check")" -eq 1 ] &&
    "$PYTHON3" "$TOOL" compare-samples "$tmp/bare.samples" "$tmp/oracle.jsonl"
}
check "while it runs: the capture has its MAP and PROCESS frames, and the chains of -f json" \
  alive_capture

# shellcheck disable=SC2317  # called by name through check
alive_asan ()
{
  run_asan -f json -o "$tmp/asan.jsonl" < "$tmp/bare"
  _r=$?
  cat "$tmp/asan.err"
  [ "$_r" -eq 0 ] && sanitizer_clean "$tmp/asan.err" && cmp "$tmp/oracle.jsonl" "$tmp/asan.jsonl"
}
check "while it runs: the sanitizer build runs clean, with the same output" alive_asan

kill "$wpid"
wait "$wpid" 2> /dev/null
wpid=""

# shellcheck disable=SC2317  # called by name through check
gone ()
{
  "$E" -f json -s < "$tmp/bare" > "$tmp/gone.jsonl" 2> "$tmp/gone.err"
  _r=$?
  cat "$tmp/gone.err"
  echo "status $_r"
  [ "$_r" -eq 0 ] &&
    [ "$(wc -l < "$tmp/gone.jsonl")" -eq "$(wc -l < "$tmp/oracle.jsonl")" ] &&
    grep -q "no usable /proc entry" "$tmp/gone.err" &&
    ! grep -q '"stop":"end"' "$tmp/gone.jsonl"
}
check "once it is gone: every sample written, none unwound from /proc, and a warning" gone

# shellcheck disable=SC2317  # called by name through check
gone_asan ()
{
  run_asan -f sysprof -o "$tmp/gone-asan.cap" < "$tmp/bare"
  _r=$?
  cat "$tmp/asan.err"
  [ "$_r" -eq 0 ] && sanitizer_clean "$tmp/asan.err" &&
    "$CHECK" --samples "$tmp/gone.samples" "$tmp/gone-asan.cap" &&
    [ "$(wc -l < "$tmp/gone.samples")" -eq "$(wc -l < "$tmp/oracle.jsonl")" ]
}
check "once it is gone: the sanitizer build runs clean and writes every sample" gone_asan

tap_done
