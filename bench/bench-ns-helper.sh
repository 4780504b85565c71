#!/bin/sh
# The namespace helper's cost (bench/README): the round trip of one fd
# request, each way, and the share of the unwinding run spent waiting for
# the helper on a namespace workload.  Root (it makes mount namespaces);
# run from a build tree, by `make bench-ns-helper'.
set -u
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"
: "${PYTHON3:=python3}"
N=${N:-10000}             # requests per round-trip measurement
# NSH_SPIN_US (protocol.h's ST_NSH_SPIN_US): how long nsh-client polls for
# a reply before it sleeps, as the core's client does; 0 measures without.
# BASELINE_HELPER: another build's helper, timed in turn with this one;
# REPEAT (3): round-trip runs of each helper and way; BATCH (1): requests
# nsh-client sends before it reads their replies.
CONTAINERS=${CONTAINERS:-8}   # processes, each in a namespace of its own
# RECORD_SECONDS (2): the length of the recording the unwinding run reads;
# the helper's costs are the same for any length (once per file).
RECORD_SECONDS=${RECORD_SECONDS:-2}
export EU_STACKTRACE TOP_SRCDIR TOP_BUILDDIR PYTHON3
if [ "$(id -u)" != 0 ]; then
  echo "bench-ns-helper.sh: run as root (it makes mount namespaces)" >&2
  exit 1
fi
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
# ns-lib.sh prints TAP for tests; here the numbers are what counts.
make_stage

echo "machine: $(nproc) CPUs, $(uname -sr)" > "$tmp/summary"

# 1. Round trips: N requests for the same file of a process in a root of
# its own, by each way, from nsh-client (C, the project's protocol code).
# With BASELINE_HELPER (another build's eu-stacktrace-ns-helper), the two
# helpers take turns, REPEAT times each way, so that both see the same
# load; the figures are the medians over the repeats.
start_ns root rtt "" sleep 600 || exit 1
REPEAT=${REPEAT:-3}
BATCH=${BATCH:-1}
# With perf, each run is also counted (perf stat: the client and the helper
# it spawns): CPU time, context switches and system calls a request, which
# say more than a median of wall times on a loaded machine.
perf_stat=""
if perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o /dev/null true \
    > /dev/null 2>&1; then
  perf_stat=yes
