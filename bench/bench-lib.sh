# Shared by the bench scripts: settings, checks, a work directory, timing,
# medians, and the workload and its recording.  Source it after setting
# `here` and the script's own defaults (BENCH_SECONDS, ...).
# shellcheck shell=sh

EU_STACKTRACE=${EU_STACKTRACE:-$here/../eu-stacktrace}
PERF=${PERF:-perf}
PYTHON3=${PYTHON3:-python3}
GNU_TIME=${GNU_TIME:-/usr/bin/time}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
BENCH_THREADS=${BENCH_THREADS:-1}
BENCH_FREQ=${BENCH_FREQ:-4000}
BENCH_EVENT=${BENCH_EVENT:-cpu-clock}
BENCH_RUNS=${BENCH_RUNS:-5}

die () { echo "bench: $*" >&2; exit 1; }
say () { echo "bench: $*" >&2; }

command -v "$EU_STACKTRACE" >/dev/null 2>&1 ||
  die "no eu-stacktrace at '$EU_STACKTRACE': build it (make) or set EU_STACKTRACE"
command -v "$PERF" >/dev/null 2>&1 || die "no perf ('$PERF'): set PERF"
command -v "$PYTHON3" >/dev/null 2>&1 || die "no python3 ('$PYTHON3'): set PYTHON3"
"$GNU_TIME" -f %M -o /dev/null -- true 2>/dev/null ||
  die "no GNU time at '$GNU_TIME' (apt-get install time): set GNU_TIME"

if [ -n "${BENCH_DIR:-}" ]; then
  mkdir -p "$BENCH_DIR"
  work=$(cd "$BENCH_DIR" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
fi

# measure CMD...: runs CMD once with standard output to /dev/null and
# prints "WALL_SECONDS PEAK_RSS_KB".  Python times the run (perf_counter);
# GNU time reads the peak RSS, because it must come from a small parent:
# Linux keeps a process's peak RSS across execve, so a child that Python
# spawns would report at least Python's own ~14 MB (GNU time's floor is
# ~1 MB).  Standard error goes to $work/stderr; a failing run shows it and
# stops the bench.
measure_py='
import os, subprocess, sys, time
rss_file = os.environ["BENCH_RSS"]
with open(os.environ["BENCH_STDERR"], "wb") as err:
    start = time.perf_counter()
    status = subprocess.call([os.environ["GNU_TIME"], "-f", "%M", "-o", rss_file, "--"]
                             + sys.argv[1:], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
    wall = time.perf_counter() - start
if status != 0:
    sys.exit("exit status %d" % status)
with open(rss_file) as f:
    rss = int(f.read().split()[-1])
print("%.4f %d" % (wall, rss))
'
measure () {
  GNU_TIME=$GNU_TIME BENCH_RSS=$work/rss BENCH_STDERR=$work/stderr \
    "$PYTHON3" -c "$measure_py" "$@" || {
    say "failed: $*"
    sed 's/^/  | /' "$work/stderr" >&2
    exit 1
  }
}

# median FILE COLUMN
median () {
  awk -v c="$2" '{ print $c }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The workload: BENCH_WORKLOAD, or workload.c built into $work.
if [ -n "${BENCH_WORKLOAD:-}" ]; then
  workload=$BENCH_WORKLOAD
  command -v "$workload" >/dev/null 2>&1 || die "BENCH_WORKLOAD '$workload' is not a program"
else
  workload=$work/workload
  if [ ! -x "$workload" ] || [ -n "$(find "$here/workload.c" -newer "$workload")" ]; then
    # shellcheck disable=SC2086 # CFLAGS is a list of flags
    $CC $CFLAGS -pthread -o "$workload" "$here/workload.c" || die "cannot build workload.c"
  fi
fi

# shellcheck disable=SC2034  # used by the scripts that source this file
machine="$(nproc) CPUs, $(uname -sr), $("$PERF" --version 2>&1)"

# record NAME SECONDS: records the workload into $work/NAME.data, unless
# an earlier run with the same settings left it there.
record () {
  data=$work/$1.data
  stamp="$(cksum < "$workload") $2 $BENCH_THREADS $BENCH_EVENT $BENCH_FREQ"
  if [ -s "$data" ] && [ -f "$data.stamp" ] && [ "$(cat "$data.stamp")" = "$stamp" ]; then
    say "reusing $data"
    return
  fi
  rm -f "$data" "$data.stamp"
  say "recording $1: $workload $2 $BENCH_THREADS ($BENCH_EVENT at $BENCH_FREQ Hz, --call-graph dwarf)"
  "$PERF" record -e "$BENCH_EVENT" -F "$BENCH_FREQ" --call-graph dwarf \
    -o "$data" -- "$workload" "$2" "$BENCH_THREADS" >/dev/null 2>"$work/record.log" || {
    sed 's/^/  | /' "$work/record.log" >&2
    die "perf record failed"
  }
  grep -iE 'captured|lost|throttl' "$work/record.log" | sed 's/^/  | /' >&2 || :
  echo "$stamp" > "$data.stamp"
}

count_samples () {
  "$PERF" script -i "$1" -F tid 2>/dev/null | wc -l | tr -d ' '
}
