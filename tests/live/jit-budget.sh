#!/bin/sh
# What a user's JIT files can make root's profiler read.  Four processes of
# a user (nobody) each name 32 MiB of JIT code in /tmp/perf-PID.map, names
# never seen before, and then run in anonymous executable memory, so that
# every sample makes the profiler look the map up.  Root profiles them
# (-p), with one unwinding thread and with two, and once more with maps of
# 10-byte lines (each makes a 32-byte entry).  Before the per-user budget
# (src/core/resolve/jit-budget.h), each map was read whole: four maps of
# 64 MiB took the profiler to 381 MB in 8 s, parsing while 98% of the
# samples were lost.  Now:
#  - the peak RSS (the run's --stats) stays under 64 MB (measured: 34 MB
#    at -j 1, 36 MB at -j 2 and 40 MB with short lines, for the 32 MiB the
#    user may hold; with a budget per unwinding thread, -j 2 took 105 MB,
#    and short lines 172 MB while the read was bounded by text alone);
#  - the budget says so once (one warning, however many reads it stops),
#    and --stats counts the reads it stopped;
#  - what was read still names the code (jit_spin_loop, each map's first
#    line), and most samples are still taken (under half lost);
#  - the run ends on one SIGINT.
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
LIMIT_KB=$((64 * 1024))
MAP_MB=32
NAMES="$TOP_BUILDDIR/tests/workloads/names"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-jit-budget.XXXXXX")
prof=""
users=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  [ -n "$prof" ] && kill -KILL "$prof" 2> /dev/null
  for pid in $users; do
    kill -KILL "$pid" 2> /dev/null
    rm -f "/tmp/perf-$pid.map"
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
[ "$(id -u)" -eq 0 ] || tap_skip_all "the user's processes are made with setpriv: root only"
tap_plan 12

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"

problem=""
[ -x "$NAMES" ] || problem="$NAMES is not built"
command -v setpriv > /dev/null 2>&1 || problem="setpriv (util-linux) is not in PATH"

# named_all N: the N user processes have written their maps.
# shellcheck disable=SC2317  # called by name through wait_until
named_all () { [ "$(cat "$tmp"/user-*.out 2> /dev/null | grep -c ' names in ')" -ge "$1" ]; }
# warned FILE: the budget's warning is in FILE.
# shellcheck disable=SC2317  # called by name through wait_until
warned () { grep -q 'over their budget' "$1"; }

# fail_all RUN WHY: the four results of a run that could not be made.
fail_all () {
  for what in "the profiler stays small" "one warning" "still names the code" \
              "ends on one SIGINT"; do
    tap_not_ok "$1: $what: $2"
  done
}

for run in "1 long" "2 long" "1 short"; do
  jobs=${run% *}
  lines=${run#* }
  # The results' names: "-j 1", "-j 2", "-j 1, short lines".
  label="-j $jobs"
  [ "$lines" = short ] && label="$label, short lines"
  if [ -n "$problem" ]; then
    fail_all "$label" "$problem"
    continue
  fi
  rm -f "$tmp"/user-*.out
  users=""
  for i in 1 2 3 4; do
    # Niced, so that the tests run beside this one keep the CPUs; up to
    # 2 minutes each (the test ends them long before; the alarm ends them
    # if the test is killed).
    # shellcheck disable=SC2046  # "short", or no word
    setpriv --reuid=65534 --regid=65534 --clear-groups nice -n 19 \
      "$NAMES" jit $MAP_MB 120 $([ "$lines" = short ] && echo short) \
      > "$tmp/user-$i.out" 2>&1 &
    users="$users $!"
  done
  if ! wait_until 1200 named_all 4; then
    fail_all "$label" "the user's processes did not write their maps in 60 s: $(cat "$tmp"/user-*.out | tr '\n' ' ')"
    for pid in $users; do kill -KILL "$pid" 2> /dev/null; done
    continue
  fi
  sed 's/^/# user: /' "$tmp"/user-*.out
  # shellcheck disable=SC2086  # one pid a word
  pids=$(echo $users | tr ' ' ,)
  "$EU_STACKTRACE" -p "$pids" -j "$jobs" --stats -f folded -o "$tmp/out-$jobs-$lines.folded" \
    2> "$tmp/err-$jobs-$lines" &
  prof=$!
  # Until the budget stops a read, then 4 s more: the rate is what is
  # read from then on.
  if wait_until 1200 warned "$tmp/err-$jobs-$lines"; then
    sleep 4
  else
    echo "# no budget warning within 60 s"
  fi
  end_run "$prof" INT 60
  prof=""
  for pid in $users; do
    kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    rm -f "/tmp/perf-$pid.map"
  done
  users=""
  grep -E 'samples read|lost|peak RSS|JIT file|warning' "$tmp/err-$jobs-$lines" | cut -c1-200 | sed 's/^/# /'
  sed 's/^/# folded: /' "$tmp/out-$jobs-$lines.folded"

  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/err-$jobs-$lines")
  peak=$((${peak:-999999} * 1024))
  if [ "$peak" -lt $LIMIT_KB ]; then
    tap_ok "$label: 4 x $MAP_MB MiB of a user's JIT names: peak RSS $((peak / 1024)) MB, under $((LIMIT_KB / 1024)) MB"
  else
    tap_not_ok "$label: the profiler stays under $((LIMIT_KB / 1024)) MB: peak ${peak} kB"
  fi

  warnings=$(grep -c 'over their budget' "$tmp/err-$jobs-$lines")
  stopped=$(sed -n 's/^JIT file reads stopped at their user.*: \([0-9]*\), of \([0-9]*\) users$/\1 \2/p' \
              "$tmp/err-$jobs-$lines")
  if [ "$warnings" -eq 1 ] && [ "${stopped%% *}" -gt 0 ] 2> /dev/null \
     && [ "${stopped#* }" -eq 1 ]; then
    tap_ok "$label: one warning; --stats: ${stopped%% *} reads stopped, of ${stopped#* } user"
  else
    tap_not_ok "$label: one warning and the reads stopped counted: $warnings warnings, --stats '${stopped}'"
  fi

  named=$(sed -n 's/.*;jit_spin_loop \([0-9]*\)$/\1/p' "$tmp/out-$jobs-$lines.folded" | head -n 1)
  read_=$(sed -n 's/^samples read: *\([0-9]*\)$/\1/p' "$tmp/err-$jobs-$lines")
  lost=$(sed -n 's/^samples lost by the kernel: \([0-9]*\) .*/\1/p' "$tmp/err-$jobs-$lines")
  if [ "${named:-0}" -gt 0 ] && [ "${read_:-0}" -gt 0 ] && [ "${lost:-0}" -lt "${read_:-0}" ]; then
    tap_ok "$label: the map still names the code ($named samples in jit_spin_loop); $read_ samples read, ${lost:-0} lost"
  else
    tap_not_ok "$label: the map names the code and most samples are taken: ${named:-no} samples in jit_spin_loop, ${read_:-0} read, ${lost:-0} lost"
  fi

  if [ "$status" -eq 0 ] || [ "$status" -eq 130 ]; then
    tap_ok "$label: ends on one SIGINT (status $status)"
  else
    tap_not_ok "$label: ends on one SIGINT: status $status"
    sed 's/^/#   /' "$tmp/err-$jobs-$lines" | head -20
  fi
done
tap_done
