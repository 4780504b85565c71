#!/bin/bash
# Real flatpak (offline, a local OSTree repo): an app whose program and
# library exist only in /app, with other files at the same paths on the
# host.  Scenarios: 5 (installed system-wide, run as root: live, then after
# exit from the deployment), 9 (uninstalled while running: from .removed/),
# 6 (installed --user, run as that user: nested user namespace), and a
# sandbox whose /.flatpak-info is a symlink to a host file.
# Run as root (.ci/run); needs flatpak, bwrap, dbus-daemon (tools/install-deps.sh).
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PYTHON3:=python3}"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
tap_plan 11
here=$TOP_SRCDIR/tests/containers
# shellcheck source=tests/containers/ctr-lib.sh
. "$here/ctr-lib.sh"
APP=org.eust.Fp-Test
RT=org.eust.FpPlatform
REMOTE=eust-fp-$$
U=eustfp-$$
SYS=/var/lib/flatpak
CG=/sys/fs/cgroup/systemd
# One run at a time on a host: the app id, the user and /app are shared.
exec 9> /var/tmp/eust-flatpak.lock
flock -w 600 9 || { tap_bail "another flatpak.sh holds /var/tmp/eust-flatpak.lock"; }
W=$(mktemp -d /var/tmp/eust-flatpak.XXXXXX)
export CTR_PREFIX=/app/
made_app=
user_made=
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  flatpak kill "$APP" >/dev/null 2>&1
  if [ -n "$user_made" ]; then
    runuser -u "$U" -- env -i HOME=/home/"$U" XDG_RUNTIME_DIR=/run/user/"$UID_U" PATH=/usr/bin:/bin \
      flatpak kill "$APP" >/dev/null 2>&1
    drop_user "$U"
    rm -rf "/run/user/$UID_U"
  fi
  flatpak uninstall --system -y --noninteractive "$APP" "$RT" >/dev/null 2>&1
  flatpak remote-delete --system --force "$REMOTE" >/dev/null 2>&1
  [ -n "${CSUM:-}" ] && rm -rf "$SYS/.removed/$APP-$CSUM"
  rm -rf "/root/.var/app/$APP" "/root/.cache/.flatpak/$APP" "/root/.cache/app/$APP"
  for d in "$CG"/app-flatpak-org.eust.*.scope; do
    [ -d "$d" ] || continue
    while read -r p; do echo "$p" > "$CG/cgroup.procs"; done < "$d/cgroup.procs"
    rmdir "$d"
  done
  [ -n "$made_app" ] && rm -rf /app
  rm -rf "$W"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
if [ "$(id -u)" != 0 ] || ! command -v flatpak >/dev/null || ! command -v dbus-daemon >/dev/null; then
  tap_bail "needs root, flatpak and dbus-daemon (sh tools/install-deps.sh)"
fi
if [ -e /app ]; then
  tap_bail "/app exists on this host: the test puts the host's versions of the files there"
fi
bail() { [ -f "${2:-}" ] && tail -n 15 "$2" | sed 's/^/#   /'; tap_bail "$1"; }

# --- The app's program and library, and the host's other versions ---------
cd "$W" || exit 1
chmod 755 "$W"
mkdir -p app-build/files/bin app-build/files/lib rt/files/lib/x86_64-linux-gnu rt/files/lib64 rt/files/bin rt/files/etc
cc -O2 -g -fno-omit-frame-pointer -DV=ctr -shared -fPIC -o app-build/files/lib/libctrwork.so "$here/ctrwork.c"
cc -O2 -g -DV=ctr -o app-build/files/bin/ctrprog "$here/ctrprog.c" -Lapp-build/files/lib -lctrwork -Wl,-rpath,/app/lib
made_app=1
mkdir -p /app/bin /app/lib
cc -O2 -g -DV=host -shared -fPIC -o /app/lib/libctrwork.so "$here/ctrwork.c"
cc -O2 -g -DV=host -o /app/bin/ctrprog "$here/ctrprog.c" -L/app/lib -lctrwork -Wl,-rpath,/app/lib

