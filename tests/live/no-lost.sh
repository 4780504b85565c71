#!/bin/sh
# Live sampling keeps up, and what the kernel loses is counted exactly.
#
# 1-3: at 999 Hz with 8 KiB stacks on every CPU (a command whose four
# threads keep two CPUs busy), the kernel loses no sample (a full ring
# buffer is what loses them): the run says nothing lost, every sample
# taken is written, and each CPU's samples are there.  That holds only when
# the profiler runs when its ring needs draining: a ring holds 256 ms of
# such samples, and a machine that gives the profiler no CPU for longer
# (other tests beside it, `make -j2 check') makes the kernel drop samples,
# which no profiler can prevent.  So the profiler runs as SCHED_FIFO with
# SCHED_RESET_ON_FORK (chrt -f -R): the machine's other tasks cannot starve
# it, and the command, its threads and the profiler's own threads run as
# any other task.  It still unwinds on one CPU: an unwinder that cannot
# keep up loses samples all the same.
#
# 4-5: lost samples are counted and reported exactly: with a ring of 4
# pages (16 KiB: one sample at a time) the kernel loses most samples,
# however fast the profiler.  The samples read and the samples lost (the
# kernel's PERF_RECORD_LOST counts) add up to the samples the command's CPU
# time makes at 999 Hz (a sample every 1.001 ms of a thread's CPU time):
# each thread burns 1.5 s of CPU (CLOCK_THREAD_CPUTIME_ID), and at most
# one more round of its work (under 2 ms) before it looks, so at most
# 4 x 1502; at least 90% of that, as cpu-clock does not sample the time
# spent in the kernel (exclude_kernel: 1-3% measured).
# The ring loses 49-62% of the samples (three runs beside two busy loops:
# sums 5911, 5855, 5874).  The warning says the same figures as --stats,
# and every sample read is written.
#
# 6: a ring that cannot hold one sample is refused before anything runs:
# the kernel writes a sample whole or not at all, and with --mmap-pages 2
# (8 KiB) and 8 KiB stacks it dropped every sample without a LOST record,
# so the run read nothing and said nothing.
#
# 7: the losses the kernel never reports are counted too.  The kernel
# writes a LOST record only when the record after the loss fits, so a
# profiler that cannot drain its ring until the command has ended hears of
# none of them (before the fix a full `make -j2 check' beside test 4 made
# it 2469 read + 2828 lost = 5297 of about 5900).  The profiler reads each
# event's own lost count at the end (PERF_FORMAT_LOST).  Here the command
# stops the profiler (SIGSTOP to its parent) before its work and lets it
# go after: the ring holds what fits, the rest is lost, and no record
# follows.  Without the read, the run said 498 read and nothing lost.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-no-lost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 7
THREADS=$TOP_BUILDDIR/tests/workloads/threads
ncpu=$(getconf _NPROCESSORS_ONLN)

# samples_written FILE: the samples of a -f text output.
samples_written () { grep -c ' cpu [0-9]*:$' "$1"; }
# stat_value ERR LABEL: the number after "LABEL:" in --stats's summary.
stat_value () { sed -n "s/^$2: *\([0-9]*\).*/\1/p" "$1"; }

# 4 threads x 1.5 s of CPU: about 6,000 samples at 999 Hz.
if chrt -f -R 1 "$EU_STACKTRACE" -F 999 --stack-size 8192 --stats -f text -o "$tmp/out.txt" \
     -- "$THREADS" 1500 > /dev/null 2> "$tmp/err"; then
  tap_ok "chrt -f -R 1 eu-stacktrace -F 999 --stack-size 8192 -- threads"
else
  tap_diag_file "$tmp/err"
  tap_not_ok "chrt -f -R 1 eu-stacktrace -F 999 --stack-size 8192 -- threads"
fi
grep -E 'samples read|lost|overhead' "$tmp/err" | sed 's/^/# /'
if grep -qiE 'lost [0-9]+ samples|samples lost by the kernel' "$tmp/err"; then
  tap_not_ok "no sample lost: $(grep -iE 'lost' "$tmp/err" | head -1)"
else
  tap_ok "no sample lost"
