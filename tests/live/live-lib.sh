# shellcheck shell=sh
# Shared by the live tests that run the profiler in the background and
# stop it with one signal, or wait for it to end (fork-storm.sh,
# user-names.sh, jit-budget.sh, many-mappings.sh, crafted-elf.sh); POSIX
# sh, sourced.

# wait_until N CMD...: up to N/20 s for CMD to succeed, polled every 50 ms.
wait_until () {
  _n=$1; shift; _i=0
  while ! "$@"; do
    _i=$((_i + 1))
    [ $_i -le "$_n" ] || return 1
    sleep 0.05
  done
}
# has_events PID: PID holds a perf event (it is sampling).
# shellcheck disable=SC2317  # called by name through wait_until
# shellcheck disable=SC2010  # ls -l shows where each fd of /proc/PID/fd points
has_events () { ls -l "/proc/$1/fd" 2> /dev/null | grep -q perf_event; }
# gone PID: PID has ended.
# shellcheck disable=SC2317  # called by name through wait_until
gone () { ! kill -0 "$1" 2> /dev/null; }
# end_run PID SIGNAL SECONDS: sends SIGNAL to PID, a child of this shell
# ("-": none, it ends by itself), and waits up to SECONDS for it to end;
# past that, kills it and says so.  $status gets its exit status (137 when
# it was killed), for the test that sourced this file.
# shellcheck disable=SC2034  # status is the caller's
end_run () {
  [ "$2" = - ] || kill "-$2" "$1"
  if wait_until $(($3 * 20)) gone "$1"; then
    wait "$1"; status=$?
  else
    _of=""
    [ "$2" = - ] || _of=" of SIG$2"
    echo "# the profiler did not end within $3 s$_of: killed"
    kill -KILL "$1"; wait "$1"; status=137
  fi
}
