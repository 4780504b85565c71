#!/bin/sh
# Names any user can make by the million must not grow root's profiler of
# the whole machine.  A user (nobody) renames a thread 2,000,000 times
# (prctl PR_SET_NAME: a COMM record each, a name never seen before), then
# maps a file executable 100,000 times, each under a path of 3.7 KB never
# seen before (a hard link made and removed each time: an MMAP2 record
# each), under eu-stacktrace -a, with one unwinding thread and with two
# (whose results are written later, so that a path no mapping holds any
# more is parked until they are).  Before, every name and path was kept to
# the end of the run: 10 s of renames took the profiler to 510 MB, 10 s of
# paths to 1.5 GB.  Now a thread keeps its own name, and a path goes with
# its last mapping: the peak RSS (the run's --stats, once every record read
# was handled) must stay under 64 MB, with at most half of the records
# lost by the kernel, and the run end on one SIGINT.
#
# Not in `make check': -a profiles every process on the machine, the other
# tests' too.
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
LIMIT_KB=$((64 * 1024))
NAMES="$TOP_BUILDDIR/tests/workloads/names"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-names.XXXXXX")
prof=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  [ -n "$prof" ] && kill -KILL "$prof" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tap_plan 4

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"

problem=""
[ -x "$NAMES" ] || problem="$NAMES is not built"
command -v setpriv > /dev/null 2>&1 || problem="setpriv (util-linux) is not in PATH"
# The user's directory, where it makes its paths.
mkdir "$tmp/user" && chown 65534:65534 "$tmp/user" && chmod 755 "$tmp"

for jobs in 1 2; do
  if [ -n "$problem" ]; then
    tap_not_ok "-j $jobs: the profiler stays small: $problem"
    tap_not_ok "-j $jobs: ends on one SIGINT: $problem"
    continue
  fi
  "$EU_STACKTRACE" -a -j $jobs --stats -f folded -o "$tmp/out-$jobs.folded" 2> "$tmp/err-$jobs" &
  prof=$!
  if ! wait_until 600 has_events "$prof"; then
    echo "# the profiler holds no perf event after 30 s:"; sed 's/^/#   /' "$tmp/err-$jobs" | head -20
  fi
  setpriv --reuid=65534 --regid=65534 --clear-groups "$NAMES" comm 2000000 \
    > "$tmp/names-$jobs.out" 2>&1 || problem="the renames failed: $(cat "$tmp/names-$jobs.out")"
  setpriv --reuid=65534 --regid=65534 --clear-groups "$NAMES" paths 100000 "$tmp/user" \
    >> "$tmp/names-$jobs.out" 2>&1 || problem="the paths failed: $(tail -1 "$tmp/names-$jobs.out")"
  sed 's/^/# user: /' "$tmp/names-$jobs.out"
  end_run "$prof" INT 60
  prof=""
  grep -E 'samples read|lost|peak RSS' "$tmp/err-$jobs" | sed 's/^/# /'
  # The peak once every record read was handled: the run's own --stats.
  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/err-$jobs")
  peak=$((${peak:-999999} * 1024))
  # The records must have been handled, not lost: most of the 2,100,000.
  lost=$(sed -n 's/.*the kernel lost \([0-9]*\) process records.*/\1/p' "$tmp/err-$jobs")
  if [ "${lost:-0}" -gt 1050000 ]; then
    problem="the kernel lost $lost of the 2,100,000 records: too few were handled to tell"
  fi
  if [ -z "$problem" ] && [ "$peak" -lt $LIMIT_KB ]; then
    tap_ok "-j $jobs: 2,000,000 names and 100,000 paths of a user: peak RSS $((peak / 1024)) MB, under $((LIMIT_KB / 1024)) MB"
  else
    tap_not_ok "-j $jobs: the profiler stays under $((LIMIT_KB / 1024)) MB: peak ${peak:-?} kB${problem:+: $problem}"
  fi
  if [ "$status" -eq 0 ] || [ "$status" -eq 130 ]; then
    tap_ok "-j $jobs: ends on one SIGINT (status $status)"
  else
    tap_not_ok "-j $jobs: ends on one SIGINT: status $status"
    sed 's/^/#   /' "$tmp/err-$jobs" | head -20
  fi
done
tap_done
