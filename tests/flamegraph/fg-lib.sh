# shellcheck shell=sh
# Shared by the flame graph and pprof tests (tests/flamegraph/*.sh); POSIX
# sh, sourced.  Builds on tests/e2e/e2e-lib.sh (TAP helpers, the private
# perf HOME, the temporary directory; E2E_KEEP=1 keeps it).
#
# Each test records the shlib workload (the program, a library of its own,
# the C library) with perf, writes the folded output as the oracle, and
# checks another format against it.  Nothing skips: a missing tool is a
# failure with the reason in the TAP line.

. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

# shellcheck disable=SC2034  # used by the scripts that source this file
FG="$TOP_SRCDIR/tests/flamegraph"
# shellcheck disable=SC2034  # used by the scripts that source this file
ARTIFACTS="$TOP_BUILDDIR/tests/flamegraph"
: "${GO:=go}"
: "${CHROMIUM:=chromium}"

# fg_record: records the workload into $tmp/perf.data and the folded output
# (--inline) into $tmp/folded; one TAP line.  Sets $problem when it failed.
fg_record ()
{
  data="$tmp/perf.data"
  problem=""
  for t in "perf:$PERF" "python3:$PYTHON3" "eu-stacktrace:$EU_STACKTRACE"; do
    p=$(tool_problem "${t%%:*}" "${t#*:}")
    [ -n "$p" ] && problem="$problem${problem:+; }$p"
  done
  [ -x "$WORKLOADS/shlib" ] || problem="$problem${problem:+; }workload shlib is not built"
  if [ -z "$problem" ]; then
    # The TAP line names the step that failed, its exit status and the last
    # line it wrote to stderr: a CI log that keeps only the TAP lines still
    # tells a perf failure from an unwinder one.
    run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$data" \
      -- "$WORKLOADS/shlib" 1500 > "$tmp/record.out" 2> "$tmp/record.err"
    rc=$?
    if [ "$rc" -ne 0 ] || [ ! -s "$data" ]; then
      problem="perf record failed (exit $rc: $(tail -n 1 "$tmp/record.err"))"
      tap_diag_file "$tmp/record.err" 20
    else
      "$EU_STACKTRACE" -i "$data" --inline -f folded -o "$tmp/folded" 2> "$tmp/folded.err"
      rc=$?
      if [ "$rc" -eq 0 ] && [ -s "$tmp/folded" ]; then
        tap_ok "perf record of the shlib workload, and its folded stacks (--inline): $(wc -l < "$tmp/folded") stacks"
        return
      fi
      problem="eu-stacktrace -f folded failed (exit $rc: $(tail -n 1 "$tmp/folded.err"))"
      tap_diag_file "$tmp/folded.err" 20
    fi
  fi
  tap_not_ok "perf record of the shlib workload, and its folded stacks: $problem"
}

# fg_asan NAME FORMAT PLAIN-OUTPUT [OPTIONS...]: the sanitizer build writes
# FORMAT from the same recording, clean and byte for byte as the plain one.
fg_asan ()
{
  name=$1 format=$2 plain=$3
  shift 3
  if [ -n "$problem" ]; then
    tap_not_ok "$name: the sanitizer build runs clean: not run ($problem)"
    return
  fi
  p=$(tool_problem eu-stacktrace-asan "$EU_STACKTRACE_ASAN")
  if [ -n "$p" ]; then
    tap_not_ok "$name: the sanitizer build runs clean: $p"
    return
  fi
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout 300 "$EU_STACKTRACE_ASAN" -i "$data" --inline -f "$format" "$@" \
      -o "$tmp/asan.$format" > "$tmp/asan.out" 2> "$tmp/asan.err"
  rc=$?
  why=""
  if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' \
       -e 'SUMMARY: [A-Za-z]*Sanitizer' "$tmp/asan.err" "$tmp/asan.out"; then
    why="sanitizer report"
  elif [ "$rc" -ne 0 ]; then
    why="exit status $rc"
  elif ! cmp -s "$plain" "$tmp/asan.$format"; then
    why="output differs from the plain build's"
  fi
  if [ -z "$why" ]; then
    tap_ok "$name: the sanitizer build writes -f $format clean, the same bytes as the plain build"
  else
    grep -n -A 30 -m 1 -e 'ERROR: ' -e 'runtime error:' "$tmp/asan.err" > "$tmp/asan.report"
    tap_diag_file "$tmp/asan.report" 60
    [ -s "$tmp/asan.report" ] || tap_diag_file "$tmp/asan.err" 40
    tap_not_ok "$name: the sanitizer build writes -f $format clean: $why"
  fi
}

# fg_python START-NUMBER COUNT DESCRIPTION SCRIPT ARGS...: runs a checker
# that prints COUNT TAP lines numbered from START-NUMBER; fills the plan
# when it died early.
fg_python ()
{
  start=$1 count=$2 what=$3
  shift 3
  if [ -n "$problem" ]; then
    i=0
    while [ $i -lt "$count" ]; do
      i=$((i + 1))
      tap_not_ok "$what: not run ($problem)"
    done
    return
  fi
  PYTHONDONTWRITEBYTECODE=1 "$PYTHON3" "$@" --tap-start "$start" \
    > "$tmp/check.out" 2> "$tmp/check.err"
  rc=$?
  cat "$tmp/check.out"
  tap_diag_file "$tmp/check.err" 40
  got=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/check.out")
  tap_counted "$got" "$rc"
  while [ "$got" -lt "$count" ]; do
    got=$((got + 1))
    tap_not_ok "$what: the checker did not complete (status $rc)"
  done
}

fg_end ()
{
  tap_done
}
