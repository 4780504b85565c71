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

# slow_writer SECONDS: the stream into the FIFO, its second half SECONDS
# after its first.
# shellcheck disable=SC2317  # called by name through wait_until
slow_writer ()
{
  exec "$PYTHON3" -c '
import sys, time
data = open(sys.argv[1], "rb").read()
out = open(sys.argv[2], "wb")
out.write(data[:len(data) // 2]); out.flush()
time.sleep(float(sys.argv[3]))
out.write(data[len(data) // 2:])
' "$tmp/stream" "$tmp/fifo" "$1" > /dev/null
}

# shellcheck disable=SC2317  # called by name through wait_until
first_interrupt ()
{
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo" || return 1
  slow_writer 2 &
  _w=$!
  "$E" -i "$tmp/fifo" -f json -o "$tmp/out.jsonl" 2> "$tmp/out.err" &
  _e=$!
  sleep 1
  kill -INT "$_e"
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

# shellcheck disable=SC2317  # called by name through wait_until
second_interrupt ()
{
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo" || return 1
  slow_writer 30 &
  _w=$!
  "$E" -i "$tmp/fifo" -f json -o "$tmp/out2.jsonl" 2> "$tmp/out2.err" &
  _e=$!
  sleep 1
  kill -INT "$_e"
  sleep 0.5
  kill -INT "$_e"
  _start=$(date +%s)
  wait "$_e"
  _r=$?
  _took=$(($(date +%s) - _start))
  kill "$_w" 2> /dev/null
  wait "$_w" 2> /dev/null
  echo "status $_r after ${_took}s"
  [ "$_r" -eq 130 ] && [ "$_took" -lt 10 ]
}
check "second SIGINT: eu-stacktrace gives up at once" second_interrupt

tap_done
