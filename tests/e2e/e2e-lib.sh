# shellcheck shell=sh
# Shared by the end-to-end tests (tests/e2e/*.sh); POSIX sh, sourced.
#
# Each test records one workload with `perf record --call-graph dwarf`,
# unwinds the file with eu-stacktrace and with `perf script` (the
# independent oracle), and compares the two with compare-perf-script.py.
# It then runs the sanitizer build of eu-stacktrace on the same file.
#
# Environment (set by `make check`; defaults suit a run by hand from the top
# of an in-tree build): EU_STACKTRACE, EU_STACKTRACE_ASAN, TOP_SRCDIR,
# TOP_BUILDDIR, PERF, PYTHON3.
#
# Set E2E_KEEP=1 to keep the temporary directory (perf.data, perf script's
# text, our JSON) for a closer look.
#
# Nothing here skips: a missing perf, a perf that refuses to record or a
# missing binary is a failure, with the reason in the TAP output.

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"
: "${EU_STACKTRACE_ASAN:=$TOP_BUILDDIR/tests/eu-stacktrace-asan}"
: "${PERF:=perf}"
: "${PYTHON3:=python3}"

. "$TOP_SRCDIR/tests/tap.sh"

COMPARE="$TOP_SRCDIR/tests/e2e/compare-perf-script.py"
# shellcheck disable=SC2034  # used by the scripts that source this file
WORKLOADS="$TOP_BUILDDIR/tests/workloads"

# Both unwinders must see the same files and nothing from the network:
# debuginfod is tested elsewhere, and perf must not read a user's config.
unset DEBUGINFOD_URLS
PERF_FIELDS=comm,pid,tid,time,ip,sym,symoff,dso

e2e_setup ()
{
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-e2e.XXXXXX") \
    || tap_bail "cannot create a temporary directory"
  if [ -n "${E2E_KEEP:-}" ]; then
    trap 'echo "# kept $tmp (E2E_KEEP is set)"' EXIT
  else
    # Only the main shell removes it: $$ is its pid in every subshell too,
    # and a subshell that ends through a trap must not take the directory.
    # (bash's BASHPID, or in dash sh -c's $PPID, is the pid of the process
    # that runs the trap).
    trap '[ "${BASHPID:-$(sh -c '"'"'echo $PPID'"'"')}" = "$$" ] && rm -rf "$tmp"' EXIT
  fi
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # perf keeps its build-id cache and reads its config under $HOME: give it
  # a private, empty one so that runs neither depend on nor fill ~/.debug.
  mkdir "$tmp/home"
}

# run_perf: perf with a private HOME, run once more when perf 6.1 crashed.
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"

