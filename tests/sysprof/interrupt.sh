#!/bin/sh
# Ctrl-C in a Sysprof pipeline, as elfutils' eu-stacktrace handled it: the
# first SIGINT does not lose what is still in the FIFO (Sysprof stops its
# writer and closes the pipe): the stream is read to its end and every
# sample written, status 0.  A second SIGINT gives up at once.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"

plan=3
tap_plan "$plan"
e2e_setup
problem=$(tools_problem)
E=$EU_STACKTRACE

make_stream ()
{
  record "$tmp/perf.data" "$WORKLOADS/deep" 400 &&
    "$E" -i "$tmp/perf.data" -m passthru -f sysprof -o "$tmp/stream" &&
    "$E" -i "$tmp/stream" -f json -o "$tmp/all.jsonl"
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

# half_writer: the stream into the FIFO in two halves.  Once the first
# half is written (all but what the pipe holds has been read), it makes
# $tmp/half; it writes the second half when $tmp/go is opened for writing
# and closed (a FIFO: no sleep stands for "eu-stacktrace is mid-stream").
# shellcheck disable=SC2317  # called by name through check
half_writer ()
{
  exec "$PYTHON3" -c '
import sys
data, fifo, half, go = sys.argv[1:5]
data = open(data, "rb").read()
out = open(fifo, "wb")
out.write(data[:len(data) // 2]); out.flush()
open(half, "w").close()
open(go, "rb").read()
out.write(data[len(data) // 2:])
' "$tmp/stream" "$tmp/fifo" "$tmp/half" "$tmp/go" > /dev/null
}

# poll_until CMD...: a bounded poll (a minute) for CMD to succeed.
# shellcheck disable=SC2317  # called by name through check
poll_until ()
{
  _i=0
  until "$@"; do
    _i=$((_i + 1))
    [ "$_i" -le 1200 ] || return 1
    sleep 0.05
  done
}
# shellcheck disable=SC2317  # called by name through poll_until
said_reading_to_end () { grep -q "reading the stream to its end" "$1"; }
# shellcheck disable=SC2317  # called by name through poll_until
ended () { ! kill -0 "$1" 2> /dev/null; }

# start_half EXTRA-NAME: the FIFOs, the writer ($_w) and eu-stacktrace
# reading the FIFO ($_e, its JSON in $tmp/outNAME.jsonl, its stderr in
# $tmp/outNAME.err), once the first half is written.
# shellcheck disable=SC2317  # called by name through check
start_half ()
{
  rm -f "$tmp/fifo" "$tmp/go" "$tmp/half"
  mkfifo "$tmp/fifo" "$tmp/go" || return 1
  half_writer &
  _w=$!
  "$E" -i "$tmp/fifo" -f json -o "$tmp/out$1.jsonl" 2> "$tmp/out$1.err" &
  _e=$!
  poll_until test -e "$tmp/half" || { echo "the first half was never written"; return 1; }
}

# shellcheck disable=SC2317  # called by name through check
first_interrupt ()
{
  start_half "" || return 1
  kill -INT "$_e"
  # Taken: then the second half, and the end of the stream.
  poll_until said_reading_to_end "$tmp/out.err" || echo "the SIGINT was not taken"
  : > "$tmp/go"
  wait "$_e"
  _r=$?
  wait "$_w"
  cat "$tmp/out.err"
  echo "status $_r; $(wc -l < "$tmp/out.jsonl") of $(wc -l < "$tmp/all.jsonl") samples"
  [ "$_r" -eq 0 ] && grep -q "reading the stream to its end" "$tmp/out.err" &&
    cmp "$tmp/out.jsonl" "$tmp/all.jsonl"
}
check "first SIGINT: the FIFO is read to its end, every sample written, status 0" \
  first_interrupt

# The second SIGINT once the first was taken, the stream's second half
# never written: eu-stacktrace can only end by giving up.  (At most a
# minute, on a loaded machine; "at once" is not a wall time a test can
# hold to.)
# shellcheck disable=SC2317  # called by name through check
second_interrupt ()
{
  start_half 2 || return 1
  kill -INT "$_e"
  poll_until said_reading_to_end "$tmp/out2.err" || echo "the first SIGINT was not taken"
  kill -INT "$_e"
  _start=$(date +%s)
  poll_until ended "$_e" || { echo "still reading a minute after the second SIGINT"; kill -9 "$_e"; }
  wait "$_e"
  _r=$?
  _took=$(($(date +%s) - _start))
  _waiting=no
  kill -0 "$_w" 2> /dev/null && _waiting=yes
  kill "$_w" 2> /dev/null
  wait "$_w" 2> /dev/null
  cat "$tmp/out2.err"
  echo "status $_r after ${_took}s; the writer still held its second half: $_waiting"
  [ "$_r" -eq 130 ] && [ "$_waiting" = yes ]
}
check "second SIGINT: eu-stacktrace gives up at once" second_interrupt

tap_done
