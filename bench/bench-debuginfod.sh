#!/bin/sh
# bench-debuginfod.sh: a program whose only CFI is the .debug_frame of its
# separate debug file, unwound by eu-stacktrace without and with debuginfod,
# and by perf script on the same file, side by side.
#
# Builds tests/debuginfod/nocfi.c with -fno-asynchronous-unwind-tables
# -fno-unwind-tables (gcc then writes its CFI to .debug_frame), splits off
# the debug file (objcopy --only-keep-debug), removes .eh_frame and
# .eh_frame_hdr and strips the program, records it with perf record
# --call-graph dwarf, starts a debuginfod that serves the debug file, and
# prints for each tool how many samples reach main and how many unwind
# completely, to _start, with the median time of the runs.
#
# perf script gets two chances: as it is, and with the debug file added to
# its build-id cache (perf buildid-cache --add), where it finds it for
# symbols.  Debian's perf 6.1 is built without debuginfod.
#
# Nothing is asserted: the figures are printed for a person to read.
#
# Environment (defaults in brackets):
#   EU_STACKTRACE   the program under test [../eu-stacktrace next to this script]
#   PERF            perf [perf]
#   PYTHON3         python3 [python3]
#   DEBUGINFOD      the debuginfod server [debuginfod] (Debian: debuginfod)
#   CC, CFLAGS      compiler for the workload [cc, -O2 -g]
#   BENCH_SECONDS   CPU seconds of the recording [3]
#   BENCH_FREQ      sampling frequency in Hz [4000]
#   BENCH_RUNS      timed runs of each configuration [5]

set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EU_STACKTRACE=${EU_STACKTRACE:-$here/../eu-stacktrace}
PERF=${PERF:-perf}
PYTHON3=${PYTHON3:-python3}
DEBUGINFOD=${DEBUGINFOD:-debuginfod}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
BENCH_SECONDS=${BENCH_SECONDS:-3}
BENCH_FREQ=${BENCH_FREQ:-4000}
BENCH_RUNS=${BENCH_RUNS:-5}
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_CACHE_PATH

die () { echo "bench: $*" >&2; exit 1; }
say () { echo "bench: $*" >&2; }

