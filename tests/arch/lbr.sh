#!/bin/sh
# perf record --call-graph lbr: the LBR call stack of each sample shown as
# perf script shows it.  This machine has no LBR, so the recording is
# perfparser's (tests/arch/perfparser-lbr/README: what, whence, licence):
# its 21 samples with an LBR call stack must equal perf script's frames
# (perf 6.1 of this machine reads the same file), and all 29 samples
# perfparser's own expected output.  A few seconds.
# shellcheck source=tests/tap.sh
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"
: "${PYTHON3:=python3}"
check="$TOP_SRCDIR/tests/arch/lbr-check.py"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-lbr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
tap_plan 3

"$PYTHON3" "$check" inflate "$TOP_SRCDIR/tests/arch/perfparser-lbr" "$tmp" ||
  tap_bail "cannot inflate tests/arch/perfparser-lbr"
bin=$tmp/vector_static_gcc_v9.1.0
# perf finds the program by the build-id the recording holds: a build-id
# cache of this test's own.
mkdir "$tmp/home"
run_perf buildid-cache -a "$bin" 2>"$tmp/perf.err"
run_perf script -i "$tmp/perf.lbr.data" -F time,ip,sym >"$tmp/perf.txt" 2>>"$tmp/perf.err"

if "$EU_STACKTRACE" -f json -s -i "$tmp/perf.lbr.data" -o "$tmp/ours.json" \
     --search-path="$tmp" 2>"$tmp/stats" &&
   grep -q 'LBR call stack (--call-graph lbr) *21 ' "$tmp/stats"; then
  tap_ok "perfparser's LBR recording: 21 of 29 samples shown as their LBR call stack"
else
  tap_not_ok "perfparser's LBR recording: not 21 samples shown as their LBR call stack"
  tap_diag_file "$tmp/stats" 20
fi
"$PYTHON3" "$check" compare --ours "$tmp/ours.json" --perf "$tmp/perf.txt" \
  --expected "$tmp/perf.lbr.data.expected.txt" --binary "$bin" >"$tmp/compare"
perf_line=$(grep '^RESULT perf ' "$tmp/compare")
pp_line=$(grep '^RESULT perfparser ' "$tmp/compare")
# The one other sample has an empty LBR stack (nr 0) and only its kernel
# chain: perf 6.1 still reads entries[0] and shows whatever was there.
case "$perf_line" in
  *" lbr=21 lbr_equal=21 "*)
    tap_ok "perf script: the 21 LBR call stacks have its frames (${perf_line#RESULT perf })" ;;
  *) tap_not_ok "perf script: ${perf_line#RESULT perf }"
     tap_diag_file "$tmp/compare" 12 ;;
esac
case "$pp_line" in
  *" samples=29 equal=29 "*)
    tap_ok "perfparser's expected output: all 29 samples have its frames (${pp_line#RESULT perfparser })" ;;
  *) tap_not_ok "perfparser's expected output: ${pp_line#RESULT perfparser }"
     tap_diag_file "$tmp/compare" 12 ;;
esac
tap_done
