#!/bin/sh
# Recordings as other machines write them (issue 14): perf.data of the
# other byte order (perf on s390x or big-endian ppc64 writes its own), files
# and pipes without HEADER_ARCH (old perf; a pipe's comes too late), and
# Sysprof captures of another architecture (they name no machine).
#
# The s390x and aarch64 workloads run under qemu-user and gdb stops them
# (arch-lib.sh); arch-check.py writes the stops as perf.data in either byte
# order, with or without HEADER_ARCH, or as a Sysprof capture.  Oracles:
# gdb's backtrace at each stop, the little-endian variant's output, and
# perf's own reader of the other byte order (perf script, util/header.c
# needs_swap).  Real perf 6.1 recordings (the fuzz seeds, file and pipe
# mode) rewritten big-endian by perf-byteswap.py must give the same output.
# ~60 s on a loaded 2-core machine.
# shellcheck source=tests/tap.sh
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
# shellcheck source=tests/arch/arch-lib.sh
. "$(dirname "$0")/arch-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-foreign.XXXXXX") || exit 1
[ -n "$ARCH_KEEP" ] || trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
SEEDS="$TOP_SRCDIR/tests/fuzz/corpus/perf-source"

tap_plan 7

# unwind NAME FILE [OPTIONS]: eu-stacktrace -f json of FILE into NAME.json,
# its --stats into NAME.stats.
unwind ()
{
  n=$1 f=$2
  shift 2
  "$EU_STACKTRACE" -f json -s -i "$f" -o "$n.json" "$@" 2>"$n.stats"
}

# gdb_rate NAME: $eq of $cnt stops of NAME.json equal gdb's backtrace.
gdb_rate ()
{
  "$PYTHON3" "$ARCH_DIR/arch-check.py" compare --stops "$d/stops.jsonl" --ours "$1.json" \
    --maps "$d/maps.txt" >"$1.compare"
  eq=$(sed -n 's/^RESULT.* equal=\([0-9]*\).*/\1/p' "$1.compare")
  cnt=$(sed -n 's/^RESULT.* counted=\([0-9]*\).*/\1/p' "$1.compare")
}

# good_rate EQUAL COUNTED: at least 300 stops counted, 99% equal.
good_rate ()
{
  [ -n "$2" ] && [ "$2" -ge 300 ] && [ $(($1 * 100)) -ge $(($2 * 99)) ]
}

# perf script of the samples and mappings, without call chains (perf
# unwinds the stack copy of the other byte order as u64s swapped) and
# without MMAP2's prot (perf 6.1's perf_event__mmap2_swap leaves prot and
# flags as they were written).
perf_view ()
{
  run_perf script -G -i "$1" -F comm,pid,tid,time,ip,event --show-mmap-events \
    --show-task-events 2>/dev/null | sed 's/ [r-][w-][x-][ps] / PROT /'
}

# --- s390x: big-endian perf.data, with and without HEADER_ARCH ---------
d=$tmp/s390x
if ! arch_record s390x "$d"; then
  for _ in 1 2 3; do tap_not_ok "s390x: no recording: $(cat "$d/why" 2>/dev/null)"; done
else
  arch_params s390x
  w="$PYTHON3 $ARCH_DIR/arch-check.py write --stops $d/stops.jsonl --maps $d/maps.txt
     --sysroot $sysroot --arch $header --abi $abi --pc-index $pc"
  $w --out "$d/le.data" && $w --big-endian --out "$d/be.data" &&
    $w --big-endian --no-arch --out "$d/be-noarch.data" || echo "arch-check.py write failed"
  unwind "$d/le" "$d/le.data" --sysroot="$sysroot"
  unwind "$d/be" "$d/be.data" --sysroot="$sysroot"
  gdb_rate "$d/be"
  magic=$(head -c 8 "$d/be.data")
  if [ "$magic" = 2ELIFREP ] && cmp -s "$d/le.json" "$d/be.json" && good_rate "$eq" "$cnt"; then
    tap_ok "s390x perf.data in big-endian (magic $magic): the same output as little-endian, $eq of $cnt stops equal gdb's backtrace"
  else
    tap_not_ok "s390x perf.data in big-endian (magic $magic): $eq of $cnt stops equal gdb's"
    cmp "$d/le.json" "$d/be.json" | sed 's/^/#   /'
    head -n 5 "$d/be.compare" "$d/be.stats" | sed 's/^/#   /'
  fi

  perf_view "$d/le.data" >"$d/le.perf"
  perf_view "$d/be.data" >"$d/be.perf"
  n=$(grep -c 'cpu-clock\|task-clock\|cycles' "$d/be.perf")
  if [ -s "$d/le.perf" ] && cmp -s "$d/le.perf" "$d/be.perf"; then
    tap_ok "perf script reads the big-endian s390x file as the little-endian one ($(wc -l <"$d/be.perf") lines: samples' pid, tid, time, ip; mappings)"
  else
    tap_not_ok "perf script reads the big-endian s390x file otherwise than the little-endian one ($n samples)"
    diff "$d/le.perf" "$d/be.perf" | head -n 6 | sed 's/^/#   /'
  fi

  unwind "$d/be-noarch" "$d/be-noarch.data" --sysroot="$sysroot"
  seen=$(sed -n 's/^architecture unwound: //p' "$d/be-noarch.stats")
  if cmp -s "$d/le.json" "$d/be-noarch.json" && expr "$seen" : 's390x (from the files' >/dev/null; then
    tap_ok "big-endian s390x without HEADER_ARCH: the same output, architecture unwound: $seen"
  else
    tap_not_ok "big-endian s390x without HEADER_ARCH: architecture unwound: $seen"
    cmp "$d/le.json" "$d/be-noarch.json" | sed 's/^/#   /'
  fi
