# shellcheck shell=sh
# What the tests of tests/ns-helper/ share; sourced.  They run as root (CI
# does); processes run in mount namespaces made by ns-run.sh, and the
# tests that need an unprivileged user create one and remove it.
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"
: "${PYTHON3:=python3}"
nsh_src=$TOP_SRCDIR/tests/ns-helper
nsh_build=$TOP_BUILDDIR/tests/ns-helper
helper=$TOP_BUILDDIR/eu-stacktrace-ns-helper
# shellcheck disable=SC2034  # used by the scripts that source this file
nsh_client=$nsh_build/nsh-client
# eu-stacktrace spawns the helper of this build, not an installed one.
EU_STACKTRACE_NS_HELPER=$helper
export EU_STACKTRACE_NS_HELPER
export PYTHONPATH="$nsh_src"
# shellcheck disable=SC2034  # used by the scripts that source this file
libc_start="__libc_start_call_main,__libc_start_main,_start"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-nsh.XXXXXX")
chmod 755 "$tmp"
started_pids=""
test_user=""
made_users=""

cleanup () {
  for p in $started_pids; do
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  for u in $made_users; do
    userdel "$u" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

# TAP (tests/tap.sh), numbered as it goes; the plan comes last.
. "$TOP_SRCDIR/tests/tap.sh"
diag () { sed 's/^/#   /' "$@"; }
# relay_tap NAME TAP ERR: the TAP lines a helper script (NAME) wrote to TAP,
# renumbered into ours; its other lines as they are; its stderr as a
# diagnostic, and a traceback as a failure.
relay_tap () {
  tap_relay < "$2"
  if [ -s "$3" ]; then
    echo "# $1 said:"; diag "$3"
    grep -q Traceback "$3" && tap_not_ok "$1 ran to the end"
  fi
}
# plan_and_done: the plan, last, and the summary.
plan_and_done () { tap_plan "$tap_n"; tap_done; }

# The copies that go into the namespaces: $stage/plain (program and library)
# and $stage/root (a root: those, libc and the dynamic linker).
make_stage () {
  stage=$tmp/stage
  prog=$nsh_build/nsprog
  interp=$(readelf -l "$prog" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
  libc=$(ldd "$prog" | awk '$1 == "libc.so.6" { print $3 }')
  mkdir -p "$stage/plain/bin" "$stage/plain/lib" "$stage/root/app/bin" "$stage/root/app/lib" \
    "$stage/root$(dirname "$interp")" "$stage/root$(dirname "$libc")"
  cp "$prog" "$stage/plain/bin/nsprog"
  cp "$prog" "$stage/root/app/bin/nsprog"
  cp "$nsh_build/libnswork.so" "$stage/plain/lib/"
  cp "$nsh_build/libnswork.so" "$stage/root/app/lib/"
  cp -L "$interp" "$stage/root$interp"
  cp -L "$libc" "$stage/root$libc"
  cp "$nsh_build/enter-root" "$stage/"
  chmod -R a+rX "$stage"
}

# The program's path inside a namespace of KIND made at DIR.
prog_in () {
  case $1 in
    plain) echo "$2/bin/nsprog" ;;
    *) echo /app/bin/nsprog ;;
  esac
}
lib_in () {
  case $1 in
    plain) echo "$2/lib/libnswork.so" ;;
    *) echo /app/lib/libnswork.so ;;
  esac
}

# The command that runs nsprog ARGS in a new namespace of KIND at $tmp/NAME,
# with SETUP (a script, or "").
ns_command () {
  kind=$1 name=$2 setup=$3
  shift 3
  mkdir -p "$tmp/$name"
  echo sh "$nsh_src/ns-run.sh" "$kind" "$tmp/$name" "$stage" "$setup" -- \
    "$(prog_in "$kind" "$tmp/$name")" "$@"
}

# Starts `nsprog ARGS' in the background in a namespace of KIND at
# $tmp/NAME (as USER when RUN_AS is set) and waits until it runs with its
# library mapped (a bounded poll of a minute: a loaded machine takes more
# than the 5 s it was); $pid is its pid.
start_ns () {
  kind=$1 name=$2 setup=$3
  shift 3
  if [ -n "${RUN_AS:-}" ]; then
    # shellcheck disable=SC2046  # the command prints the words of a command line on purpose
    setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --clear-groups \
      $(ns_command "$kind" "$name" "$setup" "$@") > "$tmp/$name.log" 2>&1 &
  else
    # shellcheck disable=SC2046,SC2091  # runs the command line that ns_command prints
    $(ns_command "$kind" "$name" "$setup" "$@") > "$tmp/$name.log" 2>&1 &
  fi
  pid=$!
  started_pids="$started_pids $pid"
  wait_nsprog "$pid" && return 0
  echo "# $name did not start:"; diag "$tmp/$name.log"
  return 1
}

