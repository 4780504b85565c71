#!/bin/sh
# A debug file someone else may write is read from a copy
# (basic/frozen-copy.h): libdwfl begins its own Elf of the descriptor it is
# served, after our checks, so the owner could rewrite what was checked;
# the sealed copy cannot be written.  The unit test test-debug-file races
# the rewrite; this test shows the copy is what the unwinder and the
# symbolizer really use.
#
# One recording of tests/e2e/debug-frame/spin.c, built without .eh_frame
# and stripped of every symbol: its CFI (.debug_frame) and its symbols are
# in the debug file beside it (by .gnu_debuglink, accepted by build-id).
# Unwound with the debug file root's and 0644 (served as it is), then
# nobody's, then root's and writable by others (both served as a copy, said
# with -vv): the three outputs are byte for byte the same and name
# spin_in_main.  Past the copy bound (the file made sparse to 600 MB, still
# nobody's), it is not read: --stats lists it, spin_in_main is not named.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

tap_plan 12
e2e_setup
src="$TOP_SRCDIR/tests/e2e/debug-frame"
CC=${CC:-cc}
problem=$(tools_problem "perf:$PERF" "cc:$CC" "objcopy:objcopy" "strip:strip" "prlimit:prlimit")

cflags="-O1 -g -fno-asynchronous-unwind-tables -fomit-frame-pointer"
# shellcheck disable=SC2086  # cflags are words
if [ -z "$problem" ] && (
     cd "$tmp" &&
     "$CC" $cflags -Wl,--build-id -o spin "$src/spin.c" &&
     objcopy --only-keep-debug spin spin.debug &&
     strip --strip-all spin &&
     objcopy --add-gnu-debuglink=spin.debug spin &&
     chmod 0644 spin.debug && cp -p spin.debug spin.debug.orig &&
     run_perf record -e cpu-clock -F 999 --call-graph dwarf -o rec.data -- ./spin 300000000
   ) > "$tmp/build.log" 2>&1; then
  tap_ok "built and recorded the program (its CFI and symbols in its debug file)"
else
  [ -n "$problem" ] || problem="the build or perf record failed"
  tap_diag_file "$tmp/build.log" 20
  tap_not_ok "built and recorded the program: $problem"
fi

# unwind NAME: folded stacks of the recording in $tmp/NAME.out, -vv and
# --stats in $tmp/NAME.err.
unwind ()
{
  "$EU_STACKTRACE" -j 1 -vv --stats -i "$tmp/rec.data" -f folded -o "$tmp/$1.out" \
    2> "$tmp/$1.err" || echo "exited with status $?"
}

if [ -n "$problem" ]; then
  for c in "root's" "nobody's" "writable by others" "compressed" "inflated once" "past the copy bound" "RLIMIT_FSIZE" "budget" "subordinate uids" "live" "asan"; do
    tap_not_ok "$c: $problem"
  done
  tap_done
fi

copied="spin.debug: others may write it"
r=$(unwind root)
if [ -z "$r" ] && grep -q spin_in_main "$tmp/root.out" && ! grep -q "$copied" "$tmp/root.err"; then
  tap_ok "root's: served as it is, spin_in_main named"
else
  tap_diag_file "$tmp/root.err" 10
  tap_not_ok "root's: $r (spin_in_main named: $(grep -c spin_in_main "$tmp/root.out"), copied: $(grep -c "$copied" "$tmp/root.err"))"
fi

# same NAME WHAT: the case's output is root's, and -vv says the copy.
same ()
{
  r=$(unwind "$1")
  if [ -z "$r" ] && cmp -s "$tmp/root.out" "$tmp/$1.out" && grep -q "$copied.*libdwfl reads a copy" "$tmp/$1.err"; then
    tap_ok "$2: read from a copy, the output is the same as root's"
  else
    tap_diag_file "$tmp/$1.err" 10
    diff "$tmp/root.out" "$tmp/$1.out" | head -n 6 | sed 's/^/#   /'
    tap_not_ok "$2: $r (copy said: $(grep -c "$copied" "$tmp/$1.err"))"
  fi
}

chown 65534 "$tmp/spin.debug"
same nobody "nobody's"
chown 0 "$tmp/spin.debug" && chmod 0666 "$tmp/spin.debug"
same writable "writable by others"

# Compressed debug sections (Fedora's): the copy is inflated once, that
# inflated copy charged to the copies' budget too, and the output the same.
objcopy --compress-debug-sections=zlib "$tmp/spin.debug.orig" "$tmp/spin.debug" \
  && chown 65534 "$tmp/spin.debug"
same compressed "compressed, nobody's"
if grep -q "debug file .*spin.debug inflated once" "$tmp/compressed.err"; then
  tap_ok "compressed, nobody's: the copy inflated once for all processes"
else
  tap_not_ok "compressed, nobody's: the copy was not inflated once"
fi