# --- A runtime (written by hand: build-init needs an installed SDK) and the app
cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 rt/files/lib/x86_64-linux-gnu/
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 rt/files/lib64/ld-linux-x86-64.so.2
printf '[Runtime]\nname=%s\nruntime=%s/x86_64/master\nsdk=%s/x86_64/master\n' "$RT" "$RT" "$RT" > rt/metadata
flatpak build-export --runtime --files=files repo rt master > build.log 2>&1 || bail "runtime build-export" build.log
flatpak remote-add --system --if-not-exists --no-gpg-verify "$REMOTE" "$W/repo" >> build.log 2>&1 || bail "remote-add" build.log
flatpak install --system -y --noninteractive "$REMOTE" "runtime/$RT/x86_64/master" >> build.log 2>&1 || bail "runtime install" build.log
rm -rf app-build/metadata app-build/var
flatpak build-init app "$APP" "$RT" "$RT" master >> build.log 2>&1 || bail "build-init" build.log
cp -a app-build/files/. app/files/
flatpak build-finish app --command=ctrprog >> build.log 2>&1 || bail "build-finish" build.log
flatpak build-export repo app master >> build.log 2>&1 || bail "app build-export" build.log
flatpak install --system -y --noninteractive "$REMOTE" "app/$APP/x86_64/master" >> build.log 2>&1 || bail "app install" build.log
CSUM=$(basename "$(readlink "$SYS/app/$APP/x86_64/master/active")")

# The ctrprog under process ROOT (flatpak execs bwrap, which forks); up to
# 60 s, as the suite's other start-up waits: a first flatpak run on a
# fresh, loaded machine is slow.
prog_under() {
  local todo p c root=$1
  for _ in $(seq 2000); do
    todo=$root
    while [ -n "$todo" ]; do
      # shellcheck disable=SC2086  # the list is split into pids on purpose
      set -- $todo; p=$1; shift; todo="$*"
      [ "$(cat /proc/"$p"/comm 2>/dev/null)" = ctrprog ] && { echo "$p"; return 0; }
      for c in $(pgrep -P "$p"); do todo="$todo $c"; done
    done
    sleep 0.03
  done
  return 1
}
start_root() { # LOG: starts the system-wide app as root, prints the ctrprog's pid
  setsid flatpak run --system "$APP" > "$1" 2>&1 < /dev/null &
  local r=$!
  prog_under "$r"
}
gone() { for _ in $(seq 1200); do [ -d "/proc/$1" ] || return 0; sleep 0.05; done; return 1; }
sample() { # OUT PID ARGS...
  local out=$1 pid=$2; shift 2
  sample_cpu 1000 "$pid" "$EU_STACKTRACE" -v -f json -o "$out.jsonl" "$@" -p "$pid" > "$out.out" 2> "$out.err"
  echo "exit status $?" >> "$out.err"
}
check() { # OUT SCENARIO [LABEL]
  $PYTHON3 "$here/check-frames.py" "$1.jsonl" "$2" ${3:+"$3"} > "$1.row" 2>&1
  local r=$?; cat "$1.row"; return $r
}

# 5: installed system-wide, run as root, live: the namespace helper (auto).
P5=$(start_root "$W/run5.log") || bail "flatpak run (root, system) did not start ctrprog" "$W/run5.log"
wait_mapped "$P5" libctrwork || bail "ctrprog (scenario 5) never mapped libctrwork.so"
sample "$W/s5" "$P5"
check "$W/s5" "5 flatpak system, root (live)" "flatpak:$APP"
tap_result $? "scenario 5: system-wide flatpak run as root, live: every frame from /app, labelled" "$W/s5.err"

# The same with the namespace helper off: the app-path and runtime-path
# deployments on the host (the container storage step).
sample "$W/s5n" "$P5" --ns-helper none
check "$W/s5n" "5 flatpak system, root (live, storage)" "flatpak:$APP"
r=$?; grep -q "libctrwork.so: found by container storage" "$W/s5n.err" || r=1
tap_result $r "scenario 5 with --ns-helper none: frames from the app's deployment" "$W/s5n.err"

sample_cpu 500 "$P5" "$EU_STACKTRACE" -f folded -o "$W/s5.folded" -p "$P5" 2> "$W/folded.err"
grep -q "^\[flatpak:$APP\];ctrprog;" "$W/s5.folded"
tap_result $? "folded stacks start with [flatpak:APP.ID]" "$W/s5.folded"