# tool_problem NAME PATH: the reason a required program is unusable, or "".
tool_problem ()
{
  case $2 in
    */*) [ -x "$2" ] || { echo "$1 ($2) is not an executable file"; return; } ;;
    *) command -v "$2" >/dev/null 2>&1 || { echo "$1 ($2) is not in PATH"; return; } ;;
  esac
  echo ""
}

# tools_problem NAME:COMMAND...: what tool_problem says of each, joined by
# "; "; empty when every one is there.
tools_problem ()
{
  _problems=""
  for _t in "$@"; do
    _p=$(tool_problem "${_t%%:*}" "${_t#*:}")
    [ -n "$_p" ] && _problems="$_problems${_problems:+; }$_p"
  done
  echo "$_problems"
}

# e2e_run NAME COMMAND... [-- COMPARATOR-OPTIONS...]
#
# Records COMMAND, compares, runs the sanitizer build.  Prints the whole TAP
# stream, plan included.  The exit status is 0 once the stream is complete:
# the verdict is in the "ok"/"not ok" lines (a non-zero status would make
# automake's TAP driver count a harness ERROR on top of each failure).
#   NAME                   the workload's name in TAP lines
#   COMMAND                the workload and its arguments
#   COMPARATOR-OPTIONS     extra options of compare-perf-script.py; each
#                          --expect-complete and --in-order add one TAP
#                          line each
e2e_run ()
{
  name=$1
  shift
  cmd=""
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    cmd="$cmd '$1'"
    shift
  done
  [ $# -gt 0 ] && shift
  compare_opts="$*"

  n_expect=0
  for opt in "$@"; do
    case $opt in --expect-complete|--in-order) n_expect=$((n_expect + 1)) ;; esac
  done
  # record, perf script, eu-stacktrace, 3 comparator lines (+ expectations),
  # sanitizer build.
  n_compare=$((3 + n_expect))
  plan=$((3 + n_compare + 1))
  tap_plan "$plan"

  e2e_setup

  data="$tmp/perf.data"
  problem=$(tools_problem "perf:$PERF" "python3:$PYTHON3")
  first_word=$(eval "set -- $cmd; echo \"\$1\"")
  [ -x "$first_word" ] || problem="$problem${problem:+; }workload $first_word is not built (make check builds it)"

  # 1. Record.
  if [ -z "$problem" ]; then
    # E2E_RECORD: how perf records (-z: zstd-compressed records; -g: frame
    # pointers).
    record_opts=${E2E_RECORD:---call-graph dwarf}
    echo "# recording: perf record -e cpu-clock -F 999 $record_opts --$cmd"
    if eval "run_perf record -e cpu-clock -F 999 $record_opts -o \"\$data\" -- $cmd" \
         > "$tmp/record.out" 2> "$tmp/record.err" && [ -s "$data" ]; then
      tap_diag_file "$tmp/record.err" 10
      tap_ok "$name: perf record --call-graph dwarf of the workload"
    else
      problem="perf record failed (exit status or empty file)"
      tap_diag_file "$tmp/record.out" 20
      tap_diag_file "$tmp/record.err" 40
      tap_not_ok "$name: perf record --call-graph dwarf of the workload: $problem"
    fi
  else
    tap_not_ok "$name: perf record --call-graph dwarf of the workload: $problem"
  fi

  # 2. The oracle.
  if [ -z "$problem" ]; then
    if run_perf script -i "$data" -F "$PERF_FIELDS" --no-inline --ns \
         > "$tmp/perf-script.txt" 2> "$tmp/perf-script.err" \
         && [ -s "$tmp/perf-script.txt" ]; then
      tap_diag_file "$tmp/perf-script.err" 10
      tap_ok "$name: perf script unwinds the recording"
    else
      problem="perf script failed"
      tap_diag_file "$tmp/perf-script.err" 40
      tap_not_ok "$name: perf script unwinds the recording: $problem"
    fi
  else
    tap_not_ok "$name: perf script unwinds the recording: not run ($problem)"
  fi

  # 3. Ours.
  ours_problem=$problem
  if [ -z "$ours_problem" ]; then
    p=$(tool_problem eu-stacktrace "$EU_STACKTRACE")
    if [ -n "$p" ]; then
      ours_problem=$p
      tap_not_ok "$name: eu-stacktrace -f json unwinds the recording: $p"
    elif timeout 300 "$EU_STACKTRACE" -i "$data" -f json -o "$tmp/ours.jsonl" \
           > "$tmp/ours.out" 2> "$tmp/ours.err"; then
      if [ -s "$tmp/ours.jsonl" ]; then
        tap_diag_file "$tmp/ours.err" 10
        tap_ok "$name: eu-stacktrace -f json unwinds the recording"
      else
        ours_problem="eu-stacktrace wrote no output"
        tap_diag_file "$tmp/ours.err" 40
        tap_not_ok "$name: eu-stacktrace -f json unwinds the recording: $ours_problem"
      fi
    else
      rc=$?
      ours_problem="eu-stacktrace exited with status $rc"
      tap_diag_file "$tmp/ours.out" 20
      tap_diag_file "$tmp/ours.err" 40
      tap_not_ok "$name: eu-stacktrace -f json unwinds the recording: $ours_problem"
    fi
  else
    tap_not_ok "$name: eu-stacktrace -f json unwinds the recording: not run ($ours_problem)"
  fi

  # 4.. Compare.
  if [ -z "$ours_problem" ]; then
    # shellcheck disable=SC2086  # compare_opts are words on purpose
    "$PYTHON3" "$COMPARE" --perf-script "$tmp/perf-script.txt" \
      --ours "$tmp/ours.jsonl" --name "$name" --tap-start $((tap_n + 1)) \
      $compare_opts > "$tmp/compare.out" 2> "$tmp/compare.err"
    compare_rc=$?
    cat "$tmp/compare.out"
    tap_diag_file "$tmp/compare.err" 40
    got=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/compare.out")
    tap_counted "$got" "$compare_rc"
    # A comparator that died early printed fewer lines: fill the plan.
    while [ "$got" -lt "$n_compare" ]; do
      got=$((got + 1))
      tap_not_ok "$name: comparison did not complete (status $compare_rc)"
    done
  else
    i=0
    while [ $i -lt "$n_compare" ]; do
      i=$((i + 1))
      tap_not_ok "$name: comparison with perf script: not run ($ours_problem)"
    done
  fi

  # Last. The sanitizer build on the same recording: no report, status 0,
  # and the same samples as the plain build.
  if [ -z "$problem" ]; then
    p=$(tool_problem eu-stacktrace-asan "$EU_STACKTRACE_ASAN")
    if [ -n "$p" ]; then
      tap_not_ok "$name: the sanitizer build runs clean on the recording: $p"
    else
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        timeout 600 "$EU_STACKTRACE_ASAN" -i "$data" -f json -o "$tmp/asan.jsonl" \
        > "$tmp/asan.out" 2> "$tmp/asan.err"
      rc=$?
      why=""
      if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' \
           -e 'runtime error:' -e 'SUMMARY: [A-Za-z]*Sanitizer' \
           "$tmp/asan.err" "$tmp/asan.out"; then
        why="sanitizer report"
      elif [ "$rc" -ne 0 ]; then
        why="exit status $rc"
      elif [ ! -s "$tmp/asan.jsonl" ]; then
        why="no output"
      elif [ -z "$ours_problem" ] \
           && ! { LC_ALL=C sort "$tmp/ours.jsonl" > "$tmp/ours.sorted" \
                  && LC_ALL=C sort "$tmp/asan.jsonl" > "$tmp/asan.sorted" \
                  && cmp -s "$tmp/ours.sorted" "$tmp/asan.sorted"; }; then
        why="output differs from the plain build's"
        diff "$tmp/ours.sorted" "$tmp/asan.sorted" > "$tmp/asan.diff"
        tap_diag_file "$tmp/asan.diff" 20
      fi
      if [ -z "$why" ]; then
        tap_ok "$name: the sanitizer build runs clean on the recording"
      else
        grep -n -A 30 -m 1 -e 'ERROR: ' -e 'runtime error:' "$tmp/asan.err" > "$tmp/asan.report"
        tap_diag_file "$tmp/asan.report" 60
        [ -s "$tmp/asan.report" ] || tap_diag_file "$tmp/asan.err" 40
        tap_not_ok "$name: the sanitizer build runs clean on the recording: $why"
      fi
    fi
  else
    tap_not_ok "$name: the sanitizer build runs clean on the recording: not run ($problem)"
  fi

  tap_done
}