cp "$tmp/spin.debug.orig" "$tmp/spin.debug"
chown 65534 "$tmp/spin.debug" && chmod 0644 "$tmp/spin.debug" && truncate -s 600M "$tmp/spin.debug"
r=$(unwind large)
if [ -z "$r" ] && ! grep -q spin_in_main "$tmp/large.out" \
   && grep -q "spin.debug.*debug file not read.*read from a copy of at most 268435456" "$tmp/large.err"; then
  tap_ok "past the copy bound: not read, and said"
else
  tap_diag_file "$tmp/large.err" 10
  tap_not_ok "past the copy bound: $r (spin_in_main named: $(grep -c spin_in_main "$tmp/large.out"))"
fi

# A copy is a write: past RLIMIT_FSIZE it fails with EFBIG, and the file
# is not read; the signal (SIGXFSZ) no longer ends the run (the build
# before died with status 153, no output written).
cp "$tmp/spin.debug.orig" "$tmp/spin.debug" && chown 65534 "$tmp/spin.debug"
status=0
prlimit --fsize=4096 "$EU_STACKTRACE" -j 1 --stats -i "$tmp/rec.data" -f folded -o "$tmp/fsize.out" \
  2> "$tmp/fsize.err" || status=$?
if [ "$status" -eq 0 ] && grep -q "spin.debug (debug file not read): .*: File too large" "$tmp/fsize.err" \
   && grep -q '^spin;' "$tmp/fsize.out"; then
  tap_ok "RLIMIT_FSIZE below the copy: the run ends well, the file refused and said"
else
  tap_diag_file "$tmp/fsize.err" 10
  tap_not_ok "RLIMIT_FSIZE below the copy: status $status (153: killed by SIGXFSZ)"
fi

# The copies held at once stay within their budget (1 GiB), and one
# owner's within their share of it (a quarter): eight programs (one code,
# eight build-ids, run one after another) whose debug files are made
# sparse to 250 MiB (each a copy of 250 MiB, holes counted: they cost the
# copy's pages once mapped).  The first four's are nobody's: the first is
# copied, the next three refused for nobody's share.  The last four's are
# four other users': three copied, the last refused for the budget.  Each
# refusal is said, and every one of the eight processes unwound.  (The
# first version of the copy made all eight: 2 GB of memory; the second
# gave one user the whole budget, four of nobody's files, and refused
# every other user's.)
budget_problem=
# shellcheck disable=SC2086  # cflags are words
(
  cd "$tmp" && mkdir budget && cd budget || exit 1
  for i in 1 2 3 4 5 6 7 8; do
    owner=65534
    [ "$i" -gt 4 ] && owner=$((996 + i))
    "$CC" $cflags -Wl,--build-id=0x5eed0000000000000000000000000000000000$i$i -o spin$i "$src/spin.c" &&
    objcopy --only-keep-debug spin$i spin$i.debug && strip --strip-all spin$i &&
    objcopy --add-gnu-debuglink=spin$i.debug spin$i && chown $owner spin$i.debug &&
    truncate -s 250M spin$i.debug || exit 1
  done
  # shellcheck disable=SC2016  # $i is the inner shell's
  run_perf record -e cpu-clock -F 999 --call-graph dwarf -o rec.data -- \
    sh -c 'for i in 1 2 3 4 5 6 7 8; do ./spin$i 100000000; done'
) > "$tmp/budget.log" 2>&1 || budget_problem="the build or perf record failed"
if [ -z "$budget_problem" ]; then
  "$EU_STACKTRACE" -j 1 -vv --stats -i "$tmp/budget/rec.data" -f folded -o "$tmp/budget.out" \
    2> "$tmp/budget.err" || budget_problem="exited with status $?"
fi
# The programs whose debug files a line of the log names, sorted, on one line.
named () {
  grep "$1" "$tmp/budget.err" | sed -n 's/.*budget\/\(spin[1-8]\)\.debug.*/\1/p' | sort -u | tr '\n' ' '
}
copied_ones=$(named ': others may write it: libdwfl reads a copy')
share_ones=$(named "(debug file not read): .*the copies of uid 65534's files take")
budget_ones=$(named '(debug file not read): .*the copies held take')
processes=$(sed 's/;.*//' "$tmp/budget.out" | sort -u | grep -c '^spin[1-8]$')
if [ -z "$budget_problem" ] && [ "$copied_ones" = "spin1 spin5 spin6 spin7 " ] \
   && [ "$share_ones" = "spin2 spin3 spin4 " ] && [ "$budget_ones" = "spin8 " ] \
   && [ "$processes" -eq 8 ]; then
  tap_ok "budget: of 8 debug files of 250 MiB, one of nobody's 4 copied (its share), 3 others' copied, the 8th refused for the 1 GiB budget, 8 processes unwound"
else
  tap_diag_file "$tmp/budget.log" 10
  tap_diag_file "$tmp/budget.err" 30
  tap_not_ok "budget: ${budget_problem:-copied: $copied_ones; refused for the share: $share_ones; for the budget: $budget_ones; $processes processes}"
fi

