#!/bin/sh
# The unwind-rule cache changes nothing but speed: every e2e workload's
# recording (deep, shlib, threads, forkexec, manyproc through a pipe, cxx,
# deep again with 2 KiB stack copies so that unwinds run out of the copy)
# is unwound with --unwinder=cache and --unwinder=libdwfl, and the text,
# json and folded outputs (and json with --max-frames 7, so that unwinds
# stop at the limit) must be byte-identical, and so must --stats' stop
# reasons; the same for the sanitizer build's json.  On the plain deep
# recording the cache must step most frames (else this compares libdwfl
# with itself).  A recording of /bin/true run again and again (loading)
# has most of its stacks end at ld.so's _start, which has no CFI: the
# cache must end those itself, with libdwfl stepping fewer frames than
# there are such stacks (where ld.so's debug file is installed: without
# it libdwfl's Dwarf does not open, and libdwfl steps there).
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

# name|perf record options|command
recordings="deep|--call-graph dwarf|$WORKLOADS/deep 1000
shlib|--call-graph dwarf|$WORKLOADS/shlib 1000
threads|--call-graph dwarf|$WORKLOADS/threads 300
forkexec|--call-graph dwarf|$WORKLOADS/forkexec 400 $WORKLOADS/deep
manyproc|--call-graph dwarf|$WORKLOADS/manyproc 40 8 $WORKLOADS/deep
cxx|--call-graph dwarf|$WORKLOADS/cxx 2500
deep-256|--call-graph dwarf,256|$WORKLOADS/deep 800
loading|--call-graph dwarf|/bin/sh $TOP_SRCDIR/tests/workloads/exec-loop.sh 300"

n_rec=$(printf '%s\n' "$recordings" | wc -l)
# per recording: record, outputs equal, stop reasons equal, sanitizer;
# and the cache's share on deep and on loading.
tap_plan $((n_rec * 4 + 2))
e2e_setup

problem=$(tools_problem "perf:$PERF" "eu-stacktrace:$EU_STACKTRACE" "eu-stacktrace-asan:$EU_STACKTRACE_ASAN")

# unwind TOOL DATA OUT UNWINDER ARGS...: one run, its stderr in OUT.err.
unwind ()
{
  _tool=$1 _data=$2 _out=$3 _unw=$4
  shift 4
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout 600 "$_tool" --unwinder="$_unw" -i "$_data" -o "$_out" "$@" 2> "$_out.err"
}

