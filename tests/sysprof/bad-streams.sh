#!/bin/sh
# Damaged stack-user streams (bad magic, a cut header, a cut frame header, a
# cut frame, a length smaller than a frame header or not a multiple of 8, a
# length past the end, n_regs or a stack size that overflow their frame):
# eu-stacktrace exits with status 2 and names the byte offset of the damage,
# and the capture it wrote holds every sample before it and reads cleanly.
# From a file and from a pipe; and the sanitizer build, from a file.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"

KINDS="magic short-header cut-frame-header cut-frame short-len unaligned-len past-end
n-regs stack-size"
plan=$((1 + 9 * 3))
tap_plan "$plan"
e2e_setup
problem=$(tools_problem)
E=$EU_STACKTRACE

make_stream ()
{
  record "$tmp/perf.data" "$WORKLOADS/deep" 500 &&
    "$E" -i "$tmp/perf.data" -m passthru -f sysprof -o "$tmp/stream"
}
if [ -z "$problem" ] && make_stream; then
  tap_ok "a stack-user stream from a recording of deep"
else
  [ -n "$problem" ] || problem="recording or -m passthru failed"
  tap_diag_file "$tmp/record.err" 20
  tap_not_ok "a stack-user stream from a recording of deep: $problem"
  tap_fill "not run ($problem)"
  exit 0
fi

# verdict KIND HOW STATUS ERRFILE CAPTURE: checks one run.
verdict ()
{
  _why=""
  if [ "$3" -ne 2 ]; then
    _why="exit status $3, not 2"
  elif ! grep -q "byte offset $offset: " "$4"; then
    _why="the message does not name byte offset $offset"
  elif [ "$kind" != magic ] && [ "$kind" != short-header ]; then
    if ! "$CHECK" --samples "$tmp/bad.samples" "$5" > "$tmp/bad.check" 2>&1; then
      _why="libsysprof-capture cannot read the capture written before the damage"
      cat "$tmp/bad.check" >> "$4"
    elif [ "$(wc -l < "$tmp/bad.samples")" -ne "$before" ]; then
      _why="$(wc -l < "$tmp/bad.samples") samples written, $before came before the damage"
    fi
  fi
  if [ -z "$_why" ]; then
    tap_ok "$kind, $2: status 2, byte offset $offset, the $before samples before it written"
    tap_diag_file "$4" 1
  else
    tap_not_ok "$kind, $2: $_why"
    tap_diag_file "$4" 10
  fi
}

for kind in $KINDS; do
  # shellcheck disable=SC2046  # the words of its output on purpose
  set -- $("$PYTHON3" "$TOOL" corrupt "$kind" "$tmp/stream" "$tmp/bad")
  offset=$1
  before=$2
  rm -f "$tmp/bad-file.cap" "$tmp/bad-pipe.cap" "$tmp/bad-asan.cap"
  "$E" -i "$tmp/bad" -f sysprof -o "$tmp/bad-file.cap" 2> "$tmp/bad-file.err"
  verdict "$kind" "from a file" $? "$tmp/bad-file.err" "$tmp/bad-file.cap"
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo"
  cat "$tmp/bad" > "$tmp/fifo" &
  "$E" -i "$tmp/fifo" -f sysprof -o "$tmp/bad-pipe.cap" 2> "$tmp/bad-pipe.err"
  rc=$?
  wait
  verdict "$kind" "from a FIFO" $rc "$tmp/bad-pipe.err" "$tmp/bad-pipe.cap"
  run_asan -i "$tmp/bad" -f sysprof -o "$tmp/bad-asan.cap"
  rc=$?
  if ! sanitizer_clean "$tmp/asan.err"; then
    tap_not_ok "$kind, the sanitizer build: a sanitizer report"
    tap_diag_file "$tmp/asan.err" 40
  elif [ -e "$tmp/bad-file.cap" ] && ! frames_equal "$tmp/bad-asan.cap" "$tmp/bad-file.cap"; then
    tap_not_ok "$kind, the sanitizer build: its capture differs from the plain build's"
  else
    verdict "$kind" "the sanitizer build" $rc "$tmp/asan.err" "$tmp/bad-asan.cap"
  fi
done

tap_done