# The app-flatpak-ID-N.scope cgroup that systemd gives an app run from a
# desktop session (there is none here: made as systemd would, the id
# escaped).  It agrees with the sandbox's info: labelled as before; it names
# another app: the cgroup, set from outside the sandbox, wins.
cgroup_move() { # NAME PID
  mkdir -p "$CG/$1" && echo "$2" > "$CG/$1/cgroup.procs"
}
ESC=$(printf '%s' "$APP" | sed 's/-/\\x2d/g')
cgroup_move "app-flatpak-$ESC-$P5.scope" "$P5"
grep -F "app-flatpak-$ESC-$P5.scope" "/proc/$P5/cgroup" > "$W/cg.err" 2>&1 \
  || bail "cannot make the app's systemd scope cgroup" "$W/cg.err"
sample "$W/s5c" "$P5" --ns-helper none
check "$W/s5c" "5 in app-flatpak-ID-N.scope" "flatpak:$APP"
r=$?; grep -q "its cgroup names flatpak app $APP\$" "$W/s5c.err" || r=1
tap_result $r "the app-flatpak-ID-N.scope cgroup (id unescaped) agrees with the info: same label and frames" "$W/s5c.err"
cgroup_move "app-flatpak-org.eust.Other-$P5.scope" "$P5"
sample "$W/s5o" "$P5"
grep -q '"name":"org.eust.Other"' "$W/s5o.jsonl" && ! grep -q "\"name\":\"$APP\"" "$W/s5o.jsonl" \
  && grep -q "names app $APP, its cgroup org.eust.Other" "$W/s5o.err"
tap_result $? "a cgroup scope naming another app than the sandbox's info: the cgroup's app, the info ignored" "$W/s5o.err"
echo "$P5" > "$CG/cgroup.procs"
rmdir "$CG/app-flatpak-$ESC-$P5.scope" "$CG/app-flatpak-org.eust.Other-$P5.scope"

# 5 after the app exits: recorded live, unwound from the deployments.
sample_cpu 1000 "$P5" "$EU_STACKTRACE" --record "$W/s5.data" -f json -o /dev/null -p "$P5" 2> "$W/s5rec.err"
flatpak kill "$APP" >/dev/null 2>&1; kill "$P5" 2>/dev/null; gone "$P5"
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s5.data" -f json -o "$W/s5x.jsonl" 2> "$W/s5x.err"
check "$W/s5x" "5 flatpak system, after exit" "flatpak:$APP"
r=$?; grep -q "found in the storage of \[flatpak:$APP\]" "$W/s5x.err" || r=1
tap_result $r "scenario 5 after exit: frames from the app-path and runtime-path deployments, labelled" "$W/s5x.err"

# 9: uninstalled while running: the deployment moves to .removed/.
P9=$(start_root "$W/run9.log") || bail "flatpak run (scenario 9) did not start ctrprog" "$W/run9.log"
wait_mapped "$P9" libctrwork || bail "ctrprog (scenario 9) never mapped libctrwork.so"
sample_cpu 1000 "$P9" "$EU_STACKTRACE" --record "$W/s9.data" -f json -o /dev/null -p "$P9" 2> "$W/s9rec.err"
flatpak uninstall --system -y --noninteractive "$APP" > "$W/uninstall.log" 2>&1
# shellcheck disable=SC2015  # the last command runs when any step before it fails, as meant
ls -d "$SYS/.removed/$APP-$CSUM" >> "$W/uninstall.log" 2>&1 && [ ! -e "$SYS/app/$APP/x86_64/master/$CSUM" ] \
  || bail "the uninstalled app's deployment is not in $SYS/.removed" "$W/uninstall.log"
sample "$W/s9l" "$P9" --ns-helper none
check "$W/s9l" "9 uninstalled, live (storage)" "flatpak:$APP"
r=$?; grep -q "libctrwork.so: found by container storage" "$W/s9l.err" || r=1
tap_result $r "scenario 9 live: an app uninstalled while running, from .removed/" "$W/s9l.err"
flatpak kill "$APP" >/dev/null 2>&1; kill "$P9" 2>/dev/null; gone "$P9"
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s9.data" -f json -o "$W/s9.jsonl" 2> "$W/s9.err"
check "$W/s9" "9 uninstalled, after exit (.removed)" "flatpak:$APP"
r=$?; grep -q "found in the storage of \[flatpak:$APP\]" "$W/s9.err" || r=1
tap_result $r "scenario 9: uninstalled while running, unwound after exit from .removed/, labelled" "$W/s9.err"

