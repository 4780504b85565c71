#!/bin/sh
# check-tsan.sh: the unwinding threads under ThreadSanitizer.
#
# Builds the committed tree (git archive HEAD) with -fsanitize=thread in a
# directory of its own, then runs the e2e recordings through that build at
# the default -j (the CPUs available, at least 2 wanted) and jobs.sh's -j 2
# and -j 3, with TSAN_OPTIONS that make any report end the run with status
# 66, so that a race fails its test.  The threads share each file's symbol
# table and unwind rows (src/core/resolve/file-shared.h): this is the proof
# that they do so without a race.  Not part of make check: the build takes
# minutes, and a TSAN build is not one CI makes.
#
#   sh tools/check-tsan.sh [TEST...]      (default: the e2e tests below)
#
# from a built tree (make check TESTS= builds tests/eu-stacktrace-asan,
# which jobs.sh also runs).
#
# Environment: TSAN_DIR (the build directory; default a new one under
# $TMPDIR, removed at the end), PERF, PYTHON3.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] ||
  echo "check-tsan: one CPU: the default -j is 1, only jobs.sh runs threads" >&2
if [ -n "${TSAN_DIR:-}" ]; then
  build=$TSAN_DIR
  mkdir -p "$build"
else
  build=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-tsan.XXXXXX")
  trap 'rm -rf "$build"' EXIT
  trap 'exit 130' INT TERM
fi
if [ ! -x "$build/eu-stacktrace" ]; then
  # "make" (all), not "make eu-stacktrace": only all builds BUILT_SOURCES
  # (profile.pb-c.h), which a fresh tree lacks.
  (cd "$top" && git archive HEAD) | tar -x -C "$build"
  (cd "$build" && autoreconf -fi && ./configure CFLAGS='-fsanitize=thread -g -O1' \
     LDFLAGS=-fsanitize=thread && make -j"$(getconf _NPROCESSORS_ONLN)") \
    > "$build/build.log" 2>&1 || { tail -20 "$build/build.log" >&2; exit 1; }
fi
[ $# -gt 0 ] || set -- jobs golden unwinder-equal deep shlib threads forkexec manyproc demangle
EU_STACKTRACE=$build/eu-stacktrace
EU_STACKTRACE_ASAN=$top/tests/eu-stacktrace-asan
TOP_SRCDIR=$top
TOP_BUILDDIR=$top
PERF=${PERF:-perf}
PYTHON3=${PYTHON3:-python3}
TSAN_OPTIONS='halt_on_error=1 exitcode=66'
export EU_STACKTRACE EU_STACKTRACE_ASAN TOP_SRCDIR TOP_BUILDDIR PERF PYTHON3 TSAN_OPTIONS
status=0
for t in "$@"; do
  if sh "$top/tests/e2e/$t.sh" > "$build/$t.log" 2>&1; then
    echo "ok - $t under ThreadSanitizer: $(grep -h '^# summary' "$build/$t.log" | tail -n 1)"
  else
    status=1
    echo "not ok - $t under ThreadSanitizer (log: $build/$t.log)"
    grep -n -A 20 -m 1 'ThreadSanitizer' "$build/$t.log" || grep '^not ok' "$build/$t.log" || :
  fi
done
exit "$status"
