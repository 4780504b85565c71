#!/bin/sh
# JIT frames named from the JIT's own maps: node running a JavaScript hot
# loop (tests/workloads/jit-hot.js), recorded with perf record --call-graph
# dwarf.
#  - --perf-basic-prof (/tmp/perf-PID.map): perf script names the JIT frames
#    from the same map (the oracle); ours must name the same frames the
#    same in >= 95% of the samples where perf names any.
#  - --perf-prof (a jitdump, jit-PID.dump, which node maps executable):
#    perf inject --jit turns it into ELF files that perf script reads (the
#    oracle; it needs perf record -k 1); ours reads the dump itself.
#  - live (eu-stacktrace -- node ...): the map is read while node writes it.
#  - hostile maps: what a user can plant at /tmp/perf-PID.map (a FIFO, a
#    symlink to /proc/kmsg, a 1 TiB sparse file, another user's file) must
#    neither block nor bloat the profiler nor name a frame.
# The sanitizer build runs over the first recording.  Needs node (nodejs)
# and perf; run as root or with perf_event_paranoid <= 1.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
CHECK="$TOP_SRCDIR/tests/e2e/check-names.py"
NODE=${NODE:-node}
JS="$TOP_SRCDIR/tests/workloads/jit-hot.js"

tap_plan 17
e2e_setup
problem=$(tool_problem node "$NODE")
[ -z "$problem" ] && problem=$(tool_problem perf "$PERF")
maps=""
# shellcheck disable=SC2154  # m is the loop variable of the trap's own code
trap '[ "${BASHPID:-$(sh -c '"'"'echo $PPID'"'"')}" = "$$" ] && { rm -rf "$tmp"; for m in $maps; do rm -f "$m"; done; }' EXIT

# check MODE ARGS...: the two TAP lines of check-names.py.
check ()
{
  "$PYTHON3" "$CHECK" "$@" --tap-start $((tap_n + 1)) > "$tmp/check.out" 2>&1
  cat "$tmp/check.out"
  got=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/check.out")
  _failed=0
  grep -q '^not ok' "$tmp/check.out" && _failed=1
  tap_counted "$got" "$_failed"
  while [ "$got" -lt 2 ]; do
    got=$((got + 1))
    tap_not_ok "names check did not complete"
  done
}

# 1. /tmp/perf-PID.map, offline.
mkdir "$tmp/map"
# shellcheck disable=SC2016  # $$ is the inner shell's pid
if [ -z "$problem" ] \
     && (cd "$tmp/map" && run_perf record -e cpu-clock -F 999 --call-graph dwarf -o perf.data \
           -- sh -c 'echo $$ > pid; exec "$0" --perf-basic-prof "$1" 2000' "$NODE" "$JS") \
        > "$tmp/map/rec.out" 2>&1; then
  pid=$(cat "$tmp/map/pid")
  maps="$maps /tmp/perf-$pid.map"
  tap_ok "perf record of node --perf-basic-prof (it wrote /tmp/perf-$pid.map)"
else
  tap_diag_file "$tmp/map/rec.out"
  tap_not_ok "perf record of node --perf-basic-prof: ${problem:-failed}"
  problem=${problem:-recording failed}
fi
if [ -z "$problem" ] && run_perf script -i "$tmp/map/perf.data" -F "$PERF_FIELDS" --no-inline \
     --ns > "$tmp/map/perf.txt" 2> "$tmp/map/perf.err"; then
  tap_ok "perf script unwinds it"
else
  tap_not_ok "perf script unwinds it: ${problem:-failed}"
fi
if [ -z "$problem" ] && "$EU_STACKTRACE" -i "$tmp/map/perf.data" -f json -o "$tmp/map/ours.jsonl" \
     2> "$tmp/map/ours.err"; then
  tap_ok "eu-stacktrace unwinds it"
  check jit --perf-script "$tmp/map/perf.txt" --ours "$tmp/map/ours.jsonl" --name "perf map"
else
  tap_diag_file "$tmp/map/ours.err"
  tap_not_ok "eu-stacktrace unwinds it: ${problem:-failed}"
  tap_not_ok "perf map: not compared"
  tap_not_ok "perf map: not compared"
fi
if [ -z "$problem" ]; then
  if ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1 \
       "$EU_STACKTRACE_ASAN" -i "$tmp/map/perf.data" -f json -o "$tmp/map/asan.jsonl" \
       2> "$tmp/map/asan.err" \
       && ! grep -q -e 'Sanitizer' -e 'runtime error:' "$tmp/map/asan.err" \
       && cmp -s "$tmp/map/ours.jsonl" "$tmp/map/asan.jsonl"; then
    tap_ok "the sanitizer build runs clean on it, with the same output"
  else
    tap_diag_file "$tmp/map/asan.err"
    tap_not_ok "the sanitizer build runs clean on it, with the same output"
  fi
else
  tap_not_ok "the sanitizer build runs clean on it: $problem"
