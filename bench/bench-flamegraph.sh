#!/bin/sh
# bench-flamegraph.sh: what -f svg and -f pprof cost, and how big they are.
#
# Records bench/workload.c for about 100,000 samples, then times
# eu-stacktrace -f folded, -f svg and -f pprof on the same file, alternating
# runs, and prints the medians of wall and CPU time (user + sys, all
# threads: steadier than wall time on a busy machine), the ratios
# svg/folded and pprof/folded (the target: under 1.10 in CPU time, i.e.
# writing either costs less than 10% of the run)
# and the sizes of the two files (targets: SVG under 2 MB, pprof under
# 1 MB).  -f folded is the anchor: it unwinds and aggregates the same
# stacks, so the difference is what building and writing the format costs.
#
# Nothing here asserts: the figures are printed for a person to read.  The
# script fails only when a step fails.
#
# Environment (defaults in brackets):
#   EU_STACKTRACE   the program under test [../eu-stacktrace next to this script]
#   PERF, PYTHON3   [perf, python3]
#   CC, CFLAGS      compiler for bench/workload.c [cc, -O2 -g]
#   BENCH_SECONDS   CPU seconds of the recording [25: 100,000 samples at 4000 Hz]
#   BENCH_FREQ      sampling frequency in Hz [4000]
#   BENCH_EVENT     perf event [cpu-clock]
#   BENCH_RUNS      timed runs of each format [5]
#   BENCH_DIR       keep the recording here, and reuse the one an earlier
#                   run left there [a temporary directory, removed at exit]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
BENCH_SECONDS=${BENCH_SECONDS:-25}
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"

# --- the recording --------------------------------------------------------
record flamegraph "$BENCH_SECONDS"

# --- runs -------------------------------------------------------------------
# One untimed run of each format warms the page cache, counts the samples
# and keeps the outputs for their sizes; then BENCH_RUNS alternating timed
# runs of each, in Python (perf_counter around the process).
"$PYTHON3" - "$EU_STACKTRACE" "$data" "$work" "$BENCH_RUNS" <<'EOF'
import os, resource, statistics, subprocess, sys, time

eu, data, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
formats = ["folded", "svg", "pprof"]

def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def run(fmt, out):
    """(wall seconds, CPU seconds of all its threads, its --stats)"""
    c0, start = cpu(), time.perf_counter()
    r = subprocess.run([eu, "-i", data, "-f", fmt, "-o", out, "-s"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, universal_newlines=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit("bench: eu-stacktrace -f %s failed:\n%s" % (fmt, r.stderr))
    return wall, cpu() - c0, r.stderr

sizes, samples = {}, None
for fmt in formats:
    out = os.path.join(work, "out." + fmt)
    _, _, stats = run(fmt, out)
    sizes[fmt] = os.path.getsize(out)
    for line in stats.splitlines():
        if line.startswith("samples read:"):
            samples = int(line.split()[-1])
print("bench: %s samples; outputs: %s" % (samples, ", ".join(
    "%s %d bytes" % (f, sizes[f]) for f in formats)), file=sys.stderr)

times = {f: [] for f in formats}
cpus = {f: [] for f in formats}
for i in range(runs):
    for fmt in formats:
        wall, used, _ = run(fmt, os.devnull)
        times[fmt].append(wall)
        cpus[fmt].append(used)
    print("bench: run %d/%d: %s (wall, CPU)" % (i + 1, runs, ", ".join(
        "%s %.3f %.3f s" % (f, times[f][-1], cpus[f][-1]) for f in formats)), file=sys.stderr)

med = {f: statistics.median(times[f]) for f in formats}
mcpu = {f: statistics.median(cpus[f]) for f in formats}
svg_mb, pprof_mb = sizes["svg"] / 1e6, sizes["pprof"] / 1e6
print()
print("samples: %d (%d CPU, median of %d alternating runs)" % (samples, os.cpu_count(), runs))
print("load average at the end: %.2f (figures from a busy machine vary more)"
      % os.getloadavg()[0])
for f in formats:
    print("eu-stacktrace -f %-6s median %.3f s (%.0fk samples/s), CPU %.3f s"
          % (f, med[f], samples / med[f] / 1000, mcpu[f]))
for f in ("svg", "pprof"):
    r, rc = med[f] / med["folded"], mcpu[f] / mcpu["folded"]
    print("ratio %s / folded: wall %.3f, CPU %.3f (writing %s costs %+.1f%% of the run's "
          "CPU time; target < 10%%): %s"
          % (f, r, rc, f, 100 * (rc - 1), "ok" if rc < 1.10 else "OVER"))
print("svg size:   %.2f MB (target < 2 MB): %s" % (svg_mb, "ok" if svg_mb < 2 else "OVER"))
print("pprof size: %.3f MB (target < 1 MB): %s" % (pprof_mb, "ok" if pprof_mb < 1 else "OVER"))
EOF
