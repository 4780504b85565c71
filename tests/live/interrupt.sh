#!/bin/sh
# Interrupted runs lose nothing and corrupt nothing.  The sanitizer build
# samples the whole machine (-a) on this kernel, then is interrupted many
# times: every input mode (a perf.data file, with -j1 and -j2; perf's pipe
# format on standard input; a Sysprof stream; a command; -p; -a) and every
# output format (json, folded, svg, pprof, sysprof), by SIGINT, SIGTERM, two
# and three SIGINTs, a signal to its process group and `timeout -s INT'.
# Each run must end with no sanitizer report, an exit status of 0 or 128+N
# (124 under timeout), a well-formed output, and no profiled command left
# running (each has a unique marker in its argv).  A command that ignores
# SIGINT and SIGTERM is ended all the same, and three signals stop the run
# at once.
#
# Signals are sent at a moment the test observes, never after a sleep: once
# the output file (or its temporary file) exists, once the command has
# exec'd, once the run holds its perf events, once a message says the
# previous signal was taken.  Every wait is bounded.
set -u
: "${EU_STACKTRACE_ASAN:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}" "${PERF:=perf}" "${PYTHON3:=python3}"
E=$EU_STACKTRACE_ASAN
W=$TOP_BUILDDIR/tests/workloads
SYSPROF_CHECK=$TOP_BUILDDIR/tests/sysprof/sysprof-check
CHECK="$PYTHON3 $TOP_SRCDIR/tests/live/check-outputs.py"
# halt_on_error: a report ends the run, and shows in its stderr.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
unset DEBUGINFOD_URLS
. "$TOP_SRCDIR/tests/tap.sh"
# shellcheck source=tests/run-perf.sh
. "$TOP_SRCDIR/tests/run-perf.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-interrupt.XXXXXX")
# The work directory goes with this shell only: a subshell that ends
# through a trap (a CI run once lost it half-way, "rm: cannot remove ...")
# must not take it along.  $$ is the main shell's pid in every subshell;
# bash's BASHPID (make check runs tests with bash) or, in dash, sh -c's
# $PPID is the pid of the process that runs the trap.
# shellcheck disable=SC2317  # called by name through wait_until
# shellcheck disable=SC3028  # BASHPID under bash; sh -c's PPID under dash
main_shell () { [ "${BASHPID:-$(sh -c 'echo $PPID')}" = "$$" ]; }
if [ -n "${INTERRUPT_KEEP:-}" ]; then
  echo "# keeping $tmp"
else
  trap 'if main_shell; then rm -rf "$tmp"; else echo "interrupt.sh: subshell ${BASHPID:-?} of $$ ended through the EXIT trap; $tmp left to the main shell" >&2; fi' EXIT
fi
trap 'exit 130' INT
trap 'exit 143' TERM
tap_plan 7

diag () { sed 's/^/#   /' "$@" | head -20; }

# wait_until CMD...: up to ~60 s for CMD to succeed (polled every 50 ms,
# not slept on; each poll runs pgrep or ls, which cost a loaded machine).
wait_until () {
  _i=0
  while ! "$@"; do
    _i=$((_i + 1))
    [ $_i -le 1200 ] || return 1
    sleep 0.05
  done
}
alive () { kill -0 "$1" 2> /dev/null; }
# shellcheck disable=SC2317  # called by name through wait_until
gone_or () { ! alive "$pid" || "$@"; }
# shellcheck disable=SC2317  # called by name through wait_until
has_file () { [ -n "$(ls -A "$1" 2> /dev/null)" ]; }
has_text () { grep -q "$1" "$2" 2> /dev/null; }
# shellcheck disable=SC2317  # called by name through wait_until
exec_d () { pgrep -f "^$W/deep [0-9]+ $1\$" > /dev/null; }
# has_events PID: PID, or its child (under timeout), has perf events open
# shellcheck disable=SC2317  # called by name through wait_until
has_events () {
  for _p in "$1" $(pgrep -P "$1"); do
    # shellcheck disable=SC2010  # ls -l shows where each fd of /proc/PID/fd points
    ls -l "/proc/$_p/fd" 2> /dev/null | grep -q perf_event && return 0
  done
  return 1
}

