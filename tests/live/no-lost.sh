#!/bin/sh
# Live sampling keeps up: at 999 Hz with 8 KiB stacks on every CPU (a
# command whose four threads keep two CPUs busy), the kernel loses no sample
# (a full ring buffer is what loses them): the run says nothing lost, every
# sample taken is written, and each CPU's samples are there.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-no-lost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 3
# 4 threads x 1.5 s of CPU: about 6,000 samples at 999 Hz.
if "$EU_STACKTRACE" -F 999 --stack-size 8192 --stats -f text -o "$tmp/out.txt" \
     -- "$TOP_BUILDDIR/tests/workloads/threads" 1500 > /dev/null 2> "$tmp/err"; then
  tap_ok "eu-stacktrace -F 999 --stack-size 8192 -- threads"
else
  tap_not_ok "eu-stacktrace -F 999 --stack-size 8192 -- threads"
fi
grep -E 'samples read|lost|overhead' "$tmp/err" | sed 's/^/# /'
if grep -qiE 'lost [0-9]+ samples|samples lost by the kernel' "$tmp/err"; then
  tap_not_ok "no sample lost: $(grep -iE 'lost' "$tmp/err" | head -1)"
else
  tap_ok "no sample lost"
fi
# "samples read: N" against the samples written, and per CPU.
read_n=$(sed -n 's/^samples read: *\([0-9]*\).*/\1/p' "$tmp/err")
written=$(grep -c ' cpu [0-9]*:$' "$tmp/out.txt")
ncpu=$(getconf _NPROCESSORS_ONLN)
percpu=$(sed -n 's/.* cpu \([0-9]*\):$/\1/p' "$tmp/out.txt" | sort | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')
cpus=$(sed -n 's/.* cpu \([0-9]*\):$/\1/p' "$tmp/out.txt" | sort -u | wc -l)
want_cpus=$((ncpu < 2 ? ncpu : 2))
if [ -n "$read_n" ] && [ "$read_n" -ge 4000 ] && [ "$written" -eq "$read_n" ] \
   && [ "$cpus" -ge "$want_cpus" ]; then
  tap_ok "all $read_n samples written, on $cpus CPUs (cpu:samples $percpu)"
else
  tap_not_ok "all ${read_n:-?} samples written (wrote $written), on $cpus CPUs (cpu:samples $percpu)"
fi
tap_done