fi

# --- aarch64: without HEADER_ARCH; a Sysprof capture --------------------
d=$tmp/aarch64
if ! arch_record aarch64 "$d"; then
  for _ in 1 2; do tap_not_ok "aarch64: no recording: $(cat "$d/why" 2>/dev/null)"; done
else
  arch_params aarch64
  w="$PYTHON3 $ARCH_DIR/arch-check.py write --stops $d/stops.jsonl --maps $d/maps.txt
     --sysroot $sysroot --arch $header --abi $abi --pc-index $pc"
  $w --no-arch --out "$d/noarch.data" && $w --sysprof --out "$d/capture.syscap" ||
    echo "arch-check.py write failed"
  unwind "$d/named" "$d/perf.data" --sysroot="$sysroot"
  unwind "$d/noarch" "$d/noarch.data" --sysroot="$sysroot"
  seen=$(sed -n 's/^architecture unwound: //p' "$d/noarch.stats")
  gdb_rate "$d/noarch"
  if cmp -s "$d/named.json" "$d/noarch.json" && good_rate "$eq" "$cnt" &&
     expr "$seen" : 'aarch64 (from the files' >/dev/null; then
    tap_ok "aarch64 perf.data without HEADER_ARCH on this x86_64 machine: the same output as with it, $eq of $cnt stops equal gdb's ($seen)"
  else
    tap_not_ok "aarch64 perf.data without HEADER_ARCH: $eq of $cnt stops equal gdb's ($seen)"
  fi
  unwind "$d/sysprof" "$d/capture.syscap" --sysroot="$sysroot"
  gdb_rate "$d/sysprof"
  seen=$(sed -n 's/^architecture unwound: //p' "$d/sysprof.stats")
  if good_rate "$eq" "$cnt" && expr "$seen" : aarch64 >/dev/null; then
    tap_ok "aarch64 Sysprof capture (33 registers a stack-user frame, ABI 64): $eq of $cnt stops equal gdb's ($seen)"
  else
    tap_not_ok "aarch64 Sysprof capture: $eq of $cnt stops equal gdb's ($seen)"
    head -n 5 "$d/sysprof.compare" "$d/sysprof.stats" | sed 's/^/#   /'
  fi
fi

# --- real perf 6.1 recordings, rewritten big-endian ---------------------
same=0 all=0 bad=
for f in "$SEEDS"/seed-*.data; do
  b=$tmp/$(basename "$f" .data)
  all=$((all + 1))
  if "$PYTHON3" "$ARCH_DIR/perf-byteswap.py" "$f" "$b.be.data" &&
     unwind "$b.le" "$f" && unwind "$b.be" "$b.be.data" && [ -s "$b.le.json" ] &&
     cmp -s "$b.le.json" "$b.be.json"; then
    same=$((same + 1))
  else
    bad="$bad $(basename "$f")"
  fi
done
if [ "$all" -ge 7 ] && [ "$same" -eq "$all" ]; then
  tap_ok "$same of $all perf 6.1 recordings (file and pipe mode, one with two events) rewritten big-endian: the same output"
else
  tap_not_ok "$same of $all perf 6.1 recordings rewritten big-endian give the same output:$bad"
fi
# perf's reader of the other byte order agrees with perf-byteswap.py on
# the pipes (its file-mode reader wants the features the rewrite leaves
# out).
same=0 all=0
for f in "$SEEDS"/seed-pipe-*.data; do
  b=$tmp/$(basename "$f" .data)
  all=$((all + 1))
  perf_view "$f" >"$b.le.perf"
  perf_view "$b.be.data" >"$b.be.perf"
  [ -s "$b.le.perf" ] && cmp -s "$b.le.perf" "$b.be.perf" && same=$((same + 1))
done
if [ "$all" -ge 2 ] && [ "$same" -eq "$all" ]; then
  tap_ok "perf script reads the $all rewritten pipes as the originals"
else
  tap_not_ok "perf script reads $same of $all rewritten pipes as the originals"
fi
tap_done