# 1: the whole machine for two seconds (INTERRUPT_ALL_SECONDS): /proc comm
# names longer than 24 characters (kworker/u8:1-ext4-rsv-conversion) once
# overflowed a record.
all_s=${INTERRUPT_ALL_SECONDS:-2}
"$E" -a -f json -o "$tmp/all.jsonl" -- sleep "$all_s" > /dev/null 2> "$tmp/all.err"
st=$?
echo "json $tmp/all.jsonl" > "$tmp/all.list"
$CHECK "$tmp/all.list" > "$tmp/all.check" 2>&1
r=$?
echo "# -a for $all_s s: status $st, $(wc -l < "$tmp/all.jsonl") samples, longest comm: $(awk '{ print length, $0 }' /proc/[0-9]*/task/[0-9]*/comm 2> /dev/null | sort -rn | head -1)"
if [ $st -eq 0 ] && [ $r -eq 0 ] && ! grep -qE "Sanitizer|runtime error" "$tmp/all.err"; then
  tap_result 0 "-a -- sleep $all_s with the sanitizer build: status 0, no report, JSON well-formed"
else
  diag "$tmp/all.err" "$tmp/all.check"
  tap_result 1 "-a -- sleep $all_s with the sanitizer build: status 0, no report, JSON well-formed"
fi

# Inputs: a short recording, as a file and in perf's pipe format; a Sysprof
# stream of it.  Pipes and streams are cut in half: the writer stays
# silent after the first half, so a run waits on its input when signalled.
if ! run_perf record -q -N -B -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/small.data" \
       -- "$W/deep" 150 > /dev/null 2> "$tmp/record.err" ||
   ! run_perf record -q -N -B -e cpu-clock -F 999 --call-graph dwarf -o - -- "$W/deep" 150 \
       > "$tmp/pipe.data" 2>> "$tmp/record.err" ||
   ! "$EU_STACKTRACE" -i "$tmp/small.data" -m passthru -f sysprof -o "$tmp/stream" \
       2>> "$tmp/record.err"; then
  diag "$tmp/record.err"
  tap_fill "not run: cannot record the inputs"
  exit 0
fi
half () { head -c $(($(wc -c < "$1") / 2)) "$1" > "$2"; }
half "$tmp/pipe.data" "$tmp/pipe.half"
half "$tmp/stream" "$tmp/stream.half"

ext () { case $1 in json) echo jsonl;; folded) echo folded;; svg) echo svg;; pprof) echo pb.gz;; sysprof) echo syscap;; esac; }

runs=0; bad_status=0; reports=0; leftovers=0; forced=0; target_killed=0
: > "$tmp/outputs.list"
: > "$tmp/syscaps.list"
mkdir "$tmp/runs"

# start MODE FORMAT OUTDIR MARKER [timeout]: starts a run in the
# background; sets pid (of eu-stacktrace, or of timeout), writer, target.
start () {
  _mode=$1 _fmt=$2 _dir=$3 _m=$4 _pre=${5:-}
  _out="$_dir/o/out.$(ext "$_fmt")"
  writer='' target=''
  case $_mode in
    file|file-j2)
      _j=1; [ "$_mode" = file-j2 ] && _j=2
      $_pre "$E" -j $_j -i "$tmp/small.data" -f "$_fmt" -o "$_out" 2> "$_dir/err" &
      pid=$! ;;
    pipe|stream)
      _in=$tmp/pipe.half; [ "$_mode" = stream ] && _in=$tmp/stream.half
      mkfifo "$_dir/fifo"
      (cat "$_in"; exec sleep 300) > "$_dir/fifo" &
      writer=$!
      $_pre "$E" -i - -f "$_fmt" -o "$_out" < "$_dir/fifo" 2> "$_dir/err" &
      pid=$! ;;
    cmd)
      $_pre "$E" -f "$_fmt" -o "$_out" -- "$W/deep" 600000 "$_m" 2> "$_dir/err" &
      pid=$! ;;
    cmd-deaf)
      # A command that ignores SIGINT and SIGTERM (the ignoring survives exec).
      $_pre "$E" -f "$_fmt" -o "$_out" -- sh -c "trap '' INT TERM; exec $W/deep 600000 $_m" \
        2> "$_dir/err" &
      pid=$! ;;
    all)
      $_pre "$E" -a -F 199 -f "$_fmt" -o "$_out" -- "$W/deep" 600000 "$_m" 2> "$_dir/err" &
      pid=$! ;;
    pid)
      "$W/deep" 600000 "$_m" > /dev/null &
      target=$!
      $_pre "$E" -p "$target" -f "$_fmt" -o "$_out" 2> "$_dir/err" &
      pid=$! ;;
  esac
}

