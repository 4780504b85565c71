#!/bin/sh
# Builds one fuzz target (tests/fuzz/fuzz-NAME.c) with clang's libFuzzer,
# ASan and UBSan, and fuzzes for a while (default 60 s) on a copy of
# tests/fuzz/corpus/NAME/.  One run at a time on a shared machine: libFuzzer
# uses one core (more only with -fork=N or -jobs=N).
#
#   tests/fuzz/run-fuzzer.sh NAME [SECONDS] [LIBFUZZER-OPTION...]
#
# NAME is one of: perf-source perf-dir sysprof-source nsh-protocol podman-storage podman-ids
# flatpak proc-maps (see tests/fuzz/README).  Without NAME (a first
# argument that is a number or an option), perf-source.
#
# Run it from the top of a configured build tree (config.h is taken from
# there), or set TOP_SRCDIR and TOP_BUILDDIR.  Environment:
#   CC               the clang to use (default: clang)
#   FUZZ_WORKDIR     where the binary, the working corpus and the findings
#                    go (default: ${TMPDIR:-/tmp}/eu-stacktrace-fuzz/NAME); the
#                    corpus there grows from run to run
#   FUZZ_KEEP_GOING  1: do not stop at the first crash (libFuzzer's fork
#                    mode with -ignore_crashes/-ignore_timeouts/-ignore_ooms)
#   FUZZ_NO_BUILD    1: reuse the binary already in FUZZ_WORKDIR
#
# Inputs are cut at 70000 bytes (-max_len) and an input that runs longer
# than 10 s is a hang (-timeout).  Findings land in $FUZZ_WORKDIR/artifacts/
# as crash-*, timeout-*, leak-*, oom-*.  For each one:
#   $FUZZ_WORKDIR/fuzz-NAME ARTIFACT                     # reproduce
#   FUZZ_VERBOSE=1 tests/fuzz/fuzz-NAME-replay ARTIFACT  # with logs
#   $FUZZ_WORKDIR/fuzz-NAME -minimize_crash=1 -runs=20000 \
#       -exact_artifact_path=small ARTIFACT              # make it smaller
# then fix it, copy it to tests/fuzz/corpus/NAME/crash-WHAT, list it in
# FUZZ_CORPUS in tests/fuzz/local.mk, and `make check` replays it forever.
# libFuzzer's last lines (-print_final_stats=1) give the run's figures:
# "Done N runs in S second(s)", and the "cov:" of the last #N line.
set -eu

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$(pwd)}"
: "${CC:=clang}"
name=perf-source
case ${1:-} in
  ''|-*|[0-9]*) ;;
  *) name=$1; shift ;;
esac
if ! [ -f "$TOP_SRCDIR/tests/fuzz/fuzz-$name.c" ]; then
  echo "run-fuzzer.sh: no fuzz target $TOP_SRCDIR/tests/fuzz/fuzz-$name.c" >&2
  exit 1
fi
: "${FUZZ_WORKDIR:=${TMPDIR:-/tmp}/eu-stacktrace-fuzz/$name}"
seconds=60
case ${1:-} in
  ''|-*) ;;
  *) seconds=$1; shift ;;
esac

if ! [ -f "$TOP_BUILDDIR/config.h" ]; then
  echo "run-fuzzer.sh: no config.h in $TOP_BUILDDIR: run ./configure, or set TOP_BUILDDIR" >&2
  exit 1
fi
mkdir -p "$FUZZ_WORKDIR/corpus" "$FUZZ_WORKDIR/artifacts"
bin="$FUZZ_WORKDIR/fuzz-$name"

if [ "${FUZZ_NO_BUILD:-0}" != 1 ] || ! [ -x "$bin" ]; then
  # How the core is built, from the build tree's own Makefile (see
  # fuzz-core-vars in tests/fuzz/local.mk): its sources, the generated ones,
  # the flags of its libraries and the libraries it links with.
  vars=$(make -s -C "$TOP_BUILDDIR" fuzz-core-vars) || {
    echo "run-fuzzer.sh: make fuzz-core-vars failed in $TOP_BUILDDIR" >&2; exit 1; }
  var () { printf '%s\n' "$vars" | sed -n "s/^$1: //p"; }
  sources=""
  for f in $(var sources); do
    case $f in *.c) sources="$sources $TOP_SRCDIR/$f" ;; esac
  done
  for f in $(var built_sources); do
    case $f in *.c) sources="$sources $TOP_BUILDDIR/$f" ;; esac
  done
  [ -n "$sources" ] || { echo "run-fuzzer.sh: no core sources from make fuzz-core-vars" >&2; exit 1; }
  echo "building $bin with $CC"
  # -Wno-error: a tree configured with --enable-werror gives gcc's -Werror,
  # and clang warns where gcc does not (regs.c's partial initializers).
  # shellcheck disable=SC2046,SC2086
  "$CC" -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -DLIBEXECDIR='"/nonexistent"' \
    -I"$TOP_SRCDIR/src" -I"$TOP_BUILDDIR/src" -I"$TOP_BUILDDIR" $(var cflags) -Wno-error \
    -I"$TOP_SRCDIR/tests/fuzz" -o "$bin" "$TOP_SRCDIR/tests/fuzz/fuzz-$name.c" \
    "$TOP_SRCDIR/tests/fuzz/fuzz-replay.c" "$TOP_SRCDIR/tests/fuzz/fuzz-source.c" $sources \
    $(var libs) -lpthread
fi

# The seeds and past findings join the working corpus (never the other way:
# copy a finding to tests/fuzz/corpus/ by hand once it is fixed).
cp -p "$TOP_SRCDIR/tests/fuzz/corpus/$name"/* "$FUZZ_WORKDIR/corpus/"

set -- -max_len=70000 -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" \
  -print_final_stats=1 -artifact_prefix="$FUZZ_WORKDIR/artifacts/" "$@"
if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
  set -- -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 "$@"
fi
unset DEBUGINFOD_URLS
echo "fuzzing for $seconds s: $bin $* $FUZZ_WORKDIR/corpus"
cd "$FUZZ_WORKDIR"
status=0
"$bin" "$@" "$FUZZ_WORKDIR/corpus" || status=$?
echo "findings in $FUZZ_WORKDIR/artifacts/:"
ls -l "$FUZZ_WORKDIR/artifacts/"
exit "$status"
