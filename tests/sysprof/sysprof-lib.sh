# shellcheck shell=sh
# Shared by the Sysprof tests (tests/sysprof/*.sh); POSIX sh, sourced.
#
# The oracle is eu-stacktrace's own -f json of a perf.data recording, which
# the end-to-end tests hold against perf script.  A Sysprof capture is read
# with Debian's libsysprof-capture-4 reader (sysprof-check), never with our
# own code; sysprof-tool.py looks at the raw frames.
#
# Environment: as tests/e2e/e2e-lib.sh (EU_STACKTRACE, EU_STACKTRACE_ASAN,
# TOP_SRCDIR, TOP_BUILDDIR, PERF, PYTHON3); E2E_KEEP=1 keeps the files.
# Nothing here skips: a missing tool is a failure with its reason.

. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

CHECK="$TOP_BUILDDIR/tests/sysprof/sysprof-check"
TOOL="$TOP_SRCDIR/tests/sysprof/sysprof-tool.py"

# check NAME COMMAND...: one TAP line, ok when COMMAND succeeds; its output
# (in $tmp/check.out) becomes diagnostics when it fails.
check ()
{
  _name=$1
  shift
  if "$@" > "$tmp/check.out" 2>&1; then
    tap_ok "$_name"
    # The figures a check prints as "# " lines stay in the log as evidence.
    grep '^# ' "$tmp/check.out" | head -20
  else
    tap_not_ok "$_name"
    tap_diag_file "$tmp/check.out" 30
  fi
}

# sanitizer_clean ERRFILE: no report from ASan or UBSan in ERRFILE.
sanitizer_clean ()
{
  ! grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' \
    -e 'SUMMARY: [A-Za-z]*Sanitizer' "$1"
}

# run_asan ARGS...: the sanitizer build, stderr to $tmp/asan.err.
run_asan ()
{
  env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout 600 "$EU_STACKTRACE_ASAN" "$@" 2> "$tmp/asan.err"
}

# tools_problem: why the tests cannot run, or "".
tools_problem ()
{
  _p=""
  for _t in "perf:$PERF" "python3:$PYTHON3" "eu-stacktrace:$EU_STACKTRACE" \
            "eu-stacktrace-asan:$EU_STACKTRACE_ASAN" "sysprof-check:$CHECK"; do
    _q=$(tool_problem "${_t%%:*}" "${_t#*:}")
    [ -n "$_q" ] && _p="$_p${_p:+; }$_q"
  done
  echo "$_p"
}

# record OUT COMMAND...: perf record --call-graph dwarf of COMMAND.
record ()
{
  _out=$1
  shift
  echo "# recording: perf record -e cpu-clock -F 999 --call-graph dwarf -- $*"
  run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$_out" -- "$@" \
    > "$tmp/record.out" 2> "$tmp/record.err" && [ -s "$_out" ]
}

# header_only FILE: FILE is a lone 256-byte Sysprof file header.
header_only ()
{
  [ "$(wc -c < "$1")" -eq 256 ] &&
    [ "$(od -An -tx4 -N4 "$1" | tr -d ' ')" = fdca975e ]
}

# frames_equal A B: the same bytes after the 256-byte header.
frames_equal ()
{
  cmp "$1" "$2" > /dev/null 2>&1 && return 0
  tail -c +257 "$1" > "$tmp/frames_a" && tail -c +257 "$2" > "$tmp/frames_b" &&
    cmp "$tmp/frames_a" "$tmp/frames_b"
}

# count_of KEY CHECK_OUTPUT: a count that sysprof-check printed.
count_of ()
{
  sed -n "s/^$1 //p" "$2"
}

# The steps of sysprof_roundtrip, each a TAP line; they read $E, $data
# and $tmp.
rt_direct ()
{
  "$E" -i "$data" -f sysprof -o "$tmp/direct.cap" &&
    "$CHECK" --samples "$tmp/direct.samples" "$tmp/direct.cap" > "$tmp/direct.check"
}

rt_direct_frames ()
{
  cat "$tmp/direct.check"
  [ "$(count_of maps "$tmp/direct.check")" -gt 0 ] &&
    [ "$(count_of processes "$tmp/direct.check")" -gt 0 ] &&
    [ "$(count_of forks "$tmp/direct.check")" -ge "${FORKS:-0}" ] &&
    [ "$(count_of exits "$tmp/direct.check")" -ge "${FORKS:-0}" ]
}

rt_stream_json ()
{
  "$E" -i "$tmp/stream" -f json -o "$tmp/stream.jsonl" &&
    "$PYTHON3" "$TOOL" compare-json "$tmp/oracle.jsonl" "$tmp/stream.jsonl"
}

rt_naive ()
{
  "$E" -i "$tmp/stream" -m naive -f sysprof -o "$tmp/naive.cap" &&
    "$CHECK" --samples "$tmp/naive.samples" "$tmp/naive.cap"
}

rt_passthru_again ()
{
  "$E" -i "$tmp/stream" -m passthru -f sysprof -o "$tmp/again" && cmp "$tmp/stream" "$tmp/again"
}

rt_none ()
{
  "$E" -i "$tmp/stream" -m none -f sysprof -o "$tmp/none" && header_only "$tmp/none"
}