for tool in "$EU_STACKTRACE" "$PERF" "$PYTHON3" "$DEBUGINFOD" "$CC" objcopy nm; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found (see the Environment above)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench-debuginfod.XXXXXX")
server_pid=""
cleanup () {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir "$work/srv" "$work/home" "$work/perf-home"

# --- the program and its debug file ---------------------------------------
say "building tests/debuginfod/nocfi.c without .eh_frame"
# shellcheck disable=SC2086 # CFLAGS is a list of flags
$CC $CFLAGS -fno-asynchronous-unwind-tables -fno-unwind-tables -o "$work/nocfi.full" \
  "$top/tests/debuginfod/nocfi.c" || die "cannot build nocfi.c"
objcopy --only-keep-debug "$work/nocfi.full" "$work/srv/nocfi.debug"
objcopy --strip-all --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
  "$work/nocfi.full" "$work/nocfi"
debug=$work/srv/nocfi.debug

say "recording: nocfi $((BENCH_SECONDS * 1000)) (cpu-clock at $BENCH_FREQ Hz, --call-graph dwarf)"
HOME=$work/home "$PERF" record -e cpu-clock -F "$BENCH_FREQ" --call-graph dwarf \
  -o "$work/nocfi.data" -- "$work/nocfi" $((BENCH_SECONDS * 1000)) \
  > /dev/null 2> "$work/record.log" || { cat "$work/record.log" >&2; die "perf record failed"; }
data=$work/nocfi.data

# --- the server ------------------------------------------------------------
port=$("$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$DEBUGINFOD" -F -p "$port" -d "$work/db.sqlite" -t 0 -g 0 "$work/srv" > "$work/server.log" 2>&1 &
server_pid=$!
url=http://127.0.0.1:$port
"$PYTHON3" - "$url" <<'EOF' || die "debuginfod did not become ready (see its log)"
import re, sys, time, urllib.request
url = sys.argv[1]
deadline = time.time() + 60
while time.time() < deadline:
    try:
        m = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
        val = lambda p: int((re.search(p + r"\s+(\d+)", m) or [0, -1])[1])
        if val(r'thread_work_total\{role="traverse"\}') >= 1 \
           and val(r'thread_work_pending\{role="scan"\}') == 0 \
           and val(r'thread_busy\{role="scan"\}') == 0:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit(1)
EOF
say "debuginfod at $url"

# --- runs ------------------------------------------------------------------
# median_time CMD...: the median wall time of BENCH_RUNS runs, in seconds.
# The debuginfod client cache is emptied before each run: every run fetches.
median_time () {
  "$PYTHON3" - "$BENCH_RUNS" "$work/cache" "$@" <<'EOF'
import shutil, statistics, subprocess, sys, time
runs, cache, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
times = []
for _ in range(runs):
    shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - start)
print("%.3f" % statistics.median(times))
EOF
}
rates () {  # --json FILE | --perf-script FILE
  "$PYTHON3" "$top/tests/debuginfod/rates.py" "$@" --symbols "$debug" --module "$work/nocfi" \
    --comm nocfi
}
eu () { env HOME="$work/home" DEBUGINFOD_CACHE_PATH="$work/cache" "$EU_STACKTRACE" "$@"; }
perf_script_as () { env HOME="$1" "$PERF" script -i "$data" -F comm,tid,ip,sym,dso --no-inline; }

say "eu-stacktrace without debuginfod"
rm -rf "$work/cache"
eu -i "$data" -f json -o "$work/off.jsonl"
eu_off=$(rates --json "$work/off.jsonl")
eu_off_t=$(median_time env HOME="$work/home" "$EU_STACKTRACE" -i "$data" -f text -o /dev/null)

say "eu-stacktrace --debuginfod"
rm -rf "$work/cache"
eu -i "$data" -f json -o "$work/on.jsonl" -s --debuginfod="$url" 2> "$work/on.err"
eu_on=$(rates --json "$work/on.jsonl")
requests=$(sed -n 's/^ *requests  *\([0-9]*\) .*/\1/p' "$work/on.err")
eu_on_t=$(median_time env HOME="$work/home" DEBUGINFOD_CACHE_PATH="$work/cache" \
  "$EU_STACKTRACE" -i "$data" -f text -o /dev/null --debuginfod="$url")

say "perf script"
perf_script_as "$work/perf-home" > "$work/ps.txt" 2> /dev/null
ps_plain=$(rates --perf-script "$work/ps.txt")
ps_plain_t=$(median_time env HOME="$work/perf-home" "$PERF" script -i "$data" \
  -F comm,tid,ip,sym,dso --no-inline)

say "perf script with the debug file in its build-id cache"
mkdir "$work/perf-home-debug"
HOME=$work/perf-home-debug "$PERF" buildid-cache --add "$debug" > /dev/null 2>&1 ||
  say "warning: perf buildid-cache --add failed"
perf_script_as "$work/perf-home-debug" > "$work/ps-debug.txt" 2> /dev/null
ps_debug=$(rates --perf-script "$work/ps-debug.txt")
ps_debug_t=$(median_time env HOME="$work/perf-home-debug" "$PERF" script -i "$data" \
  -F comm,tid,ip,sym,dso --no-inline)

machine="$(nproc) CPUs, $(uname -sr), $("$PERF" --version 2>&1)"
echo "machine: $machine"
echo "recording: nocfi, $BENCH_SECONDS s of CPU at $BENCH_FREQ Hz (cpu-clock, --call-graph dwarf); its only CFI in the debug file"
echo "median of $BENCH_RUNS runs each; the samples of nocfi that reach main, and that unwind to _start:"
echo "eu-stacktrace, no debuginfod:        $eu_off; ${eu_off_t} s"
echo "eu-stacktrace --debuginfod (cold):   $eu_on; ${eu_on_t} s, $requests request(s)"
echo "perf script:                         $ps_plain; ${ps_plain_t} s"
echo "perf script, debug file in cache:    $ps_debug; ${ps_debug_t} s"
