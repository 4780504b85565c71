#!/bin/sh
# The unwind-rule cache and libdwfl agree where a module's CFI is in
# .debug_frame only, which the module's own debug file decides:
#
#  hardlink  one program (tests/e2e/debug-frame/spin.c, no build-id, its
#            debug file beside it by debuglink) run from two paths, a hard
#            link having no debug file beside it.  The cache's rows are
#            shared by the file's identity (the same inode), the debug file
#            and its .debug_frame are found by path: at the hard link
#            libdwfl has no CFI for spin_in_main.
#  rbp0      spin_in_main, described by .debug_frame only, called by a
#            library without CFI (debug-frame/nocfi.c) with rbp 0.  libdwfl's
#            .eh_frame miss before its .debug_frame step leaves an error
#            set, and its step out of the library, failing on rbp 0, sets
#            none of its own: the sample stops with that error, which a
#            hand-off from the cache (where libdwfl steps the library's
#            frame alone) would not have.
#
# Each recording is unwound at -j 1 with --unwinder=cache and
# --unwinder=libdwfl: json, text and --stats' stop reasons must be equal,
# and the case must be there (libdwfl stops the two paths' samples
# differently; the library's stacks stop as "no module").
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

tap_plan 7
e2e_setup
src="$TOP_SRCDIR/tests/e2e/debug-frame"
CC=${CC:-cc}

problem=$(tools_problem "perf:$PERF" "python3:$PYTHON3" "cc:$CC" "objcopy:objcopy" "strip:strip")

# Code of our own without .eh_frame: -fno-asynchronous-unwind-tables with
# -g writes .debug_frame instead (the C runtime's files keep theirs).
cflags="-O1 -g -fno-asynchronous-unwind-tables -fomit-frame-pointer"
# shellcheck disable=SC2086  # cflags are words
if [ -z "$problem" ] && (
     cd "$tmp" && mkdir a b &&
     "$CC" $cflags -Wl,--build-id=none -o a/spin "$src/spin.c" &&
     objcopy --only-keep-debug a/spin a/spin.debug &&
     strip --strip-debug a/spin &&
     (cd a && objcopy --add-gnu-debuglink=spin.debug spin) &&
     ln a/spin b/spin &&
     "$CC" $cflags -shared -fPIC -nostartfiles -o libnoeh.so "$src/nocfi.c" &&
     objcopy --remove-section=.debug_frame libnoeh.so &&
     "$CC" $cflags -DWITH_NOEH -o spin-noeh "$src/spin.c" -L. -lnoeh -Wl,-rpath,"$tmp"
   ) > "$tmp/build.log" 2>&1; then
  tap_ok "built the programs (no .eh_frame of their own)"
else
  [ -n "$problem" ] || problem="the build failed"
  tap_diag_file "$tmp/build.log" 20
  tap_not_ok "built the programs: $problem"
fi

# equal NAME DATA: the two unwinders' json, text and stop reasons at -j 1;
# prints what differs, nothing when all is equal.
equal ()
{
  for f in json text; do
    for u in cache libdwfl; do
      "$EU_STACKTRACE" -j 1 --unwinder="$u" -i "$2" -f "$f" --stats -o "$tmp/$1.$u.$f" \
        2> "$tmp/$1.$u.$f.err" || echo "--unwinder=$u -f $f exited with status $?"
    done
    cmp -s "$tmp/$1.cache.$f" "$tmp/$1.libdwfl.$f" || echo "$f differs"
  done
  for u in cache libdwfl; do
    sed -n '/^unwinds by how they ended:/,/^[^ ]/p' "$tmp/$1.$u.text.err" | grep '^  ' > "$tmp/$1.$u.stops"
  done
  cmp -s "$tmp/$1.cache.stops" "$tmp/$1.libdwfl.stops" || echo "the stop reasons differ"
}

# stops NAME PYTHON-CONDITION: "stop reason count" lines of libdwfl's json
# samples whose frames (a list of symbols, innermost first) and path (the
# outermost frame's module) meet the condition.
stops ()
{
  "$PYTHON3" - "$tmp/$1.libdwfl.json" "$2" <<'EOF'
import collections, json, sys
count = collections.Counter()
for line in open(sys.argv[1]):
    s = json.loads(line)
    frames = [f.get("symbol") or "" for f in s.get("frames") or []]
    modules = [f.get("module") or "" for f in s.get("frames") or []]
    if eval(sys.argv[2]):
        count[s.get("stop")] += 1
for stop, n in sorted(count.items()):
    print(stop, n)
EOF
}

# recorded NAME COMMAND...: records COMMAND into $tmp/NAME.data and
# compares the unwinders on it (checks "perf record" and "the same
# outputs"); false, with the case's check failed too, when it could not
# record.
recorded ()
{
  name=$1
  shift
  why=$problem
  if [ -z "$why" ]; then
    run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/$name.data" -- "$@" \
      > /dev/null 2> "$tmp/record.err" || why="perf record failed"
  fi
  if [ -n "$why" ]; then
    tap_diag_file "$tmp/record.err" 10
    for c in "perf record" "the unwinders' outputs" "the case"; do
      tap_not_ok "$name: $c: $why"
    done
    return 1
  fi
  tap_ok "$name: perf record"
  d=$(equal "$name" "$tmp/$name.data")
  if [ -z "$d" ]; then
    tap_ok "$name: --unwinder=cache and libdwfl write the same json, text and stop reasons"
  else
    diff "$tmp/$name.libdwfl.json" "$tmp/$name.cache.json" | head -n 6 | sed 's/^/#   /'
    tap_not_ok "$name: the unwinders differ: $(echo "$d" | tr "\n" " ")"
  fi
}

if recorded hardlink sh -c "'$tmp/a/spin' 300000000 && '$tmp/b/spin' 300000000"; then
  a=$(stops hardlink '"spin_in_main" in frames and any("/a/spin" in m for m in modules)' | tr '\n' ' ')
  b=$(stops hardlink '"spin_in_main" in frames and any("/b/spin" in m for m in modules)' | tr '\n' ' ')
  case $a in
    *end*) if [ -n "$b" ] && [ "$a" != "$b" ]; then
             tap_ok "hardlink: libdwfl stops spin_in_main's samples by path: a/ ($a), b/ ($b)"
           else
             tap_not_ok "hardlink: the case is not there: a/ ($a), b/ (${b:-no samples})"
           fi ;;
    *) tap_not_ok "hardlink: the case is not there: a/ (${a:-no samples}) does not reach the end" ;;
  esac
fi

if recorded rbp0 "$tmp/spin-noeh" 500000000 via-library; then
  s=$(stops rbp0 'frames[-1:] == ["call_with_rbp0"] and "spin_in_main" in frames' | tr '\n' ' ')
  case $s in
    "no module "[0-9]*) tap_ok "rbp0: libdwfl stops the stacks through the library so: $s" ;;
    *) tap_not_ok "rbp0: the case is not there: stacks through the library stop: ${s:-none}" ;;
  esac
fi
tap_done