# ready MODE DIR MARKER: waits for the moment to signal.
ready () {
  case $1 in
    file|file-j2|pipe|stream) wait_until gone_or has_file "$2/o" ;;
    cmd|cmd-deaf|all) wait_until gone_or exec_d "$3" ;;
    pid) wait_until gone_or has_events "$pid" ;;
  esac
}

# signal HOW DIR: single signals, one at a time.
signal () {
  case $1 in
    int) kill -s INT "$pid" 2> /dev/null ;;
    term) kill -s TERM "$pid" 2> /dev/null ;;
    pgrp) kill -s INT -- "-$pid" 2> /dev/null ;;
    int2)  # the second once the first was taken (or back to back, as timeout)
      kill -s INT "$pid" 2> /dev/null
      [ "$_mode" = stream ] && wait_until gone_or has_text "to its end" "$2/err"
      kill -s INT "$pid" 2> /dev/null ;;
    int3)
      kill -s INT "$pid" 2> /dev/null
      [ "$_mode" = stream ] && wait_until gone_or has_text "to its end" "$2/err"
      # until the second is acknowledged: signals do not queue
      _k=0
      while alive "$pid" && ! has_text "finishing" "$2/err" && [ $_k -lt 100 ]; do
        kill -s INT "$pid" 2> /dev/null; _k=$((_k + 1))
        wait_until gone_or has_text "finishing" "$2/err" || true
      done
      kill -s INT "$pid" 2> /dev/null ;;
  esac
}

# watchdog SECONDS PID: kills PID and its children (timeout's command)
# after SECONDS, unless killed first: a child left running would hold the
# test's standard output, and make check would wait for it forever.
watchdog () {
  sleep "$1" > /dev/null 2>&1 &
  _s=$!
  trap 'kill $_s 2> /dev/null; exit 0' TERM
  wait $_s
  pkill -KILL -P "$2" 2> /dev/null
  kill -KILL "$2" 2> /dev/null
}

# one MODE FORMAT HOW
one () {
  runs=$((runs + 1))
  _t0=$(date +%s.%N)
  _d=$tmp/runs/$runs
  mkdir "$_d" "$_d/o"
  _m="eu-st-interrupt-$$-$runs"
  if [ "$3" = timeout ]; then
    # timeout takes SIGALRM as its deadline: it signals its command, then
    # its whole process group (two SIGINTs), as when its time runs out.
    # Sent once the run is under way: a fixed deadline could fall before
    # main on a loaded machine (the sanitizer runtime starts slowly), where
    # the default action kills the run and no program can change that.
    # Without the exit-time leak check: timeout's second SIGINT goes to its
    # process group, which holds LeakSanitizer's tracer while it checks,
    # and once in a few hundred runs that left the run spinning forever in
    # the check (a CI run of the sanitizer build, run 17: "file json
    # timeout").  Leaks under two SIGINTs are checked by int2.
    start "$1" "$2" "$_d" "$_m" "env ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 timeout -s INT 600"
    ready "$1" "$_d" "$_m"
    kill -s ALRM "$pid" 2> /dev/null
  else
    if [ "$3" = pgrp ]; then
      start "$1" "$2" "$_d" "$_m" setsid   # its own process group
    else
      start "$1" "$2" "$_d" "$_m"
    fi
    ready "$1" "$_d" "$_m"
    signal "$3" "$_d"
  fi
  # bounded: a run that hangs is killed, and fails
  watchdog 60 "$pid" &
  _wd=$!
  wait "$pid"
  _st=$?
  kill "$_wd" 2> /dev/null
  [ -n "$writer" ] && kill "$writer" 2> /dev/null
  case $_st in
    0) ;;
    130|143) forced=$((forced + 1)) ;;
    124) [ "$3" = timeout ] || { bad_status=$((bad_status + 1)); echo "# run $runs ($*): status $_st"; diag "$_d/err"; } ;;
    *) bad_status=$((bad_status + 1)); echo "# run $runs ($*): status $_st"; diag "$_d/err" ;;
  esac
  if grep -qE "Sanitizer|runtime error" "$_d/err"; then
    reports=$((reports + 1)); echo "# run $runs ($*): sanitizer report"; diag "$_d/err"
  fi
  if [ -n "$target" ]; then
    # -p: the target is not ours to end; it carries the marker, so it goes first
    alive "$target" || { target_killed=$((target_killed + 1)); echo "# run $runs ($*): -p target gone"; }
    kill -KILL "$target" 2> /dev/null
    wait "$target" 2> /dev/null
  fi
  if pgrep -f "$_m" > /dev/null; then
    leftovers=$((leftovers + 1)); echo "# run $runs ($*): left running: $(pgrep -af "$_m")"
    pkill -KILL -f "$_m"
  fi
  [ -n "$writer" ] && wait "$writer" 2> /dev/null
  if [ "$2" = sysprof ]; then
    echo "$_d/o/out.syscap" >> "$tmp/syscaps.list"
  else
    echo "$2 $_d/o/out.$(ext "$2")" >> "$tmp/outputs.list"
  fi
  [ -n "${INTERRUPT_TIMES:-}" ] && echo "# run $runs ($*): $(echo "$(date +%s.%N) - $_t0" | bc) s"
  # the run's temporary file is gone: renamed or removed
  # shellcheck disable=SC2010  # the names are the tool's own temporary files
  if ls -A "$_d/o" | grep -q '^\.out'; then
    echo "# run $runs ($*): temporary file left: $(ls -A "$_d/o")"; bad_status=$((bad_status + 1))
  fi
}

