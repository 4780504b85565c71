# shellcheck shell=bash
# Sampling a running process for the container tests, by the CPU time it
# gets, not by the wall clock; sourced after tests/tap.sh.
#
# A window of wall time (`timeout -s INT 2 eu-stacktrace -p PID') holds as
# many samples as the machine's load leaves PID of the CPU, less what
# eu-stacktrace's own start took, and check-frames.py wants 20.  And
# timeout(1) sends its signal to the command and then to its whole process
# group: two SIGINTs, the second of which eu-stacktrace takes for "finish
# now" (REFERENCE.md).

# cpu_ms PID: the user and system CPU time of PID, in milliseconds; nothing
# once it has exited.
cpu_ms() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($14 + $15) * 1000 / hz }' "/proc/$1/stat" 2>/dev/null
}

# sample_cpu MS PID COMMAND...: runs COMMAND (a sampler of PID) in the
# background until PID has used MS ms of CPU time since COMMAND started,
# then sends COMMAND one SIGINT and returns its status.  A bounded poll:
# at most 120 s, or until PID or COMMAND has ended.
sample_cpu() {
  local ms=$1 pid=$2 start now e i=0
  shift 2
  start=$(cpu_ms "$pid")
  "$@" &
  e=$!
  while now=$(cpu_ms "$pid") && [ -n "$now" ] && [ -n "$start" ] \
        && [ $((now - start)) -lt "$ms" ] && [ $i -lt 2400 ] && kill -0 "$e" 2>/dev/null; do
    sleep 0.05
    i=$((i + 1))
  done
  kill -INT "$e" 2>/dev/null
  wait "$e"
}

# wait_mapped PID NAME: waits until PID maps a file whose path holds NAME
# (the dynamic linker maps the libraries after the exec that names the
# process); a bounded poll of a minute.
wait_mapped() {
  local i=0
  until grep -q "$2" "/proc/$1/maps" 2>/dev/null; do
    [ $i -lt 1200 ] || return 1
    sleep 0.05
    i=$((i + 1))
  done
}

# retry_locked COMMAND...: runs COMMAND (useradd, usermod, userdel) again
# while it fails because /etc/passwd, /etc/shadow or /etc/sub[ug]id are
# locked: the container tests run two at a time, and shadow 4.13's
# `userdel -r' holds the locks while it removes a home.  At most 2 minutes;
# the last failure's message is in $retry_err.
retry_locked() {
  local i=0
  retry_err=
  until retry_err=$("$@" 2>&1 >/dev/null); do
    case $retry_err in
      *lock*) ;;
      *) return 1 ;;
    esac
    i=$((i + 1))
    [ $i -lt 240 ] || return 1
    sleep 0.5
  done
}

# drop_user NAME: kills NAME's processes until none is left (bounded: 10 s),
# then removes the user and its home, again while the files are locked.
drop_user() {
  local i=0
  while pgrep -u "$1" >/dev/null 2>&1 && [ $i -lt 100 ]; do
    pkill -KILL -u "$1" 2>/dev/null
    sleep 0.1
    i=$((i + 1))
  done
  retry_locked userdel -r "$1"
}