# 6: installed --user, run as that user (a nested user namespace).
id "$U" >/dev/null 2>&1 && bail "user $U exists already"
retry_locked useradd -m "$U" || bail "useradd $U: $retry_err"
user_made=1
UID_U=$(id -u "$U")
install -d -o "$U" -g "$U" -m 700 "/run/user/$UID_U"
install -d -o "$U" "$W/dbus"
runuser -u "$U" -- dbus-daemon --session --address="unix:path=$W/dbus/bus" --fork --print-pid --nosyslog > "$W/dbus/pid" \
  || bail "dbus-daemon for $U"
asuser() { runuser -u "$U" -- env -i HOME=/home/$U XDG_RUNTIME_DIR=/run/user/"$UID_U" USER=$U LOGNAME=$U \
  PATH=/usr/sbin:/usr/bin:/sbin:/bin DBUS_SYSTEM_BUS_ADDRESS=unix:path="$W"/dbus/bus "$@"; }
{ asuser flatpak remote-add --user --if-not-exists --no-gpg-verify "$REMOTE" "$W/repo" &&
  asuser flatpak install --user -y --noninteractive "$REMOTE" "runtime/$RT/x86_64/master" "app/$APP/x86_64/master"; } \
  > "$W/user-install.log" 2>&1 || bail "flatpak install --user" "$W/user-install.log"
setsid runuser -u "$U" -- env -i HOME=/home/$U XDG_RUNTIME_DIR=/run/user/"$UID_U" PATH=/usr/bin:/bin \
  flatpak run --user "$APP" > "$W/run6.log" 2>&1 < /dev/null &
P6=$(prog_under $!) || bail "flatpak run --user did not start ctrprog" "$W/run6.log"
wait_mapped "$P6" libctrwork || bail "ctrprog (scenario 6) never mapped libctrwork.so"
sample "$W/s6" "$P6"
check "$W/s6" "6 flatpak --user, as the user (live)" "flatpak:$APP"
tap_result $? "scenario 6: --user flatpak run as that user, live: every frame from /app, labelled" "$W/s6.err"
sample "$W/s6n" "$P6" --ns-helper none
check "$W/s6n" "6 flatpak --user (live, storage)" "flatpak:$APP"
r=$?; grep -q "libctrwork.so: found by container storage" "$W/s6n.err" || r=1
tap_result $r "scenario 6 with --ns-helper none: frames from the user's installation" "$W/s6n.err"

# A lying sandbox: /.flatpak-info is a symlink to a host file that names a
# real deployment.  It is read inside the sandbox's root, where the link
# leads nowhere: no label, no host file read through it.
L=$W/liar
mkdir -p "$L/app/bin" "$L/app/lib" "$L/lib/x86_64-linux-gnu" "$L/lib64" "$L/tmp"
cp app-build/files/bin/ctrprog "$L/app/bin/"; cp app-build/files/lib/libctrwork.so "$L/app/lib/"
cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$L/lib/x86_64-linux-gnu/"
ln -s /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$L/lib64/ld-linux-x86-64.so.2"
RDEP=$(readlink -f "$SYS/runtime/$RT/x86_64/master/active")
printf '[Application]\nname=org.forged.Liar\n\n[Instance]\napp-path=%s\nruntime-path=%s/files\n' \
  "/home/$U/.local/share/flatpak/app/$APP/x86_64/master/active/files" "$RDEP" > "$W/forged-info"
ln -s "$W/forged-info" "$L/.flatpak-info"
setsid unshare -m --root="$L" /app/bin/ctrprog > /dev/null 2>&1 < /dev/null &
if ! PL=$(prog_under $!) || ! wait_mapped "$PL" libctrwork; then
  bail "the lying sandbox did not start ctrprog"
fi
sample "$W/liar" "$PL" --ns-helper none
kill "$PL" 2>/dev/null
$PYTHON3 "$here/check-frames.py" "$W/liar.jsonl" "lying .flatpak-info (symlink)" host > "$W/liar.row" 2>&1
cat "$W/liar.row"
! grep -q '"flatpak"\|Liar' "$W/liar.jsonl" "$W/liar.err" && grep -q '"comm": *"ctrprog"' "$W/liar.jsonl"
tap_result $? "a /.flatpak-info symlinked to a host file gets no host file read through it" "$W/liar.err"
tap_done
