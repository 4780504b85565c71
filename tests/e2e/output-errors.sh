#!/bin/sh
# Write errors name the output and keep their errno, and never cost a good
# file: on a full 1 MiB tmpfs (mounted in a private mount namespace) every
# format fails with status 1 and "writing PATH: No space left on device";
# a good profile already at -o survives the failed run, with no temporary
# file left; standard output on a full disk says "standard output".  A
# closed output pipe (| head -1) gives status 1 and one message, "writing
# standard output: Broken pipe", and leaves no profiled command running.
# A run that succeeds replaces the file and keeps its mode.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

# The tmpfs lives in a mount namespace of our own: nothing to unmount if
# the test is killed.
if [ -z "${OUTPUT_ERRORS_IN_NS:-}" ]; then
  OUTPUT_ERRORS_IN_NS=1 exec unshare -m --propagation private /bin/sh "$0" "$@"
fi

plan=8
tap_plan "$plan"
e2e_setup
E=$EU_STACKTRACE_ASAN
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

check () {  # DESCRIPTION COMMAND...: a TAP line for COMMAND's status
  _d=$1; shift
  if "$@" > "$tmp/check.out" 2>&1; then
    tap_ok "$_d"
  else
    tap_not_ok "$_d"
  fi
  tap_diag_file "$tmp/check.out" 20
}

if ! run_perf record -q -N -B -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/perf.data" \
       -- "$WORKLOADS/deep" 300 > /dev/null 2> "$tmp/record.err"; then
  tap_diag_file "$tmp/record.err"
  tap_fill "not run: perf record failed"
  exit 0
fi

small=$tmp/small
mkdir "$small"
# shellcheck disable=SC2317  # called by name through check
fresh_tmpfs () {
  umount "$small" 2> /dev/null
  mount -t tmpfs -o size=1m tmpfs "$small"
}
# fill: the rest of the tmpfs, so that the next write fails.
# shellcheck disable=SC2317  # called by name through check
fill () { cat /dev/zero > "$small/fill" 2> /dev/null; true; }
# shellcheck disable=SC2317  # called by name through check
no_sanitizer () { ! grep -qE "Sanitizer|runtime error" "$1"; }

# 1: each format to a full disk: status 1, the path and ENOSPC.
# shellcheck disable=SC2317  # called by name through check
full_disk () {
  _bad=0
  for fmt in text json folded svg pprof sysprof; do
    fresh_tmpfs || return 1
    fill
    "$E" -i "$tmp/perf.data" -f "$fmt" -o "$small/out.$fmt" 2> "$tmp/full.err"
    _st=$?
    _msg=$(cat "$tmp/full.err")
    echo "-f $fmt: status $_st: $_msg"
    [ "$_st" -eq 1 ] && [ "$_msg" = "eu-stacktrace: writing $small/out.$fmt: No space left on device" ] &&
      no_sanitizer "$tmp/full.err" || _bad=1
  done
  return "$_bad"
}
check "a full disk: status 1 and \"writing PATH: No space left on device\", every format" full_disk

# 2: a good profile at -o survives a run that fails, no temporary file left.
# shellcheck disable=SC2317  # called by name through check
survives () {
  _bad=0
  for fmt in folded svg pprof sysprof; do
    fresh_tmpfs || return 1
    "$E" -i "$tmp/perf.data" -f "$fmt" -o "$small/good.$fmt" 2> "$tmp/good.err" || return 1
    cp "$small/good.$fmt" "$tmp/good.$fmt"
    chmod 0640 "$small/good.$fmt"
    fill
    "$E" -i "$tmp/perf.data" -f "$fmt" -o "$small/good.$fmt" 2> "$tmp/fail.err"
    _st=$?
    # shellcheck disable=SC2012  # a diagnostic: the names are the tool's own files
    echo "-f $fmt over a good file on a full disk: status $_st: $(cat "$tmp/fail.err"); left: $(ls -A "$small" | tr '\n' ' ')"
    # shellcheck disable=SC2010,SC2015  # the names are the tool's own files; _bad=1 when any check fails
    [ "$_st" -eq 1 ] && cmp "$tmp/good.$fmt" "$small/good.$fmt" &&
      [ "$(ls -A "$small" | grep -c '^\.good')" -eq 0 ] || _bad=1
    # and a run that succeeds replaces it, keeping its mode
    rm -f "$small/fill"
    "$E" -i "$tmp/perf.data" -f "$fmt" -o "$small/good.$fmt" 2> "$tmp/ok.err"
    _st=$?
    _mode=$(stat -c %a "$small/good.$fmt")
    echo "   then with room: status $_st, mode $_mode"
    [ "$_st" -eq 0 ] || _bad=1
    [ "$_mode" = 640 ] || _bad=1
  done
  return "$_bad"
}
check "a good folded/svg/pprof/sysprof file at -o survives a failed run; a good run replaces it, keeping its mode" survives

