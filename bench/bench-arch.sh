#!/bin/sh
# Unwinding speed per architecture, side by side with x86_64: the
# recordings tests/arch makes (the workload under qemu-user, stopped by gdb,
# its stops written as perf.data samples), each stop written BENCH_REPEAT
# times, unwound by eu-stacktrace -j 1 -f json with --sysroot.  Prints
# samples per second (the median of BENCH_RUNS runs) and the ratio to
# x86_64, so that a slow libdw backend shows.  Needs what tests/arch needs
# (tools/install-deps.sh).  About two minutes on a 2-CPU machine.
here=$(cd "$(dirname "$0")" && pwd)
TOP_SRCDIR=${TOP_SRCDIR:-$here/..}
: "${EU_STACKTRACE:=$here/../eu-stacktrace}"
export EU_STACKTRACE TOP_SRCDIR
. "$TOP_SRCDIR/tests/arch/arch-lib.sh"
BENCH_REPEAT=${BENCH_REPEAT:-40}
BENCH_RUNS=${BENCH_RUNS:-5}

work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench-arch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

printf '%-9s %8s %12s %10s %s\n' arch samples samples/s vs-x86_64 "frames/sample"
base=
for a in $ARCHES; do
  if ! arch_record "$a" "$work/$a"; then
    printf '%-9s no recording: %s\n' "$a" "$(cat "$work/$a/why" 2>/dev/null)"
    continue
  fi
  arch_params "$a"
  "$PYTHON3" "$ARCH_DIR/arch-check.py" write --stops "$work/$a/stops.jsonl" \
    --maps "$work/$a/maps.txt" --sysroot "$sysroot" --arch "$header" --abi "$abi" \
    --pc-index "$pc" --repeat "$BENCH_REPEAT" --out "$work/$a/bench.data" || continue
  root_opt=--sysroot=$sysroot
  [ "$a" = x86_64 ] && root_opt=
  "$EU_STACKTRACE" -j 1 -f json -s -i "$work/$a/bench.data" -o /dev/null ${root_opt:+"$root_opt"} \
    2>"$work/$a/stats"
  samples=$(sed -n 's/^samples read: *//p' "$work/$a/stats")
  per=$(sed -n 's/^user frames: .*(\(.*\) per sample)/\1/p' "$work/$a/stats")
  rate=$("$PYTHON3" - "$BENCH_RUNS" "$samples" "$EU_STACKTRACE" "$work/$a/bench.data" ${root_opt:+"$root_opt"} <<'PY'
import statistics, subprocess, sys, time
runs, samples, tool, data = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
walls = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run([tool, "-j", "1", "-f", "json", "-i", data, "-o", "/dev/null"] + sys.argv[5:],
                   check=True)
    walls.append(time.perf_counter() - t)
print("%.0f" % (samples / statistics.median(walls)))
PY
)
  [ "$a" = x86_64 ] && base=$rate
  ratio=-
  [ -n "$base" ] && ratio=$("$PYTHON3" -c "print('%.2f' % ($rate / $base))")
  printf '%-9s %8s %12s %10s %s\n' "$a" "$samples" "$rate" "$ratio" "$per"
done
