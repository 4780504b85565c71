#!/bin/sh
# The unwind-rule cache and libdwfl agree where a frame's CFI keeps a
# register in rbx and libdwfl has lost rbx (libdw 0.188's x86_64 ABI rules
# name rax where they mean rbx: a frame that never touched rbx, here leaf,
# leaves it undefined in its caller).  The cache keeps rbx by the ABI, for
# the rbx-based CFA of glibc's lazy-binding trampoline (tests/e2e/epilogue.sh
# checks that against gdb), and must not use it where libdwfl cannot:
#
#  rip     mid's return address is in rbx (tests/e2e/rbx/rbx-rip.s);
#  rbp     the caller's rbp is in rbx, and main's CFA is rbp-based
#          (tests/e2e/rbx/rbx-rbp.s, main built with a frame pointer);
#  unread  mid's CFA is rbx-based, and spin, two frames in, saved rbx
#          below the stack pointer, out of the stack copy: rbx is lost
#          for want of that word, and the rbx of the frames below is not
#          mid's (tests/e2e/rbx/rbx-unread.s).
#
# Each recording is unwound with --unwinder=cache and --unwinder=libdwfl:
# json, text, --stats' stop reasons and stack copy figures must be equal,
# at -j 1 and at --max-frames 1 to 4; and the case must be there (libdwfl
# ends the stacks in the innermost function at mid, or at main, for the
# want of rbx).
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

tap_plan 10
e2e_setup
src="$TOP_SRCDIR/tests/e2e/rbx"
CC=${CC:-cc}

problem=$(tools_problem "perf:$PERF" "python3:$PYTHON3" "cc:$CC")
[ "$(uname -m)" = x86_64 ] || problem="${problem:+$problem; }rbx is x86_64's (this is $(uname -m))"

if [ -z "$problem" ] && (
     "$CC" -O2 -g -o "$tmp/rip" "$src/main.c" "$src/rbx-rip.s" &&
     "$CC" -O0 -g -fno-omit-frame-pointer -o "$tmp/rbp" "$src/main.c" "$src/rbx-rbp.s" &&
     "$CC" -O2 -g -o "$tmp/unread" "$src/main.c" "$src/rbx-unread.s"
   ) > "$tmp/build.log" 2>&1; then
  tap_ok "built the programs"
else
  [ -n "$problem" ] || problem="the build failed"
  tap_diag_file "$tmp/build.log" 20
  tap_not_ok "built the programs: $problem"
fi

# differences NAME: what differs between the two unwinders on
# $tmp/NAME.data, one word each; nothing when all is equal.
differences ()
{
  for limit in 256 1 2 3 4; do
    for u in cache libdwfl; do
      for f in json text; do
        "$EU_STACKTRACE" -j 1 --unwinder="$u" --max-frames $limit -s -i "$tmp/$1.data" -f $f \
          -o "$tmp/$1.$u.$limit.$f" 2> "$tmp/$1.$u.$limit.$f.err" || echo "exit-status-$u-$f"
      done
      err=$tmp/$1.$u.$limit.text.err
      { sed -n '/^unwinds by how they ended:/,/^[^ ]/p' "$err" | grep '^  '
        grep '% of samples' "$err"; } > "$tmp/$1.$u.$limit.stats"
    done
    for f in json text stats; do
      cmp -s "$tmp/$1.cache.$limit.$f" "$tmp/$1.libdwfl.$limit.$f" || echo "$f-at-$limit-frames"
    done
  done
}

# case_of NAME LEAF CALLER: records $tmp/NAME, compares the unwinders on
# it, and checks libdwfl's stacks in LEAF end at CALLER.
case_of ()
{
  name=$1 leaf=$2 caller=$3
  why=$problem
  if [ -z "$why" ]; then
    run_perf record -e cpu-clock -F 999 --call-graph dwarf,4096 -o "$tmp/$name.data" \
      -- "$tmp/$name" 1000000000 > /dev/null 2> "$tmp/$name.record.err" || why="perf record failed"
  fi
  if [ -n "$why" ]; then
    tap_diag_file "$tmp/$name.record.err" 10
    for c in "perf record" "the unwinders' outputs" "the case"; do
      tap_not_ok "$name: $c: $why"
    done
    return
  fi
  tap_ok "$name: perf record"
  d=$(differences "$name")
  if [ -z "$d" ]; then
    tap_ok "$name: --unwinder=cache and libdwfl write the same json, text, stop reasons and stack copy figures (all frames, and 1 to 4)"
  else
    tap_not_ok "$name: the unwinders differ: $(echo "$d" | tr '\n' ' ')"
  fi
  ends=$("$PYTHON3" - "$tmp/$name.libdwfl.256.json" "$leaf" <<'PY'
import collections, json, sys
count = collections.Counter()
for line in open(sys.argv[1]):
    s = json.loads(line)
    frames = [f.get("symbol") or "" for f in s.get("frames") or []]
    if frames[:1] == [sys.argv[2]]:
        count[(frames[-1], s.get("stop"))] += 1
print(" ".join("%s:%s:%d" % (f, stop, n) for (f, stop), n in count.most_common(1)))
PY
)
  case $ends in
    "$caller:end:"*) tap_ok "$name: libdwfl ends the stacks in $leaf at $caller ($ends)" ;;
    *) tap_not_ok "$name: the case is not there: the stacks in $leaf end ${ends:-nowhere}, not at $caller" ;;
  esac
}

case_of rip leaf mid
case_of rbp leaf main
case_of unread spin mid
tap_done