# A rootless user's container files belong to the user's subordinate uids:
# they count as the user's for the share (/etc/subuid, here a file of the
# test's bind-mounted over it in a mount namespace of its own, gives nobody
# the uids from 300000).  Two programs whose 150 MiB debug files are owned
# by 300000 and 300001: the first copied, the second refused for nobody's
# share, and the refusal names nobody's uid (not the block of 65,536 uids a
# uid in no range counts as, which would refuse it too).
subid_problem=
# shellcheck disable=SC2086  # cflags are words
(
  cd "$tmp" && mkdir subid && cd subid || exit 1
  for i in 1 2; do
    "$CC" $cflags -Wl,--build-id=0x5eed00000000000000000000000000000000aa$i$i -o sub$i "$src/spin.c" &&
    objcopy --only-keep-debug sub$i sub$i.debug && strip --strip-all sub$i &&
    objcopy --add-gnu-debuglink=sub$i.debug sub$i && chown $((299999 + i)) sub$i.debug &&
    truncate -s 150M sub$i.debug || exit 1
  done
  echo "nobody:300000:65536" > subuid
  # shellcheck disable=SC2016  # $i is the inner shell's
  run_perf record -e cpu-clock -F 999 --call-graph dwarf -o rec.data -- \
    sh -c 'for i in 1 2; do ./sub$i 100000000; done'
) > "$tmp/subid.log" 2>&1 || subid_problem="the build or perf record failed"
if [ -z "$subid_problem" ]; then
  # shellcheck disable=SC2016  # $1 and $@ are the inner shell's
  unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1/subid/subuid" /etc/subuid && shift && exec "$@"' \
    sh "$tmp" "$EU_STACKTRACE" -j 1 -vv --stats -i "$tmp/subid/rec.data" -f folded \
    -o "$tmp/subid.out" 2> "$tmp/subid.err" || subid_problem="exited with status $?"
fi
sub_copied=$(grep -c 'subid/sub1.debug: others may write it: libdwfl reads a copy' "$tmp/subid.err")
sub_refused=$(grep -c "subid/sub2.debug (debug file not read): .*the copies of uid 65534's files take" "$tmp/subid.err")
if [ -z "$subid_problem" ] && [ "$sub_copied" -ge 1 ] && [ "$sub_refused" -ge 1 ] \
   && ! grep -q 'subid/sub2.debug: others may write it' "$tmp/subid.err"; then
  tap_ok "subordinate uids: two debug files of nobody's subordinate uids are nobody's, one copied and one refused for nobody's share"
else
  tap_diag_file "$tmp/subid.log" 10
  tap_diag_file "$tmp/subid.err" 30
  tap_not_ok "subordinate uids: ${subid_problem:-sub1 copied $sub_copied times, sub2 refused for the share of uid 65534 $sub_refused times}"
fi

# Live, a copy is charged to the user of the process that maps the
# module, not to the file's owner: nobody's process runs the program, whose
# debug file is uid 1234's.  (A user could otherwise make a program whose
# debug file is another user's, and spend that user's share.)
live_problem=
if mkdir "$tmp/live" && cp "$tmp/spin" "$tmp/spin.debug.orig" "$tmp/live/" \
   && mv "$tmp/live/spin.debug.orig" "$tmp/live/spin.debug" && chown 1234 "$tmp/live/spin.debug" \
   && chmod 755 "$tmp" "$tmp/live"; then
  # 3 s: the run unwinds (and copies) at its first read of the rings,
  # within a second, while the process runs; gone by then, its copy would
  # be charged to the processes gone.  SCHED_FIFO, reset on fork, as the
  # live tests run the profiler: the tests beside it do not delay that read.
  chrt -f -R 1 "$EU_STACKTRACE" -j 1 -vv -f folded -o "$tmp/live.out" -- \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/live/spin" 3000000000 \
    2> "$tmp/live.err" || live_problem="exited with status $?"
else
  live_problem="cannot set up $tmp/live"
fi
if [ -z "$live_problem" ] \
   && grep -q "live/spin.debug: others may write it: libdwfl reads a copy, counted with uid 65534's files" "$tmp/live.err" \
   && grep -q spin_in_main "$tmp/live.out"; then
  tap_ok "live: the copy of uid 1234's debug file is counted with uid 65534's files, whose process maps the program"
else
  tap_diag_file "$tmp/live.err" 20
  tap_not_ok "live: ${live_problem:-the copy is not counted with the process user, or spin_in_main is not named}"
fi

# The sanitizer build reads the same copy, and writes the same output.
cp "$tmp/spin.debug.orig" "$tmp/spin.debug" && chown 65534 "$tmp/spin.debug"
if "$EU_STACKTRACE_ASAN" -j 1 -vv -i "$tmp/rec.data" -f folded -o "$tmp/asan.out" 2> "$tmp/asan.err" \
   && cmp -s "$tmp/root.out" "$tmp/asan.out" && grep -q "$copied.*libdwfl reads a copy" "$tmp/asan.err"; then
  tap_ok "asan: read from a copy, the output is the same as root's"
else
  tap_diag_file "$tmp/asan.err" 10
  tap_not_ok "asan: not the same output, or no copy said"
fi
tap_done