rt_fifo ()
{
  rm -f "$tmp/fifo1" "$tmp/fifo2"
  mkfifo "$tmp/fifo1" "$tmp/fifo2" || return 1
  "$E" -i "$data" -m passthru -f sysprof -o "$tmp/fifo1" &
  _pa=$!
  "$E" -i "$tmp/fifo1" -m naive -f sysprof -o "$tmp/fifo2" &
  _pb=$!
  timeout 300 cat "$tmp/fifo2" > "$tmp/fifo.cap"
  wait $_pa
  _ra=$?
  wait $_pb
  _rb=$?
  echo "status $_ra and $_rb"
  [ $_ra -eq 0 ] && [ $_rb -eq 0 ] && "$CHECK" "$tmp/fifo.cap" &&
    frames_equal "$tmp/fifo.cap" "$tmp/naive.cap"
}

# As elfutils' eu-stacktrace: standard input to standard output, a capture
# without -f, and ELFUTILS_STACKTRACE_VERBOSE for what Sysprof cannot pass
# as an option.
rt_stdin ()
{
  ELFUTILS_STACKTRACE_VERBOSE=true "$E" < "$tmp/stream" > "$tmp/stdin.cap" 2> "$tmp/stdin.err" &&
    frames_equal "$tmp/stdin.cap" "$tmp/naive.cap" &&
    grep -q "^samples read: *$(wc -l < "$tmp/oracle.jsonl")\$" "$tmp/stdin.err"
}

rt_asan ()
{
  run_asan -i "$data" -m passthru -f sysprof -o "$tmp/asan-stream"
  _r1=$?
  cat "$tmp/asan.err"
  sanitizer_clean "$tmp/asan.err" || return 1
  run_asan -i "$tmp/asan-stream" -f sysprof -o "$tmp/asan.cap"
  _r2=$?
  cat "$tmp/asan.err"
  echo "status $_r1 and $_r2"
  sanitizer_clean "$tmp/asan.err" && [ $_r1 -eq 0 ] && [ $_r2 -eq 0 ] &&
    frames_equal "$tmp/asan-stream" "$tmp/stream" && frames_equal "$tmp/asan.cap" "$tmp/naive.cap"
}

# sysprof_roundtrip NAME COMMAND...
#
# Records COMMAND and holds the Sysprof paths against -f json of the same
# recording: the capture written from perf.data; the stack-user stream of
# -m passthru and its unwinding with -m naive, from a file, through FIFOs
# and from standard input; the pass-through of every other frame; -m none;
# and the sanitizer build on the same pipeline.  Prints the whole TAP
# stream.  FORKS: the least number of fork and of exit frames the capture
# written from perf.data must hold (default 0).
sysprof_roundtrip ()
{
  name=$1
  shift
  plan=15
  tap_plan "$plan"
  e2e_setup
  problem=$(tools_problem)
  [ -x "$1" ] || problem="$problem${problem:+; }workload $1 is not built"
  data="$tmp/perf.data"
  E=$EU_STACKTRACE

  if [ -z "$problem" ] && record "$data" "$@"; then
    tap_diag_file "$tmp/record.err" 5
    tap_ok "$name: perf record --call-graph dwarf of the workload"
  else
    [ -n "$problem" ] || problem="perf record failed"
    tap_diag_file "$tmp/record.err" 20
    tap_not_ok "$name: perf record: $problem"
  fi
  if [ -n "$problem" ]; then
    tap_fill "$name: not run ($problem)"
    exit 0
  fi

  check "$name: -f json of the recording (the oracle)" \
    "$E" -i "$data" -f json -o "$tmp/oracle.jsonl"
  echo "# $(wc -l < "$tmp/oracle.jsonl") samples"
  check "$name: perf.data -> -f sysprof: libsysprof-capture's reader and cursor read every frame" \
    rt_direct
  check "$name: perf.data -> -f sysprof: every sample frame's call chain equals -f json's" \
    "$PYTHON3" "$TOOL" compare-samples "$tmp/direct.samples" "$tmp/oracle.jsonl"
  check "$name: perf.data -> -f sysprof: process, map (fork and exit) frames for Sysprof" \
    rt_direct_frames
  check "$name: -m passthru -f sysprof writes the stack-user stream" \
    "$E" -i "$data" -m passthru -f sysprof -o "$tmp/stream"
  check "$name: the stream unwinds (-f json) as the recording does, sample for sample" \
    rt_stream_json
  check "$name: stream -> -m naive -f sysprof: libsysprof-capture reads every frame" \
    rt_naive
  check "$name: stream -> -m naive -f sysprof: every call chain equals -f json's" \
    "$PYTHON3" "$TOOL" compare-samples "$tmp/naive.samples" "$tmp/oracle.jsonl"
  check "$name: stream -> capture: every other frame passes through byte for byte" \
    "$PYTHON3" "$TOOL" same-frames "$tmp/stream" "$tmp/naive.cap"
  check "$name: -m passthru gives a stream back byte for byte" rt_passthru_again
  check "$name: -m none writes the header only" rt_none
  check "$name: perf.data -> FIFO -> -m naive -> FIFO: the frames of the file path" rt_fifo
  check "$name: by default, standard input to standard output, Sysprof in, Sysprof out" rt_stdin
  check "$name: the sanitizer build runs clean on both steps, with the same output" rt_asan

  tap_done
}