fi

# 2. A jitdump, offline: perf inject --jit is the oracle.
mkdir "$tmp/dump"
if [ -z "$problem" ] \
     && (cd "$tmp/dump" && run_perf record -k 1 -e cpu-clock -F 999 --call-graph dwarf \
           -o perf.data -- "$NODE" --perf-prof "$JS" 2000 \
         && run_perf inject --jit -i perf.data -o injected.data \
         && run_perf script -i injected.data -F "$PERF_FIELDS" --no-inline --ns > perf.txt) \
        > "$tmp/dump/rec.out" 2>&1 \
     && ls "$tmp/dump"/jit-*.dump > /dev/null 2>&1; then
  tap_ok "perf record -k 1 of node --perf-prof (a jitdump), perf inject --jit, perf script"
else
  tap_diag_file "$tmp/dump/rec.out"
  tap_not_ok "perf record -k 1 of node --perf-prof, perf inject --jit: ${problem:-failed}"
fi
if [ -z "$problem" ] && "$EU_STACKTRACE" -i "$tmp/dump/perf.data" -f json \
     -o "$tmp/dump/ours.jsonl" 2> "$tmp/dump/ours.err"; then
  tap_ok "eu-stacktrace unwinds the recording (not the injected one)"
  check jit --perf-script "$tmp/dump/perf.txt" --ours "$tmp/dump/ours.jsonl" --name jitdump
else
  tap_diag_file "$tmp/dump/ours.err"
  tap_not_ok "eu-stacktrace unwinds the recording: ${problem:-failed}"
  tap_not_ok "jitdump: not compared"
  tap_not_ok "jitdump: not compared"
fi

# 3. Live: the map is read while node writes it.
mkdir "$tmp/live"
# shellcheck disable=SC2016  # $$ is the inner shell's pid
if [ -z "$problem" ] \
     && (cd "$tmp/live" && "$EU_STACKTRACE" -f json -o ours.jsonl \
           -- sh -c 'echo $$ > pid; exec "$0" --perf-basic-prof "$1" 2000' "$NODE" "$JS") \
        > "$tmp/live/out" 2>&1; then
  pid=$(cat "$tmp/live/pid")
  maps="$maps /tmp/perf-$pid.map"
  tap_ok "eu-stacktrace -- node --perf-basic-prof (live)"
  check jit-only --ours "$tmp/live/ours.jsonl" --map "/tmp/perf-$pid.map" --name live
else
  tap_diag_file "$tmp/live/out"
  tap_not_ok "eu-stacktrace -- node --perf-basic-prof (live): ${problem:-failed}"
  tap_not_ok "live: not checked"
  tap_not_ok "live: not checked"
fi

# 4. Hostile maps, planted before node (without --perf-basic-prof) runs.
hostile ()
{
  name=$1 plant=$2 refused=$3
  mkdir "$tmp/$name"
  # shellcheck disable=SC2016  # $$ and $m are the inner shell's
  (cd "$tmp/$name" && timeout 120 "$EU_STACKTRACE" --stats -f json -o ours.jsonl \
     -- sh -c 'echo $$ > pid; m=/tmp/perf-$$.map; '"$plant"'; exec "$0" "$1" 500' \
        "$NODE" "$JS") > "$tmp/$name/out" 2>&1
  rc=$?
  pid=$(cat "$tmp/$name/pid" 2>/dev/null)
  [ -n "$pid" ] && maps="$maps /tmp/perf-$pid.map"
  if [ $rc = 0 ] && [ -s "$tmp/$name/ours.jsonl" ] \
       && ! grep -q -e '"symbol":"EVIL' -e '"symbol":"JS:' "$tmp/$name/ours.jsonl" \
       && { [ "$refused" = no ] || grep -q "^refused untrusted files: [1-9]" "$tmp/$name/out"; }; then
    tap_ok "a $name at /tmp/perf-PID.map: the run completes, no frame named from it (refused: $refused)"
  else
    tap_diag_file "$tmp/$name/out"
    tap_not_ok "a $name at /tmp/perf-PID.map: the run completes, no frame named from it (refused: $refused; status $rc)"
  fi
}
if [ -z "$problem" ]; then
  # shellcheck disable=SC2016  # $m is set by the inner shell
  hostile fifo 'mkfifo $m' yes
  # shellcheck disable=SC2016  # $m is set by the inner shell
  hostile symlink 'ln -s /proc/kmsg $m' yes
  # 1 TiB without a newline: one window read, no line in it, given up.
  # shellcheck disable=SC2016  # $m is set by the inner shell
  hostile huge-file 'truncate -s 1T $m' no
  # shellcheck disable=SC2016  # $m is set by the inner shell
  hostile foreign-file 'printf "0 ffffffffffff EVIL\n" > $m; chown nobody $m' yes
else
  for i in 1 2 3 4; do tap_not_ok "hostile maps: not run ($problem)"; done
fi
tap_done
