# shellcheck shell=sh
# Shared by the live tests that run the profiler in the background and
# stop it with one signal (fork-storm.sh, user-names.sh); POSIX sh, sourced.

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