fi
helpers="$helper"
ipc_floor=$TOP_BUILDDIR/bench/ipc-floor
: > "$tmp/rtt-floor"
: > "$tmp/rtt-floor2"
[ -n "${BASELINE_HELPER:-}" ] && helpers="$BASELINE_HELPER $helper"
echo "load before the round trips: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp/summary"
for way in all map_files openat2 setns; do
  for h in $helpers; do : > "$tmp/rtt-$way-$(echo "$h" | cksum | cut -d' ' -f1)"; done
  rep=0
  while [ $rep -lt "$REPEAT" ]; do
    for h in $helpers; do
      if [ -n "$perf_stat" ]; then
        perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -o "$tmp/perf.out" \
          "$nsh_client" "$h" rtt "$pid" /app/bin/nsprog "$N" "$way" "$BATCH" > "$tmp/rtt.out" 2>&1
        # " cpu_us C cs X syscalls S", a request's share of the whole run
        # (the helper's start-up included, spread over N)
        counts=$(awk -F, -v n="$N" '/task-clock/ { printf " cpu_us %.1f", $1 * 1000 / n }
          /context-switches/ { printf " cs %.2f", $1 / n }
          /sys_enter/ { printf " syscalls %.1f", $1 / n }' "$tmp/perf.out")
      else
        "$nsh_client" "$h" rtt "$pid" /app/bin/nsprog "$N" "$way" "$BATCH" > "$tmp/rtt.out" 2>&1
        counts=""
      fi
      echo "$(head -n 1 "$tmp/rtt.out")$counts" >> "$tmp/rtt-$way-$(echo "$h" | cksum | cut -d' ' -f1)"
      sed -n 2p "$tmp/rtt.out" > "$tmp/rtt-fds-$way"
    done
    # The anchor, in turn with the helpers' map_files runs: the helper's
    # three processes and messages without its work (bench/ipc-floor.c).
    # And two processes (no parser): what the 20 us target would leave
    # for a helper's work without the privilege split.
    if [ "$way" = map_files ]; then
      "$ipc_floor" "$stage/root/app/bin/nsprog" "$N" >> "$tmp/rtt-floor" 2>&1
      "$ipc_floor" "$stage/root/app/bin/nsprog" "$N" 2 >> "$tmp/rtt-floor2" 2>&1
    fi
    rep=$((rep + 1))
  done
  for h in $helpers; do
    label=this
    [ "$h" != "$helper" ] && label=baseline
    # requests N ok N way W median_us M p99_us P mean_us A, one line a repeat
    "$PYTHON3" - "$way" "$label" "$tmp/rtt-$way-$(echo "$h" | cksum | cut -d' ' -f1)" \
      >> "$tmp/summary" <<'PY'
import statistics, sys
way, label, path = sys.argv[1:4]
rows = [line.split() for line in open(path) if line.startswith("requests")]
med = [float(r[7]) for r in rows]
p99 = [float(r[9]) for r in rows]
mean = [float(r[11]) for r in rows]
n, ok = sum(int(r[1]) for r in rows), sum(int(r[3]) for r in rows)
used = rows[0][5] if rows else "?"
print(f"round trip, {label:8s} {way + ' (' + used + '):':22s} median {statistics.median(med) if med else 0:7.1f} us, "
      f"p99 {statistics.median(p99) if p99 else 0:8.1f} us, mean {statistics.median(mean) if mean else 0:7.1f} us "
      f"({len(rows)} runs, {n} requests, {ok} ok; medians of the runs: "
      f"{', '.join(f'{m:.0f}' for m in med)})")
def counted(key):
    vals = [float(r[r.index(key) + 1]) for r in rows if key in r]
    return statistics.median(vals) if vals else None
cpu, cs, sc = counted("cpu_us"), counted("cs"), counted("syscalls")
if cpu is not None:
    print(f"  {label:8s} a request (perf stat, client and helper, medians of the runs): CPU "
          f"{cpu:.1f} us, {cs:.2f} context switches, {sc:.1f} system calls")
PY
  done
  echo "  $(cat "$tmp/rtt-fds-$way")" >> "$tmp/summary"
done
# The floor, and this helper's map_files median against it.
"$PYTHON3" - "$tmp/rtt-floor" "$tmp/rtt-map_files-$(echo "$helper" | cksum | cut -d' ' -f1)" \
  "$tmp/rtt-floor2" >> "$tmp/summary" <<'PY'
import statistics, sys
def medians(path):
    return [float(line.split()[7]) for line in open(path) if line.startswith("requests")]
floor, this, floor2 = medians(sys.argv[1]), medians(sys.argv[2]), medians(sys.argv[3])
if floor2:
    print(f"round trip, floor    (2 processes, no work): median {statistics.median(floor2):7.1f} us "
          f"(medians of the runs: {', '.join(f'{m:.0f}' for m in floor2)})")
else:
    print("round trip, floor (2 processes): bench/ipc-floor did not run: "
          + open(sys.argv[3]).read().strip())
if not floor:
    print("round trip, floor: bench/ipc-floor did not run: " + open(sys.argv[1]).read().strip())
else:
    f = statistics.median(floor)
    print(f"round trip, floor    (3 processes, no work): median {f:7.1f} us "
          f"(medians of the runs: {', '.join(f'{m:.0f}' for m in floor)})")
    if this:
        print(f"  this helper's map_files median is {statistics.median(this) / f:.2f}x the floor")
PY
echo "load after the round trips: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$tmp/summary"
kill "$pid"

# 2. The share, on a namespace workload: CONTAINERS processes, each in a
# mount namespace of its own with its own copies of the program, its
# library, libc and the dynamic linker (files only the helper can reach).
cat > "$tmp/workload.sh" <<WORKLOAD
i=0
while [ \$i -lt $CONTAINERS ]; do
  mkdir -p "$tmp/w\$i"
  sh "$nsh_src/ns-run.sh" root "$tmp/w\$i" "$stage" "" -- /app/bin/nsprog "\$@" &
  i=\$((i + 1))
done
wait
WORKLOAD

# share LABEL STATS-FILE WALL-SECONDS: the time spent waiting for the
# helper, from eu-stacktrace's --stats, against the run.
share () {
  "$PYTHON3" - "$@" >> "$tmp/summary" <<'PY'
import re, sys
label, path, wall = sys.argv[1], sys.argv[2], float(sys.argv[3])
text = open(path).read()
def num(pattern, default=0.0):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default
cpu = num(r"profiler CPU time: ([0-9.]+) s", -1)
samples = num(r"samples read: +([0-9]+)")
requests = num(r"namespace helper: +([0-9]+) requests")
found = num(r"requests, ([0-9]+) found")
rtt_total = num(r"round trips: .* total ([0-9.]+) ms") / 1e3
median = num(r"round trips: +median ([0-9.]+) us")
p99 = num(r"round trips: .*p99 ([0-9.]+) us")
first = num(r"first replies: +([0-9.]+) ms") / 1e3
helper = rtt_total + first
print(f"{label}: {samples:.0f} samples, {requests:.0f} helper requests ({found:.0f} found)")
print(f"  waiting for the helper {helper * 1e3:.1f} ms: round trips {rtt_total * 1e3:.1f} ms "
      f"(median {median:.0f} us, p99 {p99:.0f} us), first replies (the helper starting) "
      f"{first * 1e3:.1f} ms")
if cpu >= 0:
    print(f"  eu-stacktrace CPU time {cpu * 1e3:.0f} ms in a {wall:.2f} s run: the wait is "
          f"{100 * helper / (cpu + helper):.2f}% of CPU time plus wait")
else:
    print(f"  unwinding run {wall * 1e3:.0f} ms: share spent waiting for the helper "
          f"{100 * helper / wall:.2f}% (target < 1%)")
PY
}
# timed NAME.wall CMD...: runs CMD, its stderr to NAME.err, and writes
# its wall time in seconds to NAME.wall.  The clock is read by the process
# that starts CMD, right before and after: reading it in a process of its
# own after the run (python -c, even date) would add that process's start
# to the run: tens of milliseconds for Python, hundreds through a pyenv
# shim, against a run of about 50 ms.
timed () {
  "$PYTHON3" - "$@" <<'PY'
import subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
with open(out.replace(".wall", ".err"), "w") as err:
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=err)
    t1 = time.monotonic()
open(out, "w").write(f"{t1 - t0}\n")
PY
}

