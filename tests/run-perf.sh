# shellcheck shell=sh
# run_perf, for every test that runs perf; POSIX sh, sourced after the test
# has made its temporary directory $tmp (and set PERF, or perf is used).
#
# run_perf [--timeout SECONDS] ARGS...: perf ARGS with a private HOME,
# $tmp/home (made here): perf keeps its build-id cache and reads its config
# under $HOME, so runs neither depend on nor fill ~/.debug.  --timeout:
# perf is stopped (SIGTERM) after SECONDS, as by timeout(1).
#
# perf 6.1 (Debian 12) aborted ("assertion failed at util/build-id.c:1010",
# then "stack smashing detected": SIGABRT) whenever it recorded beside a
# live `eu-stacktrace -a' of another test: our mapping records asked for
# build-ids, and the kernel then leaves the build-id flag set in the MMAP2
# records it writes to every other event (see src/core/input/live-rings.c;
# tests/live/beside-perf.sh keeps it fixed).  Any other profiler on the
# machine that asks for build-ids does the same to perf, so run_perf runs perf again
# when it died of SIGABRT, SIGBUS or SIGSEGV, up to 3 runs in all, and says
# so on stderr (the callers keep it in their error file, which the TAP
# diagnostics show).  Any other status (a perf record stopped by the SIGINT
# a test sent it exits by re-raising it: that is no crash), and a third
# death, is returned as it is.  What perf writes to stdout is held
# back until it has succeeded, so that a second run does not append to the
# first's half: a recording to stdout (`-o -', perf's pipe format) too,
# which the tests redirect to a file (none reads it as a stream).
# shellcheck disable=SC2154  # tmp is the sourcing test's
run_perf ()
{
  run_perf_limit=""
  if [ "$1" = --timeout ]; then
    run_perf_limit=$2
    shift 2
  fi
  mkdir -p "$tmp/home" || return 1
  run_perf_out=$(mktemp "$tmp/run_perf.XXXXXX") || return 1
  run_perf_try=1
  while :; do
    run_perf_once "$@" > "$run_perf_out"
    run_perf_rc=$?
    case $run_perf_rc in
      134 | 135 | 139) [ "$run_perf_try" -lt 3 ] || break ;;
      *) break ;;
    esac
    echo "run_perf: perf $1 died of signal $((run_perf_rc - 128)); running it again" >&2
    run_perf_try=$((run_perf_try + 1))
  done
  cat "$run_perf_out"
  rm -f "$run_perf_out"
  return "$run_perf_rc"
}

run_perf_once ()
{
  if [ -n "$run_perf_limit" ]; then
    HOME="$tmp/home" timeout "$run_perf_limit" "${PERF:-perf}" "$@"
  else
    HOME="$tmp/home" "${PERF:-perf}" "$@"
  fi
}
