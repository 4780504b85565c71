#!/bin/sh
# Every input of every fuzz corpus (tests/fuzz/corpus/NAME/: seeds and each
# input that once crashed or hung a parser) runs through its target,
# tests/fuzz/fuzz-NAME-replay, built with ASan and UBSan: no sanitizer
# report, no signal, exit 0, done within 60 s.  One TAP line per input,
# then one per corpus that checks each of its files is listed in
# tests/fuzz/local.mk (or `make dist' drops it).
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
. "$TOP_SRCDIR/tests/tap.sh"
CORPORA="$TOP_SRCDIR/tests/fuzz/corpus"
LOCAL_MK="$TOP_SRCDIR/tests/fuzz/local.mk"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-fuzz.XXXXXX") || {
  tap_plan 1; tap_not_ok "cannot create a temporary directory"; tap_done; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

n_tests=1   # the line on the files local.mk lists
for d in "$CORPORA"/*/; do
  [ -d "$d" ] || continue
  n_tests=$((n_tests + 1))
  for f in "$d"*; do
    [ -f "$f" ] && n_tests=$((n_tests + 1))
  done
done
if [ "$n_tests" -eq 0 ]; then
  tap_plan 1
  tap_not_ok "replay the fuzz corpora: no corpus in $CORPORA"
  tap_done
fi
tap_plan "$n_tests"

unset DEBUGINFOD_URLS
for d in "$CORPORA"/*/; do
  [ -d "$d" ] || continue
  d=${d%/}
  target=${d##*/}
  replay="$TOP_BUILDDIR/tests/fuzz/fuzz-$target-replay"
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    name="$target/${f##*/}"
    if ! [ -x "$replay" ]; then
      tap_not_ok "$name: $replay not built"
      continue
    fi
    start=$(date +%s)
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    FUZZ_VERBOSE=error \
      timeout -k 5 60 "$replay" "$f" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    secs=$(( $(date +%s) - start ))
    why=""
    if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' \
         -e 'runtime error:' -e 'SUMMARY: [A-Za-z]*Sanitizer' "$tmp/err"; then
      why="sanitizer report"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      why="did not finish within 60 s"
    elif [ "$rc" -ne 0 ]; then
      why="exit status $rc"
    fi
    # What the parser said about the input (its error, if any).
    said=$(grep -v '^replay' "$tmp/err" | head -n 1)
    if [ -z "$why" ]; then
      tap_ok "$name ($(wc -c < "$f") bytes) replays clean in ${secs}s${said:+: $said}"
    else
      tap_not_ok "$name: $why"
      grep -n -A 40 -m 1 -e 'ERROR: ' -e 'runtime error:' "$tmp/err" | sed 's/^/#   /'
      grep -q -e 'ERROR: ' -e 'runtime error:' "$tmp/err" || sed -n '1,40s/^/#   /p' "$tmp/err"
    fi
  done

  unlisted=""
  for f in "$d"/*; do
    [ -f "$f" ] || continue
    grep -q "tests/fuzz/corpus/$target/${f##*/}" "$LOCAL_MK" || unlisted="$unlisted ${f##*/}"
  done
  if [ -z "$unlisted" ]; then
    tap_ok "every file of corpus/$target is listed in tests/fuzz/local.mk"
  else
    tap_not_ok "corpus/$target files missing from FUZZ_CORPUS in tests/fuzz/local.mk:$unlisted"
  fi
done

# The other way round: each file FUZZ_CORPUS lists is in the tree and, in a
# git checkout, tracked (a seed that .gitignore hides, such as a *.so, is
# there where it was made and missing from every clone: make dist fails).
missing=""
untracked=""
in_git=""
# Only where the source tree is a git checkout's top (distcheck unpacks the
# tarball inside the checkout, where git would see untracked copies).
top=$(git -C "$TOP_SRCDIR" rev-parse --show-toplevel 2> /dev/null)
[ -n "$top" ] && [ "$top" = "$(cd "$TOP_SRCDIR" && pwd -P)" ] && in_git=1
grep -v '^[[:space:]]*#' "$LOCAL_MK" | grep -o 'tests/fuzz/corpus/[^ 	\\]*' > "$tmp/listed"
while read -r p; do
  if [ ! -f "$TOP_SRCDIR/$p" ]; then
    missing="$missing $p"
  elif [ -n "$in_git" ] && ! git -C "$TOP_SRCDIR" ls-files --error-unmatch "$p" > /dev/null 2>&1; then
    untracked="$untracked $p"
  fi
done < "$tmp/listed"
if [ -z "$missing$untracked" ]; then
  tap_ok "every corpus file tests/fuzz/local.mk lists is in the tree${in_git:+ and tracked by git}"
else
  tap_not_ok "corpus files listed in tests/fuzz/local.mk:${missing:+ missing:$missing}${untracked:+ not tracked by git (.gitignore?):$untracked}"
fi
tap_done