fi
# "samples read: N" against the samples written, and per CPU.
read_n=$(stat_value "$tmp/err" "samples read")
written=$(samples_written "$tmp/out.txt")
percpu=$(sed -n 's/.* cpu \([0-9]*\):$/\1/p' "$tmp/out.txt" | sort | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')
cpus=$(sed -n 's/.* cpu \([0-9]*\):$/\1/p' "$tmp/out.txt" | sort -u | wc -l)
want_cpus=$((ncpu < 2 ? ncpu : 2))
if [ -n "$read_n" ] && [ "$read_n" -ge 4000 ] && [ "$written" -eq "$read_n" ] \
   && [ "$cpus" -ge "$want_cpus" ]; then
  tap_ok "all $read_n samples written, on $cpus CPUs (cpu:samples $percpu)"
else
  tap_not_ok "all ${read_n:-?} samples written (wrote $written), on $cpus CPUs (cpu:samples $percpu)"
fi

# 4-5: a ring too small to keep up, however fast the profiler.
chrt -f -R 1 "$EU_STACKTRACE" -F 999 --stack-size 8192 --mmap-pages 4 --stats -f text -o "$tmp/small.txt" \
  -- "$THREADS" 1500 > /dev/null 2> "$tmp/small.err"
st=$?
grep -E 'samples read|lost' "$tmp/small.err" | sed 's/^/# /'
read_n=$(stat_value "$tmp/small.err" "samples read")
lost_n=$(stat_value "$tmp/small.err" "samples lost by the kernel")
# The warning: "lost N samples (P% of M)".
warned=$(sed -n 's/.*warning: lost \([0-9]*\) samples ([0-9.]*% of \([0-9]*\)).*/\1 \2/p' "$tmp/small.err")
written=$(samples_written "$tmp/small.txt")
most=$((4 * 1502))
least=$((most * 9 / 10))
total=$((${read_n:-0} + ${lost_n:-0}))
if [ "$st" -eq 0 ] && [ -n "$read_n" ] && [ -n "$lost_n" ] && [ "$lost_n" -gt 0 ] \
   && [ "$total" -ge "$least" ] && [ "$total" -le "$most" ]; then
  tap_ok "--mmap-pages 4: $read_n samples read + $lost_n lost = $total, the command's CPU time at 999 Hz ($least..$most)"
else
  tap_diag_file "$tmp/small.err"
  tap_not_ok "--mmap-pages 4 (status $st): ${read_n:-?} samples read + ${lost_n:-?} lost = $total, not the command's CPU time at 999 Hz ($least..$most)"
fi
if [ "$warned" = "$lost_n $total" ] && [ "$written" -eq "${read_n:--1}" ]; then
  tap_ok "the warning says $lost_n lost of $total, as --stats does; all $written samples read written"
else
  tap_not_ok "the warning says '${warned:-nothing}', --stats ${lost_n:-?} lost of $total; $written of ${read_n:-?} samples read written"
fi

# 6: a ring smaller than one sample.
"$EU_STACKTRACE" -F 999 --stack-size 8192 --mmap-pages 2 -f text -o "$tmp/tiny.txt" \
  -- "$THREADS" 10 > /dev/null 2> "$tmp/tiny.err"
st=$?
if [ "$st" -eq 64 ] && grep -q -- '--mmap-pages 2 makes a ring of 8 KiB, which cannot hold one sample' "$tmp/tiny.err" \
   && [ ! -s "$tmp/tiny.txt" ]; then
  tap_ok "--mmap-pages 2 with 8 KiB stacks: refused before the command runs (status 64, says why)"
else
  tap_diag_file "$tmp/tiny.err"
  tap_not_ok "--mmap-pages 2 with 8 KiB stacks: status $st, not refused with a reason"
fi
# 7: the profiler stopped for the whole of the command's work.
# PERF_FORMAT_LOST is Linux 6.0's: before it only the LOST records count.
kernel=$(uname -r | sed 's/^\([0-9]*\)\.\([0-9]*\).*/\1 \2/')
if [ "${kernel% *}" -lt 6 ]; then
  tap_skip "losses no LOST record reports" "Linux $(uname -r) has no PERF_FORMAT_LOST (6.0+)"
else
  # shellcheck disable=SC2016 # $PPID and $0 are the inner shell's
  "$EU_STACKTRACE" -F 999 --stack-size 8192 --stats -f text -o "$tmp/stopped.txt" \
    -- sh -c 'kill -STOP "$PPID" && "$0" 1500; kill -CONT "$PPID"' "$THREADS" \
    > /dev/null 2> "$tmp/stopped.err"
  st=$?
  grep -E 'samples read|lost' "$tmp/stopped.err" | sed 's/^/# /'
  read_n=$(stat_value "$tmp/stopped.err" "samples read")
  lost_n=$(stat_value "$tmp/stopped.err" "samples lost by the kernel")
  total=$((${read_n:-0} + ${lost_n:-0}))
  if [ "$st" -eq 0 ] && [ -n "$read_n" ] && [ -n "$lost_n" ] \
     && [ "$total" -ge "$least" ] && [ "$total" -le "$most" ]; then
    tap_ok "profiler stopped during the command: $read_n samples read + $lost_n lost = $total ($least..$most)"
  else
    tap_diag_file "$tmp/stopped.err"
    tap_not_ok "profiler stopped during the command (status $st): ${read_n:-?} read + ${lost_n:-?} lost = $total, not $least..$most"
  fi
fi
tap_done
