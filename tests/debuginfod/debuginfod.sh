#!/bin/sh
# debuginfod: what the files at hand lack comes by build-id from a real
# debuginfod (Debian's, started here on a free port and talked to on
# 127.0.0.1, indexing a folder of this test's own, with a private client
# cache), within the time bounds even when the server is broken.
#
#   a. A program whose only CFI is the .debug_frame of its separate debug
#      file (built -fno-asynchronous-unwind-tables -fno-unwind-tables, the
#      debug file split off with objcopy --only-keep-debug, then .eh_frame
#      and .eh_frame_hdr removed and the symbols stripped): without
#      debuginfod almost no sample reaches main; with it at least 99% unwind
#      to _start, named from the debug file's symbol table.  Both rates are
#      printed.  The build-id is asked for once, whatever --jobs, and
#      libdwfl's own debuginfod use stays off.
#   b. A program deleted after it was recorded: with the server holding its
#      executable, its frames are symbolized.
#   c. A server that is down, one that accepts and never answers, one that
#      never accepts (the SYNs dropped, as by a firewall), one that answers
#      404: the run ends within the time bound (checked generously),
#      frames are kept as addresses, and --stats names the failure.  A
#      request cancelled by the budget leaves no false 404 in the cache.
#   d. --debuginfod-symbols: a stripped program that has CFI is not asked
#      for without it, and gets its names from its debuginfo with it.
#
# Nothing skips: a missing tool is a failure.  Needs perf (root, or
# perf_event_paranoid <= 1), debuginfod, binutils and python3.  Set
# E2E_KEEP=1 to keep the temporary folder.
set -u
: "${EU_STACKTRACE:?}" "${EU_STACKTRACE_ASAN:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
: "${PERF:=perf}" "${PYTHON3:=python3}" "${DEBUGINFOD:=debuginfod}"
here=$TOP_SRCDIR/tests/debuginfod
# The runs below choose their servers themselves.
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_CACHE_PATH

