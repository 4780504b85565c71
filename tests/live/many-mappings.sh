#!/bin/sh
# What a user's process with many executable mappings of one file can make
# root's profiler do.  Four processes of a user (nobody) each map their own
# executable 30,000 times (a page each, apart: a mapping each) and spin;
# root profiles them (-p) until they end, 5 s later.  Each process's Dwfl
# is offered each mapping: one that would overlap another module of the
# file at another bias gets none (process.c: report_mapping).  That check
# asked every mapping of the process, and was asked again of every mapping
# at every report: quadratic.  Eight such processes of 60,000 mappings
# kept root's `-a -- sleep 5` running for 4 minutes, 98.9% of its samples
# lost; this test's run took 45 s for its 5 s, 96.6% lost.  Now the
# check is a binary search (module-spans.h) and each mapping is offered
# once per Dwfl.  Asserted:
#  - the profiler ends when the processes do, its status 0;
#  - most samples are taken (under half lost);
#  - the processes' spin loop is named, so their Dwfls were made.
# The peak RSS is printed, not bounded: each mapping costs the profiler
# about 300 bytes, for up to 65,530 per process (vm.max_map_count).
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
MAPPINGS=30000
SECONDS_RUN=5
NAMES="$TOP_BUILDDIR/tests/workloads/names"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-many-mappings.XXXXXX")
prof=""
users=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  [ -n "$prof" ] && kill -KILL "$prof" 2> /dev/null
  for pid in $users; do kill -KILL "$pid" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
[ "$(id -u)" -eq 0 ] || tap_skip_all "the user's processes are made with setpriv: root only"
tap_plan 3

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"

# mapped_all N: the N user processes have made their mappings.
# shellcheck disable=SC2317  # called by name through wait_until
mapped_all () { [ "$(cat "$tmp"/user-*.out 2> /dev/null | grep -c ' mappings$')" -ge "$1" ]; }

problem=""
[ -x "$NAMES" ] || problem="$NAMES is not built"
command -v setpriv > /dev/null 2>&1 || problem="setpriv (util-linux) is not in PATH"
if [ -z "$problem" ]; then
  for i in 1 2 3 4; do
    # Niced, so that the tests run beside this one keep the CPUs.
    setpriv --reuid=65534 --regid=65534 --clear-groups nice -n 19 \
      "$NAMES" maps $MAPPINGS $SECONDS_RUN > "$tmp/user-$i.out" 2>&1 &
    users="$users $!"
  done
  wait_until 1200 mapped_all 4 \
    || problem="the user's processes did not map in 60 s: $(cat "$tmp"/user-*.out | tr '\n' ' ')"
fi
if [ -n "$problem" ]; then
  for what in "ends with the processes" "most samples taken" "names their code"; do
    tap_not_ok "$what: $problem"
  done
  exit 1
fi
sed 's/^/# user: /' "$tmp"/user-*.out
# shellcheck disable=SC2086  # one pid a word
pids=$(echo $users | tr ' ' ,)
"$EU_STACKTRACE" -p "$pids" --stats -f folded -o "$tmp/out.folded" 2> "$tmp/err" &
prof=$!
# The processes wait for SIGUSR1 (at most 60 s) before their run starts:
# none has ended before the profiler holds its events.
wait_until 1200 has_events "$prof" || echo "# the profiler holds no perf event after 60 s"
# shellcheck disable=SC2086  # one pid a word
kill -USR1 $users
# The processes end at their alarm; the profiler with them.  2 minutes
# for a run of 5 s: before, it took minutes.
end_run "$prof" - 120
prof=""
for pid in $users; do wait "$pid" 2> /dev/null; done
users=""
if [ "$status" -eq 0 ]; then
  tap_ok "the profiler ends with the processes (status 0)"
else
  tap_not_ok "the profiler ends with the processes: status $status (137: still running 2 minutes later)"
fi
grep -E 'samples read|lost|peak RSS|warning' "$tmp/err" | cut -c1-200 | sed 's/^/# /'

read_=$(sed -n 's/^samples read: *\([0-9]*\)$/\1/p' "$tmp/err")
lost=$(sed -n 's/^samples lost by the kernel: \([0-9]*\) .*/\1/p' "$tmp/err")
if [ "${read_:-0}" -gt 0 ] && [ "${lost:-0}" -lt "${read_:-0}" ]; then
  tap_ok "most samples taken: $read_ read, ${lost:-0} lost"
else
  tap_not_ok "most samples taken: ${read_:-0} read, ${lost:-0} lost"
fi

named=$(grep -c 'spin_among_mappings' "$tmp/out.folded" 2> /dev/null)
if [ "${named:-0}" -gt 0 ]; then
  tap_ok "their code is named: $named stacks in spin_among_mappings"
else
  tap_not_ok "their code is named: no stack in spin_among_mappings"
  sed 's/^/#   /' "$tmp/out.folded" 2> /dev/null | head -5
fi
tap_done
