#!/bin/sh
# A stack that ends in ld.so's _start (no .eh_frame row there) makes the
# unwinder ask ld.so's module for its Dwarf (.debug_frame).  ld.so is
# stripped, its symbols are in its separate debug file (libc6-dbg), whose
# sections are compressed: libdw 0.188 inflates every one of them when a
# file's Dwarf opens.  It has no .debug_frame, so the unwinder must get a
# stand-in (find-debuginfo.c), never the real file: not when the module read
# its symbols first (they are read in a Dwfl of their own,
# core/unwind/module-symbols.c), not when the Dwarf is asked for first.
#
# The recording: ld.so run as a program (`ld.so --list /bin/true`), 200
# times, so that most samples are in ld.so with _start at the bottom.  The
# count: tests/e2e/libcount-inflate.so, preloaded, counts the sections
# libelf is asked to decompress.  No section may be inflated at -j 1 or -j 2;
# with --inline (which needs the real Dwarf) some are: the count works.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

COUNTER="$TOP_BUILDDIR/tests/e2e/libcount-inflate.so"

tap_plan 4
e2e_setup

ldso=$(readelf -l /bin/true 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
problem=$(tools_problem "perf:$PERF" "eu-stacktrace:$EU_STACKTRACE" "the counter:$COUNTER")
[ -n "$problem" ] || [ -x "$ldso" ] || problem="no ELF interpreter found for /bin/true"
# The debug file is what would be inflated: without it there is nothing
# to count.
if [ -z "$problem" ]; then
  id=$(readelf -n "$ldso" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  rest=${id#??}
  debug=/usr/lib/debug/.build-id/${id%"$rest"}/$rest.debug
  if [ -z "$id" ] || [ ! -f "$debug" ] \
     || ! readelf -S -W "$debug" | grep -q ' \.debug_info .* C '; then
    problem="no compressed separate debug file for $ldso (Debian: libc6-dbg)"
  fi
fi

# 1. The recording, with samples whose stack ends in ld.so's _start.
data="$tmp/perf.data"
if [ -z "$problem" ] \
   && run_perf record -e cpu-clock -F 4999 --call-graph dwarf -o "$data" \
        -- sh -c "i=0; while [ \$i -lt 200 ]; do '$ldso' --list /bin/true > /dev/null; i=\$((i + 1)); done" \
        > "$tmp/record.out" 2> "$tmp/record.err" \
   && timeout 120 "$EU_STACKTRACE" -i "$data" -j 1 -f json -o "$tmp/out.json" 2> "$tmp/out.err" \
   && n_start=$(grep '"symbol":"_start"' "$tmp/out.json" | grep -c 'ld-linux') \
   && [ "$n_start" -gt 0 ]; then
  tap_ok "200 runs of ld.so --list: $n_start samples end in ld.so's _start"
else
  [ -n "$problem" ] || { tap_diag_file "$tmp/record.err" 10; tap_diag_file "$tmp/out.err" 10; }
  tap_not_ok "samples that end in ld.so's _start${problem:+: $problem}"
  problem=${problem:-no sample ends in the _start of ld.so}
fi

# count NAME ARGS...: the sections decompressed while eu-stacktrace ARGS
# unwound the recording ("" when the run failed).
count ()
{
  _name=$1
  shift
  rm -f "$tmp/$_name.count"
  if LD_PRELOAD="$COUNTER" INFLATE_COUNT_FILE="$tmp/$_name.count" \
       timeout 120 "$EU_STACKTRACE" -i "$data" -f folded -o /dev/null "$@" \
       2> "$tmp/$_name.err"; then
    awk '{ n += $1 } END { print n + 0 }' "$tmp/$_name.count" 2> /dev/null || echo 0
  fi
}

# 2-3. One and two unwinding threads: nothing inflated.
for jobs in 1 2; do
  n=""
  [ -n "$problem" ] || n=$(count "j$jobs" -j "$jobs")
  if [ -z "$problem" ] && [ "$n" = 0 ]; then
    tap_ok "-j $jobs: no section of ld.so's debug file inflated for its Dwarf"
  else
    [ -n "$problem" ] || tap_diag_file "$tmp/j$jobs.err" 10
    tap_not_ok "-j $jobs: no section inflated${problem:+: $problem}${n:+: $n sections were}"
  fi
done

# 4. The control: --inline needs the real Dwarf, and inflates.
n=""
[ -n "$problem" ] || n=$(count inline -j 1 --inline)
if [ -z "$problem" ] && [ -n "$n" ] && [ "$n" -gt 0 ]; then
  tap_ok "control: with --inline, $n sections are inflated (the count sees them)"
else
  [ -n "$problem" ] || tap_diag_file "$tmp/inline.err" 10
  tap_not_ok "control: with --inline, sections are inflated${problem:+: $problem}${n:+: $n}"
fi