# 2a. The unwinding run alone: record the workload live (RECORD_SECONDS), stop its
# processes (alive, for the helper to pin, but off the CPUs), then time
# eu-stacktrace unwinding the recording.
sh "$tmp/workload.sh" 60000 > /dev/null 2>&1 &
started_pids="$started_pids $!"
i=0
while [ "$(pgrep -c -x nsprog)" -lt "$CONTAINERS" ] && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
sleep 0.3
pids=$(pgrep -d, -x nsprog)
timeout -s INT "$RECORD_SECONDS" "$EU_STACKTRACE" -p "$pids" --record "$tmp/ns.data" -f json -o /dev/null \
  2> "$tmp/record.err"
for p in $(echo "$pids" | tr , ' '); do kill -STOP "$p"; done
for jobs in 1 2; do
  timed "$tmp/offline-$jobs.wall" "$EU_STACKTRACE" --stats -j "$jobs" -i "$tmp/ns.data" -f text \
    -o /dev/null
  share "unwinding a recording, -j $jobs ($CONTAINERS processes in $CONTAINERS mount namespaces)" \
    "$tmp/offline-$jobs.err" "$(cat "$tmp/offline-$jobs.wall")"
done
for p in $(echo "$pids" | tr , ' '); do kill -KILL "$p"; done

# 2b. Live: the workload and eu-stacktrace share the CPUs, and a round
# trip includes the helper's wait for one.
for jobs in 1 2; do
  timed "$tmp/live-$jobs.wall" "$EU_STACKTRACE" --stats -j "$jobs" -f json -o /dev/null \
    -- sh "$tmp/workload.sh" 600
  share "live, -j $jobs ($CONTAINERS processes of 0.6 s of CPU each)" \
    "$tmp/live-$jobs.err" "$(cat "$tmp/live-$jobs.wall")"
done
cat "$tmp/summary"
