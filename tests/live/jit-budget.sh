#!/bin/sh
# What a user's JIT files can make root's profiler read.  Four processes of
# a user (nobody) each name 32 MiB of JIT code in /tmp/perf-PID.map, names
# never seen before, and then run in anonymous executable memory, so that
# every sample makes the profiler look the map up.  Root profiles them
# (-p), with one unwinding thread and with two.  Before the per-user
# budget (src/core/resolve/jit-budget.h), each map was read whole: four
# maps of 64 MiB took the profiler to 381 MB in 8 s, parsing while 98% of
# the samples were lost.  Now:
#  - the peak RSS (the run's --stats) stays under 80 MB (measured: 54 MB
#    at -j 1 and 57 MB at -j 2, for the 32 MiB the user may hold; with a
#    budget per unwinding thread, -j 2 took 105 MB);
#  - the budget says so once (one warning, however many reads it stops),
#    and --stats counts the reads it stopped;
#  - what was read still names the code (jit_spin_loop, each map's first
#    line), and most samples are still taken (under half lost);
#  - the run ends on one SIGINT.
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
LIMIT_KB=$((80 * 1024))
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
tap_plan 8

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"

problem=""
[ -x "$NAMES" ] || problem="$NAMES is not built"
command -v setpriv > /dev/null 2>&1 || problem="setpriv (util-linux) is not in PATH"
[ "$(id -u)" -eq 0 ] || problem="not root: the user's processes are made with setpriv"

# named_all N: the N user processes have written their maps.
# shellcheck disable=SC2317  # called by name through wait_until
named_all () { [ "$(cat "$tmp"/user-*.out 2> /dev/null | grep -c ' names in ')" -ge "$1" ]; }
# warned FILE: the budget's warning is in FILE.
# shellcheck disable=SC2317  # called by name through wait_until
warned () { grep -q 'over their budget' "$1"; }

# fail_all JOBS WHY: the four results of a run that could not be made.
fail_all () {
  for what in "the profiler stays small" "one warning" "still names the code" \
              "ends on one SIGINT"; do
    tap_not_ok "-j $1: $what: $2"
  done
}

for jobs in 1 2; do
  if [ -n "$problem" ]; then
    fail_all $jobs "$problem"
    continue
  fi
  rm -f "$tmp"/user-*.out
  users=""
  for i in 1 2 3 4; do
    # Up to 5 minutes each: the test ends them long before.
    setpriv --reuid=65534 --regid=65534 --clear-groups "$NAMES" jit $MAP_MB 300 \
      > "$tmp/user-$i.out" 2>&1 &
    users="$users $!"
  done
  if ! wait_until 1200 named_all 4; then
    fail_all $jobs "the user's processes did not write their maps in 60 s: $(cat "$tmp"/user-*.out)"
    continue
  fi
  sed 's/^/# user: /' "$tmp"/user-*.out
  # shellcheck disable=SC2086  # one pid a word
  pids=$(echo $users | tr ' ' ,)
  "$EU_STACKTRACE" -p "$pids" -j $jobs --stats -f folded -o "$tmp/out-$jobs.folded" \
    2> "$tmp/err-$jobs" &
  prof=$!
  # Until the budget stops a read, then 4 s more: the rate is what is
  # read from then on.
  if wait_until 1200 warned "$tmp/err-$jobs"; then
    sleep 4
  else
    echo "# no budget warning within 60 s"
  fi
  kill -INT "$prof"
  status=0
  if wait_until 1200 gone "$prof"; then
    wait "$prof"; status=$?
  else
    echo "# the profiler did not end within 60 s of SIGINT: killed"
    kill -KILL "$prof"; wait "$prof"; status=137
  fi
  prof=""
  for pid in $users; do
    kill -KILL "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    rm -f "/tmp/perf-$pid.map"
  done
  users=""
  grep -E 'samples read|lost|peak RSS|JIT file|warning' "$tmp/err-$jobs" | cut -c1-200 | sed 's/^/# /'
  sed 's/^/# folded: /' "$tmp/out-$jobs.folded"

  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/err-$jobs")
  peak=$((${peak:-999999} * 1024))
  if [ "$peak" -lt $LIMIT_KB ]; then
    tap_ok "-j $jobs: 4 x $MAP_MB MiB of a user's JIT names: peak RSS $((peak / 1024)) MB, under $((LIMIT_KB / 1024)) MB"
  else
    tap_not_ok "-j $jobs: the profiler stays under $((LIMIT_KB / 1024)) MB: peak ${peak} kB"
  fi

  warnings=$(grep -c 'over their budget' "$tmp/err-$jobs")
  stopped=$(sed -n 's/^JIT file reads stopped at their user.*: \([0-9]*\), of \([0-9]*\) users$/\1 \2/p' \
              "$tmp/err-$jobs")
  if [ "$warnings" -eq 1 ] && [ "${stopped%% *}" -gt 0 ] 2> /dev/null \
     && [ "${stopped#* }" -eq 1 ]; then
    tap_ok "-j $jobs: one warning; --stats: ${stopped%% *} reads stopped, of ${stopped#* } user"
  else
    tap_not_ok "-j $jobs: one warning and the reads stopped counted: $warnings warnings, --stats '${stopped}'"
  fi

  named=$(sed -n 's/.*;jit_spin_loop \([0-9]*\)$/\1/p' "$tmp/out-$jobs.folded" | head -1)
  read_=$(sed -n 's/^samples read: *\([0-9]*\)$/\1/p' "$tmp/err-$jobs")
  lost=$(sed -n 's/^samples lost by the kernel: \([0-9]*\) .*/\1/p' "$tmp/err-$jobs")
  if [ "${named:-0}" -gt 0 ] && [ "${read_:-0}" -gt 0 ] && [ "${lost:-0}" -lt "${read_:-0}" ]; then
    tap_ok "-j $jobs: the map still names the code ($named samples in jit_spin_loop); $read_ samples read, ${lost:-0} lost"
  else
    tap_not_ok "-j $jobs: the map names the code and most samples are taken: ${named:-no} samples in jit_spin_loop, ${read_:-0} read, ${lost:-0} lost"
  fi

  if [ "$status" -eq 0 ] || [ "$status" -eq 130 ]; then
    tap_ok "-j $jobs: ends on one SIGINT (status $status)"
  else
    tap_not_ok "-j $jobs: ends on one SIGINT: status $status"
    sed 's/^/#   /' "$tmp/err-$jobs" | head -20
  fi
done
tap_done
