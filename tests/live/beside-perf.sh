#!/bin/sh
# A live eu-stacktrace must not break the other profilers on the machine.
# Mapping records with build-ids (attr.build_id) made the kernel leave
# PERF_RECORD_MISC_MMAP_BUILD_ID set in the MMAP2 records it then wrote to
# every other event (maj/min/ino read as a build-id): each perf record run
# beside `eu-stacktrace -a' aborted ("assertion failed at
# util/build-id.c:1010", "stack smashing detected"), 3 runs of 3.  Here
# perf records a command while eu-stacktrace -a runs, synchronized by
# FIFOs (the live run's command says it has started, and waits until perf
# is done); perf is run once, not through run_perf, whose reruns would hide
# the crash.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PERF:=perf}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-beside.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 4
[ "$(id -u)" -eq 0 ] || tap_skip_all "eu-stacktrace -a needs root"

mkfifo "$tmp/started" "$tmp/done"
# shellcheck disable=SC2016  # expanded by the command's sh, not here
"$EU_STACKTRACE" -a -f folded -o "$tmp/live.folded" -- \
  sh -c 'echo started > "$1"; read -r x < "$2"' sh "$tmp/started" "$tmp/done" \
  2> "$tmp/live.err" &
live=$!
# Blocks until the command runs: its events (and -a's) are open by then.
read -r line < "$tmp/started"
[ "$line" = started ]; tap_result $? "eu-stacktrace -a runs (its command started)" "$tmp/live.err"

mkdir "$tmp/home"
HOME="$tmp/home" "$PERF" record -q -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/perf.data" \
  -- sh -c 'ls / > /dev/null; cat /dev/null' > "$tmp/perf.out" 2>&1
rc=$?
echo finished > "$tmp/done"
if [ "$rc" -eq 0 ] && ! grep -q 'assertion failed\|stack smashing' "$tmp/perf.out"; then
  tap_ok "perf record beside eu-stacktrace -a: exit 0, no assertion"
else
  tap_not_ok "perf record beside eu-stacktrace -a: exit $rc"
  tap_diag_file "$tmp/perf.out" 12
fi

# Every file mapping perf recorded names its device and inode (perf report
# -D prints "maj:min ino ino_generation" for those), none a build-id.
HOME="$tmp/home" "$PERF" report -D -i "$tmp/perf.data" 2> /dev/null | grep 'PERF_RECORD_MMAP2' \
  | grep ' /' > "$tmp/mmap2" || true
n=$(wc -l < "$tmp/mmap2")
bad=$(grep -cv ' [0-9a-f][0-9a-f]*:[0-9a-f][0-9a-f]* [0-9][0-9]* [0-9][0-9]*\]' "$tmp/mmap2")
if [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]; then
  tap_ok "perf's $n file mappings carry their device and inode, none a build-id claim"
else
  tap_not_ok "perf's file mappings: $bad of $n without device and inode"
  head -n 5 "$tmp/mmap2" | sed 's/^/#   /'
fi

wait "$live"; rc=$?
[ "$rc" -eq 0 ] && [ -s "$tmp/live.folded" ]
tap_result $? "eu-stacktrace -a ends with its command and writes its stacks (exit $rc)" "$tmp/live.err"
tap_done
