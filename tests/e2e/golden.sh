#!/bin/sh
# Golden outputs: eu-stacktrace's output of committed recordings, byte for
# byte, against the outputs committed with them (tests/golden/README says how
# they were made).  A change meant to keep behaviour (a refactor) keeps them.
#
# The recordings are of tests/golden/golden-prog, a committed program that
# maps nothing but itself and the vdso (none of whose code is sampled), so
# the outputs depend on no machine: the test copies the program to the path
# the recordings hold, then checks it is there, byte for byte, before
# unwinding.
#
# GOLDEN_UPDATE=1 rewrites tests/golden/expected/ from today's outputs (only
# when a change of output is meant; say why in the commit).
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"

golden="$TOP_SRCDIR/tests/golden"
# The path recorded in golden.data and golden.syscap.
prog_dir=/tmp/eu-stacktrace-golden
prog="$prog_dir/golden-prog"

# Each case: EXPECTED INPUT FORMAT [OPTIONS...], EXPECTED a file of
# tests/golden/.  Outputs that are the same today share one file: the
# Sysprof capture was written from golden.data by -m passthru, and its
# unwinding is the recording's.
cases="
expected/data.text golden.data text
expected/data.folded golden.data folded
expected/data.json golden.data json
expected/data.svg golden.data svg
expected/data.pprof golden.data pprof
expected/data.sysprof golden.data sysprof
expected/data.text golden.data text -j1
expected/data.text golden.data text -j4
golden.syscap golden.data sysprof -m passthru
expected/data.text golden.syscap text
expected/data.folded golden.syscap folded
expected/data.json golden.syscap json
"
n_cases=$(echo "$cases" | grep -c .)
tap_plan $((n_cases + 1))

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-golden-test.XXXXXX") \
  || tap_bail "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# The program at its recorded path: copied under a temporary name and
# renamed, so that runs at the same time never see half a file.  The folder
# must be ours: a folder that someone else made could hold another program.
problem=""
mkdir -p "$prog_dir" 2>"$tmp/mkdir.err" || problem="cannot create $prog_dir: $(cat "$tmp/mkdir.err")"
if [ -z "$problem" ] && [ ! -O "$prog_dir" ]; then
  problem="$prog_dir belongs to another user"
fi
if [ -z "$problem" ]; then
  part=$(mktemp "$prog_dir/.golden-prog.XXXXXX") \
    && cp "$golden/golden-prog" "$part" && chmod 755 "$part" && mv -f "$part" "$prog" \
    || problem="cannot copy golden-prog to $prog"
fi
if [ -z "$problem" ] && ! cmp -s "$golden/golden-prog" "$prog"; then
  problem="$prog differs from tests/golden/golden-prog"
fi
if [ -z "$problem" ]; then
  tap_ok "tests/golden/golden-prog is at the path the recordings hold ($prog)"
else
  tap_not_ok "tests/golden/golden-prog is at the path the recordings hold: $problem"
fi

# The Sysprof capture header's capture_time (bytes 8..71) is the time of the
# run: a capture is compared without it.
same_output ()  # FORMAT EXPECTED OUTPUT
{
  if [ "$1" = sysprof ]; then
    [ "$(head -c 8 "$2" | od -An -tx1)" = "$(head -c 8 "$3" | od -An -tx1)" ] \
      && tail -c +73 "$2" > "$tmp/want.tail" && tail -c +73 "$3" > "$tmp/out.tail" \
      && cmp -s "$tmp/want.tail" "$tmp/out.tail"
  else
    cmp -s "$2" "$3"
  fi
}

i=0
while read -r expect input fmt opts; do
  [ -n "$expect" ] || continue
  i=$((i + 1))
  out="$tmp/$i.$fmt"
  want="$golden/$expect"
  desc="-i $input -f $fmt${opts:+ $opts}: byte-identical to tests/golden/$expect"
  [ "$fmt" = sysprof ] && desc="$desc (but the header's capture time)"
  if [ -n "$problem" ]; then
    tap_not_ok "$desc: not run ($problem)"
    continue
  fi
  # shellcheck disable=SC2086  # opts are words on purpose
  "$EU_STACKTRACE" -i "$golden/$input" -f "$fmt" $opts -o "$out" \
    > "$tmp/run.out" 2> "$tmp/run.err"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    tap_diag_file "$tmp/run.err"
    tap_not_ok "$desc: exit status $rc"
  elif [ -n "${GOLDEN_UPDATE:-}" ]; then
    cp "$out" "$want"
    tap_ok "$desc (written: GOLDEN_UPDATE is set)"
  elif [ ! -f "$want" ]; then
    tap_not_ok "$desc: no $want"
  elif same_output "$fmt" "$want" "$out"; then
    tap_ok "$desc"
  else
    case $fmt in
      svg|pprof|sysprof) cmp "$want" "$out" 2>&1 | sed 's/^/#   /' ;;
      *) diff "$want" "$out" > "$tmp/diff"; tap_diag_file "$tmp/diff" 40 ;;
    esac
    tap_not_ok "$desc"
  fi
done <<EOF
$cases
EOF
tap_done