t0=$(date +%s)
# Sized for a loaded 2-core machine (106 runs, 2 to 3 minutes at ~1.3 s a
# run of the sanitizer build): SIGINT, two, three and a process-group
# signal in the four main modes and every format; SIGTERM, timeout -s INT,
# -j2, -a, streams and a deaf command in turn.  INTERRUPT_ROUNDS=2 (make
# check-long) goes through it all twice.
i=0
for _ in $(seq "${INTERRUPT_ROUNDS:-1}"); do
for fmt in ${INTERRUPT_FORMATS:-json folded svg pprof sysprof}; do
  for how in int int2 int3 pgrp; do
    for mode in file pipe cmd pid; do
      one $mode "$fmt" $how
    done
  done
  i=$((i + 1))
  case $i in
    1) one file "$fmt" timeout; one cmd "$fmt" term; one all "$fmt" int; one file-j2 "$fmt" int3 ;;
    2) one pipe "$fmt" timeout; one file "$fmt" term; one cmd-deaf "$fmt" int3; one stream "$fmt" int3 ;;
    3) one cmd "$fmt" timeout; one pid "$fmt" term; one all "$fmt" term; one file-j2 "$fmt" int3 ;;
    4) one pid "$fmt" timeout; one pipe "$fmt" term; one cmd-deaf "$fmt" int3; one all "$fmt" pgrp ;;
    *) one cmd "$fmt" timeout; one cmd "$fmt" term; one stream "$fmt" int3; one file-j2 "$fmt" int3 ;;
  esac
  one stream "$fmt" int2
done
done
# grace, SIGTERM, SIGKILL: a command deaf to both still ends (3 s)
one cmd-deaf json timeout
t1=$(date +%s)
echo "# $runs interrupted runs in $((t1 - t0)) s: $forced ended 128+N (stopped at once), $bad_status with a bad status or a temporary file left, $reports sanitizer reports, $leftovers profiled commands left running, $target_killed -p targets killed"

tap_result $((reports != 0)) "$runs interrupted runs: no sanitizer report ($reports)"
tap_result $((bad_status != 0)) "$runs interrupted runs: status 0, 128+N or timeout's 124, no temporary file left ($bad_status bad)"
tap_result $((leftovers + target_killed != 0)) "$runs interrupted runs: no profiled command left running ($leftovers), no -p target killed ($target_killed)"

$CHECK "$tmp/outputs.list" > "$tmp/check.out" 2>&1
r=$?
sed 's/^/# /' "$tmp/check.out" | tail -5
tap_result $r "json, folded, svg and pprof outputs of interrupted runs are well-formed: $(tail -1 "$tmp/check.out")"

n_cap=0; good_cap=0
while read -r cap; do
  n_cap=$((n_cap + 1))
  if "$SYSPROF_CHECK" "$cap" > "$tmp/cap.out" 2>&1; then
    good_cap=$((good_cap + 1))
  else
    echo "# bad capture $cap:"; diag "$tmp/cap.out"
  fi
done < "$tmp/syscaps.list"
tap_result $((n_cap != good_cap)) "Sysprof captures of interrupted runs read whole with libsysprof-capture: $good_cap of $n_cap"

# Three signals stop a run whose command ignores them at once, and say so.
n_forced=$(grep -l "stopping at once" "$tmp"/runs/*/err 2> /dev/null | wc -l)
echo "# $n_forced runs stopped at once on a third signal"
[ "$n_forced" -ge 5 ]
tap_result $? "a third signal stops the run at once, with a message ($n_forced runs)"
tap_done