. "$TOP_SRCDIR/tests/tap.sh"
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
tap_plan 19
diag () { tap_diag_file "$1" "${2:-30}"; }
# check CONDITION-STATUS NAME [FILE-FOR-DIAGNOSTICS]
verdict () {
  if [ "$1" -eq 0 ]; then tap_ok "$2"; else tap_not_ok "$2"; [ -n "${3:-}" ] && diag "$3" 40; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-debuginfod.XXXXXX") || exit 1
pids=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  for pid in $pids; do kill "$pid" 2>/dev/null; done
  for pid in $pids; do wait "$pid" 2>/dev/null; done
  if [ -n "${E2E_KEEP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir "$tmp/home" "$tmp/srv" "$tmp/a" "$tmp/b" "$tmp/c" "$tmp/d"

# 1. Tools and programs; the no-CFI program and its debug file.
problem=""
for tool in "$PERF" "$PYTHON3" "$DEBUGINFOD" objcopy strip nm readelf timeout; do
  command -v "$tool" >/dev/null 2>&1 || problem="$problem${problem:+; }$tool is not in PATH"
done
for prog in "$EU_STACKTRACE" "$EU_STACKTRACE_ASAN" "$TOP_BUILDDIR/tests/debuginfod/nocfi" \
            "$TOP_BUILDDIR/tests/workloads/deep"; do
  [ -x "$prog" ] || problem="$problem${problem:+; }$prog is not built (make check builds it)"
done
sections () { readelf -SW "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] \([^ ]*\) *\([A-Z_]*\) .*/\1 \2/p'; }
if [ -z "$problem" ]; then
  full=$TOP_BUILDDIR/tests/debuginfod/nocfi
  nocfi_debug=$tmp/srv/nocfi.debug
  objcopy --only-keep-debug "$full" "$nocfi_debug" &&
  objcopy --strip-all --remove-section=.eh_frame --remove-section=.eh_frame_hdr \
    "$full" "$tmp/a/nocfi" &&
  cp "$tmp/a/nocfi" "$tmp/c/nocfi" &&
  cp "$TOP_BUILDDIR/tests/workloads/deep" "$tmp/b/deep" &&
  cp "$TOP_BUILDDIR/tests/workloads/deep" "$tmp/c/deep" &&
  cp "$TOP_BUILDDIR/tests/workloads/deep" "$tmp/srv/deep" &&
  strip --strip-all -o "$tmp/d/deep" "$TOP_BUILDDIR/tests/workloads/deep" ||
    problem="objcopy or strip failed"
fi
if [ -z "$problem" ]; then
  sections "$tmp/a/nocfi" > "$tmp/a/sections"
  sections "$nocfi_debug" > "$tmp/a/debug-sections"
  if grep -q -e '^\.eh_frame ' -e '^\.debug_frame ' -e ' SYMTAB$' "$tmp/a/sections"; then
    problem="the stripped program still has .eh_frame, .debug_frame or .symtab"
  elif ! grep -q '^\.debug_frame PROGBITS' "$tmp/a/debug-sections" \
       || ! grep -q ' SYMTAB$' "$tmp/a/debug-sections"; then
    problem="the debug file lacks .debug_frame or .symtab"
  fi
fi
if [ -z "$problem" ]; then
  tap_ok "the program's only CFI and symbols are in its separate debug file"
else
  tap_not_ok "setup: $problem"
fi

# 2. Recordings.  b's and c's deep are deleted afterwards; d's is stripped
# (it keeps .eh_frame) and shares its build-id with the deep the server has.
record () {  # NAME COMMAND...
  name=$1; shift
  run_perf --timeout 120 record -q -e cpu-clock -F 999 --call-graph dwarf \
    -o "$tmp/$name.data" -- "$@" > "$tmp/$name.record.out" 2>&1 && [ -s "$tmp/$name.data" ]
}
if [ -z "$problem" ]; then
  if record a "$tmp/a/nocfi" 1500 && record b "$tmp/b/deep" 800 &&
     record c sh -c "'$tmp/c/nocfi' 500 && '$tmp/c/deep' 500" && record d "$tmp/d/deep" 800
  then
    rm -f "$tmp/b/deep" "$tmp/c/deep"
    tap_ok "perf record --call-graph dwarf of the workloads; b's and c's deep deleted"
  else
    problem="perf record failed"
    tap_not_ok "perf record of the workloads: $problem"
    for f in "$tmp"/*.record.out; do diag "$f" 10; done
  fi
else
  tap_not_ok "perf record of the workloads: not run ($problem)"
fi

# 3. The server: on a free port, ready when its first scan is done and it
# serves both files by build-id.
free_port () {
  "$PYTHON3" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
build_id () { readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1; }
wait_ready () {  # PORT URL-PATH...
  "$PYTHON3" - "$@" <<'EOF'
import re, sys, time, urllib.error, urllib.request
port, paths = sys.argv[1], sys.argv[2:]
base = "http://127.0.0.1:%s" % port
def value(text, pattern):
    m = re.search(pattern + r"\s+(\d+)", text)
    return int(m.group(1)) if m else None
deadline = time.time() + 60
while time.time() < deadline:
    try:
        m = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
        if (value(m, r'thread_work_total\{role="traverse"\}') or 0) >= 1 \
           and value(m, r'thread_work_pending\{role="scan"\}') == 0 \
           and value(m, r'thread_busy\{role="scan"\}') == 0:
            for p in paths:
                urllib.request.urlopen(base + p, timeout=5).read()
            sys.exit(0)
    except (OSError, urllib.error.URLError):
        pass
    time.sleep(0.2)
print("not ready within 60 s")
sys.exit(1)
EOF
}
url=""
if [ -z "$problem" ]; then
  nocfi_id=$(build_id "$tmp/a/nocfi")
  deep_id=$(build_id "$tmp/srv/deep")
  tries=0
  while [ $tries -lt 5 ] && [ -z "$url" ]; do
    tries=$((tries + 1))
    port=$(free_port)
    "$DEBUGINFOD" -F -p "$port" -d "$tmp/db.sqlite" -t 0 -g 0 "$tmp/srv" \
      > "$tmp/server.log" 2>&1 &
    server_pid=$!
    pids="$pids $server_pid"
    if wait_ready "$port" "/buildid/$nocfi_id/debuginfo" "/buildid/$deep_id/executable" \
         > "$tmp/ready.out" 2>&1; then
      url=http://127.0.0.1:$port
    else
      kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
      rm -f "$tmp/db.sqlite"*
    fi
  done
  if [ -n "$url" ]; then
    tap_ok "debuginfod serves the test's folder at $url (indexed, per /metrics)"
  else
    problem="debuginfod did not start"
    tap_not_ok "debuginfod serves the test's folder: $problem"
    diag "$tmp/ready.out"; diag "$tmp/server.log"
  fi
else
  tap_not_ok "debuginfod serves the test's folder: not run ($problem)"
fi

# eu NAME URLS PROGRAM ARGS...: one run, with a private cache and HOME,
# DEBUGINFOD_URLS set to URLS (- for unset).  Leaves NAME.out, .err, .rc
# and .time (seconds) in $tmp.
eu () {
  name=$1 urls=$2
  shift 2
  start=$(date +%s.%N)
  if [ "$urls" = - ]; then
    env -u DEBUGINFOD_URLS HOME="$tmp/home" DEBUGINFOD_CACHE_PATH="$tmp/cache-$name" \
      timeout 300 "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  else
    env HOME="$tmp/home" DEBUGINFOD_CACHE_PATH="$tmp/cache-$name" DEBUGINFOD_URLS="$urls" \
      timeout 300 "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
  fi
  echo $? > "$tmp/$name.rc"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' > "$tmp/$name.time"
}
rc () { cat "$tmp/$1.rc"; }
secs () { cat "$tmp/$1.time"; }
# summary NAME LABEL: the number after LABEL in NAME's --stats summary.
summary () { sed -n "s/^ *$2  *\([0-9][0-9]*\).*/\1/p" "$tmp/$1.err" | tail -n 1; }
rates () {  # JSONL MODULE COMM [rates.py options]
  j=$1 m=$2 c=$3
  shift 3
  "$PYTHON3" "$here/rates.py" --json "$j" --symbols "$nocfi_debug" --module "$m" --comm "$c" "$@"
}
frames () { "$PYTHON3" "$here/module-frames.py" "$@"; }
get () { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
server_gets () { grep -c "GET /buildid/$1/" "$tmp/server.log"; }

# 4-7. a: the program without CFI.
if [ -z "$problem" ]; then
  A=$tmp/a/nocfi
  eu a-off - "$EU_STACKTRACE" -i "$tmp/a.data" -f json -o "$tmp/a-off.jsonl" -s
  without=$(rates "$tmp/a-off.jsonl" "$A" nocfi --max-main 5)
  st=$?
  echo "# a, without debuginfod: $without"
  [ "$(rc a-off)" -eq 0 ] || st=1
  verdict $st "a: without debuginfod almost no sample reaches main ($without)" "$tmp/a-off.err"

  eu a-on - "$EU_STACKTRACE" -i "$tmp/a.data" -f json -o "$tmp/a-on.jsonl" -s -j 1 \
    --debuginfod="$url"
  with=$(rates "$tmp/a-on.jsonl" "$A" nocfi --min-complete 99)
  st=$?
  echo "# a, with debuginfod:    $with"
  total=$(echo "$with" | sed 's/ samples.*//')
  named=$(echo "$with" | sed -n 's/.*, \([0-9]*\) name main/\1/p')
  [ "$(rc a-on)" -eq 0 ] && [ "$(summary a-on requests)" = 1 ] &&
    [ "$(summary a-on 'modules with CFI from it')" = 1 ] &&
    [ "$(summary a-on 'symbol tables from it')" = 1 ] &&
    [ $((named * 100)) -ge $((total * 99)) ] || st=1
  verdict $st "a: with debuginfod >= 99% of samples unwind to _start, named from the debug file ($with)" \
    "$tmp/a-on.err"

  # One request reaches the server in all: none from libdwfl's own client
  # (for libc, say), none from the second thread.
  gets_before=$(grep -c 'GET ' "$tmp/server.log")
  nocfi_before=$(server_gets "$nocfi_id")
  eu a-jobs "$url" "$EU_STACKTRACE" -i "$tmp/a.data" -f json -o "$tmp/a-jobs.jsonl" -s -j 2
  st=0
  [ "$(rc a-jobs)" -eq 0 ] && [ "$(summary a-jobs requests)" = 1 ] &&
    [ "$(grep -c 'GET ' "$tmp/server.log")" -eq $((gets_before + 1)) ] &&
    [ "$(server_gets "$nocfi_id")" -eq $((nocfi_before + 1)) ] &&
    cmp -s "$tmp/a-on.jsonl" "$tmp/a-jobs.jsonl" || st=1
  verdict $st "a: DEBUGINFOD_URLS turns it on; with -j 2 the build-id is asked for once, same output" \
    "$tmp/a-jobs.err"

  gets_before=$(grep -c 'GET ' "$tmp/server.log")
  eu a-no "$url" "$EU_STACKTRACE" -i "$tmp/a.data" -f json -o "$tmp/a-no.jsonl" -s --no-debuginfod
  st=0
  [ "$(rc a-no)" -eq 0 ] && [ "$(grep -c 'GET ' "$tmp/server.log")" -eq "$gets_before" ] &&
    cmp -s "$tmp/a-off.jsonl" "$tmp/a-no.jsonl" && ! grep -q '^debuginfod' "$tmp/a-no.err" || st=1
  verdict $st "a: --no-debuginfod with DEBUGINFOD_URLS set: no request reaches the server (libdwfl's own client is off too)" \
    "$tmp/a-no.err"
else
  for t in "a: without debuginfod" "a: with debuginfod" "a: -j 2" "a: --no-debuginfod"; do
    tap_not_ok "$t: not run ($problem)"
  done
fi

# 8-9. b: the deleted program.
if [ -z "$problem" ]; then
  B=$tmp/b/deep
  eu b-off - "$EU_STACKTRACE" -i "$tmp/b.data" -f json -o "$tmp/b-off.jsonl" -s
  counts=$(frames "$tmp/b-off.jsonl" "$B")
  echo "# b, without debuginfod: $counts"
  st=0
  [ "$(rc b-off)" -eq 0 ] && [ "$(get "$counts" frames)" -gt 0 ] &&
    [ "$(get "$counts" symbolized)" -eq 0 ] &&
    [ "$(get "$counts" addressed)" -eq "$(get "$counts" frames)" ] &&
    grep -q "$B: host path: No such file" "$tmp/b-off.err" || st=1
  verdict $st "b: without debuginfod the deleted program's frames are addresses, --stats says why" \
    "$tmp/b-off.err"

  eu b-on - "$EU_STACKTRACE" -i "$tmp/b.data" -f json -o "$tmp/b-on.jsonl" -s --debuginfod="$url"
  counts=$(frames "$tmp/b-on.jsonl" "$B")
  echo "# b, with debuginfod:    $counts"
  st=0
  [ "$(rc b-on)" -eq 0 ] && [ "$(get "$counts" frames)" -gt 0 ] &&
    [ "$(get "$counts" symbolized)" -eq "$(get "$counts" frames)" ] &&
    [ "$(summary b-on debuginfod)" = 1 ] && [ "$(summary b-on 'executables fetched')" = 1 ] &&
    grep -q '"symbol":"main"' "$tmp/b-on.jsonl" || st=1
  verdict $st "b: with the server holding its executable, the deleted program's frames are symbolized" \
    "$tmp/b-on.err"
else
  tap_not_ok "b: without debuginfod: not run ($problem)"
  tap_not_ok "b: with debuginfod: not run ($problem)"
fi

# 10-14. c: broken servers.  c.data needs two requests: the debuginfo of
# nocfi and the executable of the deleted deep.
start_fake () {  # MODE: sets fake_url
  rm -f "$tmp/fake.port"
  "$PYTHON3" "$here/fake-server.py" "$1" "$tmp/fake.port" 2> "$tmp/fake-$1.err" &
  pids="$pids $!"
  i=0
  while [ ! -s "$tmp/fake.port" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  fake_url=http://127.0.0.1:$(cat "$tmp/fake.port" 2>/dev/null)
}
# broken NAME URL BOUND-SECONDS REASON [OPTIONS...]: the run ends within
# BOUND, has every sample of the run without debuginfod, the deleted
# program's frames as addresses, and names REASON in --stats.
broken () {
  name=$1 burl=$2 bound=$3 reason=$4
  shift 4
  eu "$name" "$burl" "$EU_STACKTRACE" -i "$tmp/c.data" -f json -o "$tmp/$name.jsonl" -s \
    --debuginfod-timeout=3 "$@"
  counts=$(frames "$tmp/$name.jsonl" "$tmp/c/deep")
  ref=$(frames "$tmp/c-off.jsonl" "$tmp/c/deep")
  echo "# $name: $(secs "$name") s; $counts"
  [ "$(rc "$name")" -eq 0 ] &&
    awk -v t="$(secs "$name")" -v b="$bound" 'BEGIN { exit !(t < b) }' &&
    [ "$(get "$counts" samples)" -eq "$(get "$ref" samples)" ] &&
    [ "$(get "$counts" frames)" -gt 0 ] && [ "$(get "$counts" symbolized)" -eq 0 ] &&
    [ "$(get "$counts" addressed)" -eq "$(get "$counts" frames)" ] &&
    grep -q "$reason" "$tmp/$name.err"
}
if [ -z "$problem" ]; then
  eu c-off - "$EU_STACKTRACE" -i "$tmp/c.data" -f json -o "$tmp/c-off.jsonl" -s

  down=http://127.0.0.1:$(free_port)
  broken c-down "$down" 10 "connection refused"
  st=$?
  grep -q "not asked: the server failed earlier" "$tmp/c-down.err" || st=1
  verdict $st "c: a server that is down: the run ends at once ($(secs c-down) s < 10 s), addresses kept, --stats names it" \
    "$tmp/c-down.err"

  start_fake hang
  hang_url=$fake_url
  # One timeout (3 s), not one per module, and no retries: 2 x 3 x 3 s
  # without the bounds.
  broken c-hang "$hang_url" 14 "no answer within 3 s"
  st=$?
  grep -q "not asked: the server failed earlier" "$tmp/c-hang.err" &&
    ! grep -q 'waiting for' "$tmp/c-hang.err" || st=1
  verdict $st "c: a server that never answers: one timeout for the run ($(secs c-hang) s < 14 s), addresses kept, --stats names it" \
    "$tmp/c-hang.err"

  # libcurl would wait 300 s for the connection: the progress function
  # gives up after the timeout.
  start_fake blackhole
  broken c-blackhole "$fake_url" 14 "no answer within 3 s"
  verdict $? "c: a server that never accepts the connection: one timeout ($(secs c-blackhole) s < 14 s), addresses kept, --stats names it" \
    "$tmp/c-blackhole.err"

  start_fake 404
  broken c-404 "$fake_url" 10 "not found on the server (404): 2"
  verdict $? "c: a server that answers 404: the run ends at once ($(secs c-404) s < 10 s), addresses kept, --stats names it" \
    "$tmp/c-404.err"

  broken c-budget "$hang_url" 8 "cancelled: the budget ran out" --debuginfod-timeout=30 \
    --debuginfod-budget=1
  st=$?
  grep -q "budget (--debuginfod-budget) was spent" "$tmp/c-budget.err" &&
    [ ! -e "$tmp/cache-c-budget/$nocfi_id/debuginfo" ] &&
    [ ! -e "$tmp/cache-c-budget/$deep_id/executable" ] || st=1
  verdict $st "c: the budget cancels a request that waits ($(secs c-budget) s < 8 s) and leaves no false 404 in the cache" \
    "$tmp/c-budget.err"
else
  for t in down hang blackhole 404 budget; do tap_not_ok "c: $t: not run ($problem)"; done
fi

# 15. d: --debuginfod-symbols.
if [ -z "$problem" ]; then
  D=$tmp/d/deep
  eu d-cfi "$url" "$EU_STACKTRACE" -i "$tmp/d.data" -f json -o "$tmp/d-cfi.jsonl" -s
  eu d-sym "$url" "$EU_STACKTRACE" -i "$tmp/d.data" -f json -o "$tmp/d-sym.jsonl" -s \
    --debuginfod-symbols
  without=$(frames "$tmp/d-cfi.jsonl" "$D")
  with=$(frames "$tmp/d-sym.jsonl" "$D")
  echo "# d, without --debuginfod-symbols: $without"
  echo "# d, with it:                      $with"
  st=0
  [ "$(rc d-cfi)" -eq 0 ] && [ "$(rc d-sym)" -eq 0 ] && [ "$(summary d-cfi requests)" = 0 ] &&
    [ "$(get "$without" symbolized)" -eq 0 ] &&
    [ "$(get "$with" symbolized)" -eq "$(get "$with" frames)" ] &&
    [ "$(summary d-sym 'symbol tables from it')" -ge 1 ] || st=1
  verdict $st "d: a stripped program with CFI is asked for only with --debuginfod-symbols, then named" \
    "$tmp/d-sym.err"
else
  tap_not_ok "d: --debuginfod-symbols: not run ($problem)"
fi

# 16. Progress: on a terminal, not otherwise (c-hang above wrote to a file).
if [ -z "$problem" ]; then
  env HOME="$tmp/home" DEBUGINFOD_CACHE_PATH="$tmp/cache-tty" \
    "$PYTHON3" "$here/on-tty.py" "$tmp/tty.out" timeout 60 "$EU_STACKTRACE" \
    -i "$tmp/a.data" -o "$tmp/tty.txt" --debuginfod="$hang_url" --debuginfod-timeout=2 \
    > /dev/null 2>&1
  tr '\r' '\n' < "$tmp/tty.out" > "$tmp/tty.lines"
  grep -q "debuginfod: debuginfo of nocfi: waiting for $hang_url" "$tmp/tty.lines"
  verdict $? "progress shows on a terminal (module, server), and not in a file" "$tmp/tty.lines"
else
  tap_not_ok "progress on a terminal: not run ($problem)"
fi

# 17-19. The sanitizer build: no report, the plain build's output.
asan () {  # NAME URLS ARGS... (after -i DATA)
  name=$1 aurls=$2 ref=$3
  shift 3
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    eu "$name" "$aurls" "$EU_STACKTRACE_ASAN" -f json -o "$tmp/$name.jsonl" "$@"
  ! grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' \
      -e 'SUMMARY: [A-Za-z]*Sanitizer' "$tmp/$name.err" &&
    [ "$(rc "$name")" -eq 0 ] && cmp -s "$tmp/$ref.jsonl" "$tmp/$name.jsonl"
}
if [ -z "$problem" ]; then
  asan asan-a "$url" a-jobs -i "$tmp/a.data" -j 2
  verdict $? "a: the sanitizer build runs clean, with the plain build's output" "$tmp/asan-a.err"
  asan asan-b - b-on -i "$tmp/b.data" --debuginfod="$url"
  verdict $? "b: the sanitizer build runs clean, with the plain build's output" "$tmp/asan-b.err"
  asan asan-c "$hang_url" c-hang -i "$tmp/c.data" --debuginfod-timeout=3
  verdict $? "c: the sanitizer build runs clean against a server that never answers" \
    "$tmp/asan-c.err"
else
  for t in a b c; do tap_not_ok "$t: the sanitizer build: not run ($problem)"; done
fi

tap_done
