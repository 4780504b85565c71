#!/bin/sh
# What an ELF file a user crafts can make root's profiler allocate.  A
# process of a user (nobody) maps executable a file of a few KB on disk
# whose header counts 20 million sections, or 20 million program headers
# (the extended numbering; the tables are sparse zeros), and spins; root
# profiles it (-p) until it ends.  libelf believes the header: before the
# check (basic/elf-begin.h) the profiler took 6.4 GB for the sections and
# 1.07 GB for the program headers, and lost 97% and 47% of the samples.
# Now, for each:
#  - the peak RSS (the run's --stats) stays under 64 MB;
#  - --stats says why the file was not read ("its ELF header counts");
#  - the process's own code is still named, and the run ends with status 0.
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
LIMIT_KB=$((64 * 1024))
NAMES="$TOP_BUILDDIR/tests/workloads/names"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-crafted-elf.XXXXXX")
prof=""
user=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  [ -n "$prof" ] && kill -KILL "$prof" 2> /dev/null
  [ -n "$user" ] && kill -KILL "$user" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
[ "$(id -u)" -eq 0 ] || tap_skip_all "the user's process is made with setpriv: root only"
tap_plan 4

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"

# mapped FILE: the user's process has mapped its file.
# shellcheck disable=SC2317  # called by name through wait_until
mapped () { grep -q ' maps ' "$1" 2> /dev/null; }

problem=""
[ -x "$NAMES" ] || problem="$NAMES is not built"
command -v setpriv > /dev/null 2>&1 || problem="setpriv (util-linux) is not in PATH"
# The user's folder, where it writes its file.
chmod 755 "$tmp" && mkdir "$tmp/user" && chmod 777 "$tmp/user" || problem="cannot make $tmp/user"

for kind in sections phdrs; do
  if [ -n "$problem" ]; then
    for what in "stays small, says why" "names its code, ends"; do
      tap_not_ok "$kind: $what: $problem"
    done
    continue
  fi
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$NAMES" elf "$tmp/user" $kind 4 > "$tmp/user-$kind.out" 2>&1 &
  user=$!
  if ! wait_until 1200 mapped "$tmp/user-$kind.out"; then
    for what in "stays small, says why" "names its code, ends"; do
      tap_not_ok "$kind: $what: the user's process did not map its file: $(cat "$tmp/user-$kind.out")"
    done
    kill -KILL "$user" 2> /dev/null
    user=""
    continue
  fi
  sed 's/^/# user: /' "$tmp/user-$kind.out"
  "$EU_STACKTRACE" -p "$user" --stats -f folded -o "$tmp/out-$kind.folded" 2> "$tmp/err-$kind" &
  prof=$!
  # The process waits for SIGUSR1 (at most 60 s) before its run starts: it
  # has not ended before the profiler holds its events.
  wait_until 1200 has_events "$prof" || echo "# the profiler holds no perf event after 60 s"
  kill -USR1 "$user"
  # It ends with the process, at its alarm (4 s).
  end_run "$prof" - 120
  prof=""
  wait "$user" 2> /dev/null
  user=""
  grep -E 'samples read|lost|peak RSS|counts' "$tmp/err-$kind" | cut -c1-240 | sed 's/^/# /'

  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/err-$kind")
  peak=$((${peak:-999999} * 1024))
  why=$(grep -c "crafted-.*its ELF header counts" "$tmp/err-$kind")
  if [ "$peak" -lt $LIMIT_KB ] && [ "$why" -gt 0 ]; then
    tap_ok "$kind: 20 million in the header: peak RSS $((peak / 1024)) MB, under $((LIMIT_KB / 1024)) MB; --stats says why the file was not read"
  else
    tap_not_ok "$kind: under $((LIMIT_KB / 1024)) MB and --stats says why: peak ${peak} kB, $why lines saying its header counts"
  fi

  named=$(grep -c 'spin_among_mappings' "$tmp/out-$kind.folded" 2> /dev/null)
  if [ "${named:-0}" -gt 0 ] && [ "$status" -eq 0 ]; then
    tap_ok "$kind: its code is still named ($named stacks in spin_among_mappings); status 0"
  else
    tap_not_ok "$kind: its code named and status 0: ${named:-0} stacks in spin_among_mappings, status $status"
    sed 's/^/#   /' "$tmp/err-$kind" | head -20
  fi
done
# The sparse files are the user's, in the test's folder: removed with it.
tap_done