deep_share=""
printf '%s\n' "$recordings" > "$tmp/list"
while IFS='|' read -r name opts cmd; do
  dir="$tmp/$name"
  mkdir "$dir"
  data="$dir/perf.data"
  why=$problem
  # opts and cmd are words on purpose (paths without blanks).
  # shellcheck disable=SC2086,SC2090
  if [ -z "$why" ]; then
    set -- $cmd
    [ -x "$1" ] || why="workload $1 is not built (make check builds it)"
  fi
  if [ -z "$why" ]; then
    out=/dev/null
    [ "$name" = manyproc ] && out=$data
    # shellcheck disable=SC2086,SC2090
    if [ "$name" = manyproc ]; then
      run_perf record -e cpu-clock -F 999 $opts -o - -- $cmd > "$out" 2> "$dir/record.err" ||
        why="perf record failed"
    else
      run_perf record -e cpu-clock -F 999 $opts -o "$data" -- $cmd > "$out" 2> "$dir/record.err" ||
        why="perf record failed"
    fi
    [ -n "$why" ] || [ -s "$data" ] || why="perf record wrote nothing"
  fi
  if [ -z "$why" ]; then
    tap_ok "$name: perf record $opts"
  else
    tap_diag_file "$dir/record.err" 20
    tap_not_ok "$name: perf record $opts: $why"
  fi

  # Outputs, byte for byte.
  diff=""
  if [ -z "$why" ]; then
    for run in "text|-f text --stats" "json|-f json" "folded|-f folded" \
               "json-limit|-f json --max-frames 7"; do
      label=${run%%|*}
      # shellcheck disable=SC2086
      for u in cache libdwfl; do
        unwind "$EU_STACKTRACE" "$data" "$dir/$u.$label" "$u" ${run#*|} ||
          diff="$diff${diff:+, }$label: --unwinder=$u exited with status $?"
      done
      if [ ! -s "$dir/cache.$label" ]; then
        diff="$diff${diff:+, }$label: no output"
      elif ! cmp -s "$dir/cache.$label" "$dir/libdwfl.$label"; then
        diff="$diff${diff:+, }$label differs"
        diff -u "$dir/libdwfl.$label" "$dir/cache.$label" | head -n 20 | sed 's/^/#   /'
      fi
    done
  fi
  if [ -z "$why" ] && [ -z "$diff" ]; then
    tap_ok "$name: --unwinder=cache and libdwfl write the same text, json, folded, json at 7 frames"
  else
    tap_not_ok "$name: --unwinder=cache and libdwfl write the same outputs: ${why:-$diff}"
  fi

  # Stop reasons (the --stats lines indented under "unwinds by how they ended").
  if [ -z "$why" ]; then
    for u in cache libdwfl; do
      sed -n '/^unwinds by how they ended:/,/^[^ ]/p' "$dir/$u.text.err" | grep '^  ' > "$dir/$u.stops"
    done
    if [ -s "$dir/cache.stops" ] && cmp -s "$dir/cache.stops" "$dir/libdwfl.stops"; then
      tap_ok "$name: the same stop reasons ($(tr -s ' \n' ' ' < "$dir/cache.stops"))"
    else
      diff "$dir/libdwfl.stops" "$dir/cache.stops" | sed 's/^/#   /'
      tap_not_ok "$name: the same stop reasons"
    fi
    if [ "$name" = deep ]; then
      deep_share=$(sed -n 's/^frames stepped: *\([0-9.]*\)% by the unwind-rule cache.*/\1/p' \
                     "$dir/cache.text.err")
    fi
    if [ "$name" = loading ]; then
      loading_dir=$dir
      # The cache stops at ld.so's _start when ld.so's Dwarf opens (its
      # debug file, libc6-dbg); without it libdwfl steps there, rightly.
      ld_debug=$("$EU_STACKTRACE" --debug -i "$data" -o /dev/null 2>&1 |
                 grep -c '/ld-[^:]*: debug file found')
    fi
  else
    tap_not_ok "$name: the same stop reasons: not run ($why)"
  fi

  # The sanitizer build, both unwinders: clean, and the plain build's json.
  if [ -z "$why" ]; then
    asan=""
    for u in cache libdwfl; do
      unwind "$EU_STACKTRACE_ASAN" "$data" "$dir/asan-$u.json" "$u" -f json ||
        asan="$asan${asan:+, }--unwinder=$u exited with status $?"
      if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' \
           "$dir/asan-$u.json.err"; then
        asan="$asan${asan:+, }--unwinder=$u: sanitizer report"
        grep -A 20 -m 1 -e 'ERROR: ' -e 'runtime error:' "$dir/asan-$u.json.err" | sed 's/^/#   /'
      elif ! cmp -s "$dir/asan-$u.json" "$dir/libdwfl.json"; then
        asan="$asan${asan:+, }--unwinder=$u: json differs from the plain build's libdwfl"
      fi
    done
    if [ -z "$asan" ]; then
      tap_ok "$name: the sanitizer build, both unwinders, runs clean with the same json"
    else
      tap_not_ok "$name: the sanitizer build, both unwinders: $asan"
    fi
  else
    tap_not_ok "$name: the sanitizer build: not run ($why)"
  fi
  rm -f "$data"
done < "$tmp/list"

if [ -n "$deep_share" ] && awk -v s="$deep_share" 'BEGIN { exit !(s >= 90) }'; then
  tap_ok "deep: the unwind-rule cache stepped $deep_share% of the frames"
else
  tap_not_ok "deep: the unwind-rule cache stepped ${deep_share:-no}% of the frames, not 90% or more"
fi

# loading: the stacks that end at ld.so's _start (json, the plain build's,
# by --unwinder=cache), against the frames libdwfl stepped (--stats' share
# of the user frames).  Before the cache ended them, each cost libdwfl a
# frame at least, and libdwfl the opening of ld.so's Dwarf in each process.
at_start=""
by_libdwfl=""
if [ -n "${loading_dir:-}" ]; then
  at_start=$("$PYTHON3" -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    frames = json.loads(line).get("frames") or []
    if frames and frames[-1].get("symbol") == "_start" and "/ld-" in frames[-1].get("module", ""):
        n += 1
print(n)' "$loading_dir/cache.json")
  by_libdwfl=$(awk '/^user frames:/ { n = $3 }
                    /^frames stepped:/ { sub(/%/, "", $8); printf "%d\n", n * $8 / 100 + 0.5 }' \
                 "$loading_dir/cache.text.err")
fi
if [ -n "${loading_dir:-}" ] && [ "${ld_debug:-0}" = 0 ]; then
  tap_skip "loading: the cache stops at ld.so's _start" \
    "ld.so's debug file is not installed (libc6-dbg): its Dwarf does not open, and libdwfl steps there"
elif [ -n "$at_start" ] && [ -n "$by_libdwfl" ] && [ "$at_start" -ge 50 ] \
   && [ "$by_libdwfl" -lt "$at_start" ]; then
  tap_ok "loading: $at_start stacks end at ld.so's _start, libdwfl stepped $by_libdwfl frames"
else
  tap_not_ok "loading: ${at_start:-no} stacks end at ld.so's _start (50 or more wanted), libdwfl stepped ${by_libdwfl:-?} frames (fewer wanted)"
fi
tap_done