# 3: standard output on a full disk.
# shellcheck disable=SC2317  # called by name through check
stdout_full () {
  fresh_tmpfs || return 1
  fill
  "$E" -i "$tmp/perf.data" -f json > "$small/stdout.json" 2> "$tmp/stdout.err"
  _st=$?
  echo "status $_st: $(cat "$tmp/stdout.err")"
  [ "$_st" -eq 1 ] &&
    [ "$(cat "$tmp/stdout.err")" = "eu-stacktrace: writing standard output: No space left on device" ]
}
check "standard output on a full disk: status 1, \"writing standard output: No space left on device\"" stdout_full

# 4, 5: a closed pipe, reading a recording and sampling a command.
# shellcheck disable=SC2317  # called by name through check
closed_pipe () {
  { "$E" "$@" 2> "$tmp/pipe.err"; echo $? > "$tmp/pipe.status"; } | head -1 > /dev/null
  _st=$(cat "$tmp/pipe.status")
  echo "status $_st: $(cat "$tmp/pipe.err")"
  [ "$_st" -eq 1 ] &&
    [ "$(cat "$tmp/pipe.err")" = "eu-stacktrace: writing standard output: Broken pipe" ]
}
check "| head -1 of a recording: status 1, one message \"writing standard output: Broken pipe\"" \
  closed_pipe -i "$tmp/perf.data"
marker=eu-stacktrace-output-errors-$$
# shellcheck disable=SC2317  # called by name through check
pipe_live () {
  closed_pipe -f json -- "$WORKLOADS/deep" 600000 "$marker" || return 1
  if pgrep -af "$marker"; then
    pkill -KILL -f "$marker"
    echo "the command was left running"
    return 1
  fi
}
check "| head -1 of a live command: status 1, one message, the command ended" pipe_live

# 6: -o to a directory that is not writable but whose file is: in place.
# shellcheck disable=SC2317  # called by name through check
in_place () {
  _ro=$tmp/ro
  mkdir "$_ro" || return 1
  cp "$tmp/perf.data" "$_ro/in.data"
  chmod 0644 "$_ro/in.data"
  : > "$_ro/out.folded"
  chmod 0666 "$_ro/out.folded"
  chmod 0555 "$_ro"
  chmod 0755 "$tmp"   # for the unprivileged user; mktemp made it 0700
  # root ignores directory permissions: an unprivileged user shows it
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$EU_STACKTRACE" -i "$_ro/in.data" -f folded -o "$_ro/out.folded" 2> "$tmp/ro.err"
  _st=$?
  chmod 0700 "$tmp"
  chmod 0755 "$_ro"
  echo "status $_st: $(cat "$tmp/ro.err"); $(wc -l < "$_ro/out.folded") lines"
  [ "$_st" -eq 0 ] && [ -s "$_ro/out.folded" ]
}
check "-o in a directory we may not create files in: the file is written in place" in_place

# 7: /dev/null and a FIFO are written in place.
# shellcheck disable=SC2317  # called by name through check
special () {
  "$E" -i "$tmp/perf.data" -f pprof -o /dev/null || return 1
  [ -c /dev/null ] || return 1
  mkfifo "$tmp/fifo"
  cat "$tmp/fifo" > "$tmp/from-fifo.folded" &
  "$E" -i "$tmp/perf.data" -f folded -o "$tmp/fifo" || return 1
  wait
  [ -p "$tmp/fifo" ] && [ -s "$tmp/from-fifo.folded" ]
}
check "-o /dev/null and -o FIFO are written in place" special

# 8: the sanitizer saw nothing in any of it.
# shellcheck disable=SC2317  # called by name through check
sanitizers () {
  ! grep -lE "Sanitizer|runtime error" "$tmp"/*.err
}
check "no sanitizer report" sanitizers
umount "$small" 2> /dev/null
tap_done
