#!/bin/sh
# The whole machine (-a -F 999) under a fork storm: two loops that fork and
# exec /bin/true as fast as they can, on a 2-CPU machine.  Processes come
# and go by the thousand a second and the kernel drops records when the
# ring is full, EXIT records included: the profiler's memory must stay
# bounded by the processes alive (peak VmRSS under 40 MB, and flat after
# the first sixth of the run), and samples the kernel lost must be reported
# as a share of the samples ("lost N samples (x.x% of M)"), under 1% or
# with the reason.
#
# FORK_STORM_SECONDS: how long to sample (default 60, as `make check-long'
# runs it).  The profiler's VmRSS is read every second and printed, with
# its CPU time.  It is stopped with exactly one SIGINT; every wait is
# bounded.  Not in `make check': a fork storm beside the other tests of a
# parallel run would make them, and itself, flaky.
set -u
: "${EU_STACKTRACE:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"
SECONDS_RUN=${FORK_STORM_SECONDS:-60}
RSS_LIMIT_KB=$((40 * 1024))
SLACK_KB=$((4 * 1024))
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-storm.XXXXXX")
loops=""
prof=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  for p in $loops; do kill "$p" 2> /dev/null; done
  [ -n "$prof" ] && kill -KILL "$prof" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tap_plan 4

# shellcheck source=tests/live/live-lib.sh
. "$TOP_SRCDIR/tests/live/live-lib.sh"
rss_kb () { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2> /dev/null; }
cpu_ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null; }

storm () { while :; do /bin/true; done; }
storm & loops="$loops $!"
storm & loops="$loops $!"

"$EU_STACKTRACE" -a -F 999 --stats -f folded -o "$tmp/out.folded" > "$tmp/out" 2> "$tmp/err" &
prof=$!
if ! wait_until 600 has_events "$prof"; then
  echo "# the profiler holds no perf event after 30 s:"; sed 's/^/#   /' "$tmp/err" | head -20
fi

# One VmRSS reading a second; the clock runs, the readings do not synchronize.
t0=$(date +%s)
ticks0=$(cpu_ticks "$prof")
: > "$tmp/rss"
i=0
while [ $i -lt "$SECONDS_RUN" ] && ! gone "$prof"; do
  sleep 1
  i=$((i + 1))
  r=$(rss_kb "$prof")
  [ -n "$r" ] && echo "$i $r" >> "$tmp/rss"
done
ticks1=$(cpu_ticks "$prof")
t1=$(date +%s)
end_run "$prof" INT 60
prof=""
for p in $loops; do kill "$p" 2> /dev/null; done
for p in $loops; do wait "$p" 2> /dev/null; done
loops=""

echo "# VmRSS (MB) each second: $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 1024 }' "$tmp/rss")"
hz=$(getconf CLK_TCK)
cpus=$(getconf _NPROCESSORS_ONLN)
awk -v a="${ticks0:-0}" -v b="${ticks1:-0}" -v hz="$hz" -v s=$((t1 - t0)) -v n="$cpus" 'BEGIN {
  if (s > 0) printf "# profiler CPU: %.1f s in %d s on %d CPUs (%.1f%% of the machine)\n",
    (b - a) / hz, s, n, 100 * (b - a) / hz / (s * n) }'
grep -E 'samples read|lost|overhead|evicted' "$tmp/err" | sed 's/^/# /'

if [ "$status" -eq 0 ] || [ "$status" -eq 130 ]; then
  tap_ok "-a under a fork storm ends on one SIGINT (status $status)"
else
  tap_not_ok "-a under a fork storm ends on one SIGINT: status $status"
  sed 's/^/#   /' "$tmp/err" | head -20
fi

warm=$((SECONDS_RUN / 6))
[ "$warm" -ge 2 ] || warm=2
awk -v limit=$RSS_LIMIT_KB -v warm=$warm -v slack=$SLACK_KB -v want="$SECONDS_RUN" '
  { n++; if ($2 > peak) peak = $2
    if ($1 <= warm) { if ($2 > early) early = $2 } else if ($2 > late) late = $2 }
  END {
    if (n < want - 1)
      { print "not ok 2 - peak VmRSS: only " n " readings of " want; 
        print "not ok 3 - VmRSS flat after " warm " s: only " n " readings"; exit }
    printf "%s 2 - peak VmRSS %.1f MB, under %d MB\n", (peak < limit ? "ok" : "not ok"), peak / 1024, limit / 1024
    printf "%s 3 - VmRSS flat after %d s: %.1f MB at most later, %.1f MB at most before (slack %d MB)\n",
      (late <= early + slack ? "ok" : "not ok"), warm, late / 1024, early / 1024, slack / 1024
  }' "$tmp/rss" > "$tmp/rss.tap"
tap_relay < "$tmp/rss.tap"

# Lost samples: none, or "lost N samples (x.x% of M)", under 1% or said why.
lost_line=$(grep -E 'lost [0-9]+ samples \([0-9.]+% of [0-9]+\)' "$tmp/err" | head -1)
if grep -qiE 'lost [0-9]+ (records|events)|samples lost by the kernel' "$tmp/err" && [ -z "$lost_line" ]; then
  tap_not_ok "lost samples are reported as a share of the samples: $(grep -i lost "$tmp/err" | head -2 | tr '\n' ' ')"
elif [ -z "$lost_line" ]; then
  tap_ok "no sample lost"
else
  share=$(echo "$lost_line" | sed -n 's/.*(\([0-9.]*\)% of.*/\1/p')
  if awk -v s="$share" 'BEGIN { exit !(s < 1) }'; then
    tap_ok "lost samples reported as a share, under 1%: $lost_line"
  elif echo "$lost_line" | grep -q 'ring' && echo "$lost_line" | grep -q -- '--mmap-pages\|-F'; then
    tap_ok "lost samples reported as a share, with why and what to do: $lost_line"
  else
    tap_not_ok "lost samples under 1% or said why: $lost_line"
  fi
fi
tap_done