# wait_nsprog PID: until PID runs nsprog with its library mapped, a bounded
# poll of a minute (a loaded machine takes more than the 5 s it was);
# returns 1 when it never does.
wait_nsprog () {
  _i=0
  while [ $_i -lt 1200 ]; do
    if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = nsprog ] && grep -q libnswork "/proc/$1/maps" 2>/dev/null; then
      return 0
    fi
    sleep 0.05
    _i=$((_i + 1))
  done
  return 1
}

# start_service SOCKET ARGS...: the helper as a socket service, one process
# per connection (Accept=yes), emulated by systemd-socket-activate listening
# at SOCKET and running ARGS (the helper and its options; -E VAR=VALUE
# first for an environment); its log in $tmp/activate-NAME.log, NAME being
# SOCKET's name without .socket.  Waits until the socket exists (a bounded
# poll on the socket itself: a minute, for a loaded machine), lets any user
# connect (the helper decides what each may have) and sets $activate to
# systemd-socket-activate's pid (the connections' parent).  Returns 1, with
# the log as diagnostics, when the socket never appears.
start_service () {
  _sock=$1
  shift
  _log=$tmp/activate-$(basename "$_sock" .socket).log
  systemd-socket-activate --seqpacket --accept --listen="$_sock" "$@" > "$_log" 2>&1 &
  activate=$!
  started_pids="$started_pids $activate"
  _i=0
  while [ ! -S "$_sock" ]; do
    if [ $_i -ge 1200 ] || ! kill -0 "$activate" 2>/dev/null; then
      echo "# the helper's service did not listen at $_sock:"; diag "$_log"
      return 1
    fi
    sleep 0.05
    _i=$((_i + 1))
  done
  chmod 666 "$_sock"
}

# A user without privileges, for the tests that need one ($test_user,
# $test_uid, $test_gid; make_user 2 makes another, eust-nsh-PID-2); removed
# at exit.
# shellcheck disable=SC2120  # $1, a suffix of the name, is optional
make_user () {
  test_user=eust-nsh-$$${1:+-$1}
  i=0
  # useradd locks /etc/passwd: another test may hold it for a moment (a
  # minute at most, on a loaded machine).
  until useradd -M -N -r -s /bin/sh "$test_user" 2>"$tmp/useradd.err"; do
    i=$((i + 1))
    if [ $i -ge 300 ]; then
      echo "# useradd failed:"; diag "$tmp/useradd.err"
      test_user=""
      return 1
    fi
    sleep 0.2
  done
  made_users="$made_users $test_user"
  # shellcheck disable=SC2034  # used by the scripts that source this file
  test_uid=$(id -u "$test_user")
  # shellcheck disable=SC2034  # used by the scripts that source this file
  test_gid=$(id -g "$test_user")
}

# Runs eu-stacktrace ARGS..., output as JSON Lines in $tmp/NAME.jsonl,
# stderr (with -v) in $tmp/NAME.err.  As SCHED_FIFO with
# SCHED_RESET_ON_FORK (chrt -f -R, as tests/live/no-lost.sh does): the
# tests beside it in `make -j2 check' cannot keep it off the CPUs while its
# ring fills (a quarter of a second of samples; a fresh CI machine read 151
# of 700 and 218 of 500 that way), and the helper and the command it
# starts run as any other task.  Losses are shown.
sample () {
  name=$1
  shift
  chrt -f -R 1 "${EU:-$EU_STACKTRACE}" -v --stats -f json -o "$tmp/$name.jsonl" "$@" \
    > "$tmp/$name.out" 2> "$tmp/$name.err"
  status=$?
  if [ $status -ne 0 ]; then
    echo "# $name: eu-stacktrace exited with $status:"; diag "$tmp/$name.err"
  fi
  grep -E "samples read|lost|namespace helper:|round trips|first replies" "$tmp/$name.err" \
    | sed "s/^/# $name: /"
  return $status
}

# check_chains NAME LABEL MIN SPEC...: tests/live/check-chains.py on NAME's output.
check_chains () {
  name=$1
  shift
  "$PYTHON3" "$TOP_SRCDIR/tests/live/check-chains.py" "$tmp/$name.jsonl" "$@" > "$tmp/$name.chains"
  grep '^#' "$tmp/$name.chains"
  if grep -q '^ok' "$tmp/$name.chains"; then
    tap_ok "$(sed -n 's/^ok - //p' "$tmp/$name.chains")"
  else
    tap_not_ok "$(sed -n 's/^not ok - //p' "$tmp/$name.chains")"
  fi
}

# The way eu-stacktrace's log says the helper opened FILE with, in NAME's run.
way_of () {
  sed -n "s|.*: $2: opened by the namespace helper (\(.*\))|\1|p" "$tmp/$1.err" | head -n 1
}
