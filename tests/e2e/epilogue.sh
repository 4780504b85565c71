#!/bin/sh
# Two places an x86 program built by clang and linked by lld (every cargo
# build) is sampled where the CFI alone does not unwind, checked against
# gdb's backtrace of the same stop (gdb reads the live process):
#  - after an epilogue's pops, at the tail call's jmp: the CFI still puts
#    the saved registers in slots now below the stack pointer, which a
#    perf sample's stack copy does not hold (1% of a Rust program's
#    samples, in core::fmt, stopped there; perf stops there too);
#  - in a PLT stub, which lld writes without CFI, the first call's lazy
#    path included (the index and link map pushed);
#  - on that lazy path, in ld.so's trampoline, whose frame is in rbx, and
#    in the first instructions of _dl_fixup, which it calls, before rbx is
#    saved: libdw 0.188's x86_64 ABI rules lose rbx there, and libdwfl
#    ended such a stack at the trampoline (dwfl-unwind.c's note_rbx).
# Both unwinders, the unwind-rule cache and --unwinder=libdwfl, each checked.
# epilogue.c is built with frame pointers, so that the caller's CFA needs
# the popped %rbp.  gdb-multiarch stops it at each such instruction
# (epilogue-gdb.py), the stops become a perf.data (tests/arch/arch-check.py
# write), and every stop must unwind to main with gdb's names and "end".
# Needs clang, lld and gdb-multiarch (tools/install-deps.sh).
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
GDB=${GDB:-gdb-multiarch}

tap_plan 9
e2e_setup
problem=$(tool_problem clang clang)
[ -z "$problem" ] && problem=$(tool_problem gdb "$GDB")
[ -z "$problem" ] && [ ! -x /usr/bin/ld.lld ] && problem="ld.lld is not installed (lld)"

if [ -z "$problem" ] &&
   clang -O2 -g -fno-omit-frame-pointer -fuse-ld=lld -o "$tmp/epilogue" \
     "$TOP_SRCDIR/tests/e2e/epilogue.c" >"$tmp/cc.log" 2>&1 &&
   EPILOGUE_OUT="$tmp/stops.jsonl" EPILOGUE_MAPS="$tmp/maps.txt" \
     "$GDB" -batch -nx -x "$TOP_SRCDIR/tests/e2e/epilogue-gdb.py" --args "$tmp/epilogue" \
     >"$tmp/gdb.log" 2>&1 &&
   "$PYTHON3" "$TOP_SRCDIR/tests/arch/arch-check.py" write --stops "$tmp/stops.jsonl" \
     --maps "$tmp/maps.txt" --arch x86_64 --abi 64 --pc-index 8 --out "$tmp/perf.data" \
     >"$tmp/write.log" 2>&1 &&
   "$EU_STACKTRACE" -i "$tmp/perf.data" -f json -o "$tmp/cache.json" 2>"$tmp/cache.err" &&
   "$EU_STACKTRACE" -i "$tmp/perf.data" -f json --unwinder=libdwfl -o "$tmp/libdwfl.json" \
     2>"$tmp/libdwfl.err" &&
   "$PYTHON3" "$TOP_SRCDIR/tests/e2e/epilogue-check.py" "$tmp/stops.jsonl" "$tmp/cache.json" \
     >"$tmp/cache.check" 2>&1 &&
   "$PYTHON3" "$TOP_SRCDIR/tests/e2e/epilogue-check.py" "$tmp/stops.jsonl" "$tmp/libdwfl.json" \
     >"$tmp/libdwfl.check" 2>&1; then
  stops=$(wc -l <"$tmp/stops.jsonl")
  tap_ok "gdb stopped the lld-linked program $stops times"
  for unwinder in cache libdwfl; do
    grep '^#' "$tmp/$unwinder.check"
    for kind in epilogue plt lazy; do
      # shellcheck disable=SC2046  # split on purpose: kind, stops, equal
      set -- $(grep "^$kind " "$tmp/$unwinder.check")
      if [ "${2:-0}" -ge 10 ] && [ "$2" = "$3" ]; then
        tap_ok "$unwinder: $kind: $3 of $2 stops unwind to main as gdb's backtrace"
      else
        tap_not_ok "$unwinder: $kind: ${3:-0} of ${2:-0} stops unwind to main as gdb's backtrace (10 or more, all)"
      fi
    done
  done
  if cmp -s "$tmp/cache.json" "$tmp/libdwfl.json"; then
    tap_ok "the unwind-rule cache and --unwinder=libdwfl wrote the same output"
  else
    tap_not_ok "the unwind-rule cache and --unwinder=libdwfl wrote different outputs"
    diff "$tmp/cache.json" "$tmp/libdwfl.json" | head -n 6 | sed 's/^/# /'
  fi
  # One frame: the look past it, from _dl_fixup's caller, the trampoline,
  # is where libdwfl lacks rbx; the stack each sample needed (--stats's
  # stack copy figures) must be libdwfl's too.
  for unwinder in cache libdwfl; do
    "$EU_STACKTRACE" -i "$tmp/perf.data" -f json --unwinder=$unwinder --max-frames 1 -s \
      -o "$tmp/one-$unwinder.json" 2>"$tmp/one-$unwinder.err"
    grep '% of samples' "$tmp/one-$unwinder.err" > "$tmp/one-$unwinder.fit"
  done
  if [ -s "$tmp/one-cache.fit" ] && cmp -s "$tmp/one-cache.fit" "$tmp/one-libdwfl.fit" \
     && cmp -s "$tmp/one-cache.json" "$tmp/one-libdwfl.json"; then
    tap_ok "--max-frames 1: the same output and stack copy figures from both unwinders"
  else
    tap_not_ok "--max-frames 1: the unwinders differ (output or stack copy figures)"
    diff "$tmp/one-cache.fit" "$tmp/one-libdwfl.fit" | sed 's/^/# /'
  fi
else
  [ -n "$problem" ] || problem="a step failed"
  for f in cc.log gdb.log write.log cache.err libdwfl.err cache.check libdwfl.check; do
    [ -s "$tmp/$f" ] && tap_diag_file "$tmp/$f" 10
  done
  tap_fill "$problem"
fi
tap_done
