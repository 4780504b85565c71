#!/bin/bash
# Real rootless podman, run as a test user this test creates (subuids, its
# own storage.conf, /run/user/UID).  A program and its library exist only in
# the container, with other files at the same paths on the host.  Rootless
# podman on cgroup v1 gives a container no cgroup of its own: detection goes
# by the mount namespace matched against the user's storage.
# Scenarios: 2 (overlay storage), 3 (vfs storage), 4 (toolbox-like:
# --pid=host --userns=keep-id, the binary only in the upper layer); each
# live, then recorded and unwound after the container exited (--ns-helper
# none: the user's graph root).  Run as root (.ci/run); needs podman, runc,
# uidmap (tools/install-deps.sh).
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PYTHON3:=python3}"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
tap_plan 10
here=$TOP_SRCDIR/tests/containers
# shellcheck source=tests/containers/ctr-lib.sh
. "$here/ctr-lib.sh"
export CTR_PREFIX=/opt/ctrtest-rl/   # check-frames.py
U=eust-rl-$$
W=$(mktemp -d /var/tmp/eust-podman-rl.XXXXXX)
D=/opt/ctrtest-rl          # not the rootful test's /opt/ctrtest: they run in parallel
IMG=localhost/eust-ctrtest-rl:1
UID_U=
pod() { (cd / && runuser -u "$U" -- env -i HOME="/home/$U" XDG_RUNTIME_DIR="/run/user/$UID_U" \
          USER="$U" LOGNAME="$U" PATH=/usr/sbin:/usr/bin:/sbin:/bin \
          podman --runtime runc --cgroup-manager=cgroupfs "$@"); }
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  if [ -n "$UID_U" ]; then
    pod rm -a -f -t 0 >/dev/null 2>&1
    pod system reset -f >/dev/null 2>&1
    for p in $(pgrep -u "$U"); do kill "$p" 2>/dev/null; done   # the user's pause process
    sleep 0.3
    for p in $(pgrep -u "$U"); do kill -9 "$p" 2>/dev/null; done
    drop_user "$U"
    rm -rf "/run/user/$UID_U" "/tmp/containers-user-$UID_U" "/tmp/podman-run-$UID_U"
  fi
  rm -rf "$D" "$W"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
if [ "$(id -u)" != 0 ] || ! command -v podman >/dev/null || ! command -v newuidmap >/dev/null; then
  tap_bail "needs root, podman and uidmap (sh tools/install-deps.sh)"
fi

# The test user: subuids (useradd allocates them on Debian), a runtime dir.
retry_locked useradd -m "$U" || tap_bail "useradd $U: $retry_err"
UID_U=$(id -u "$U")
base=$((200000 + (UID_U % 4096) * 65536))
grep -q "^$U:" /etc/subuid || retry_locked usermod --add-subuids "$base-$((base + 65535))" "$U"
grep -q "^$U:" /etc/subgid || retry_locked usermod --add-subgids "$base-$((base + 65535))" "$U"
install -d -o "$U" -g "$U" -m 700 "/run/user/$UID_U"
install -d -o "$U" -g "$U" "/home/$U/.config" "/home/$U/.config/containers"
driver() { # overlay|vfs: the user's storage driver (a reset store per driver)
  pod rm -a -f -t 0 >/dev/null 2>&1; pod system reset -f >/dev/null 2>&1
  printf '[storage]\ndriver = "%s"\n' "$1" > "/home/$U/.config/containers/storage.conf"
  chown "$U": "/home/$U/.config/containers/storage.conf"
  pod import "$W/rootfs.tar" "$IMG" >/dev/null 2>>"$W/podman.err"
}

# The container's program and library, and the host's other versions.  The
# toolbox-like container's program (up/ctrprog) is copied into its upper layer.
R=$W/rootfs
mkdir -p "$R$D/bin" "$R$D/lib" "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/etc" "$R/tmp" "$R/run" \
  "$R$D/up" "$W/up" "$D/bin" "$D/lib" "$D/up"
cc -O2 -g -fno-omit-frame-pointer -DV=ctr -shared -fPIC -o "$R$D/lib/libctrwork.so" "$here/ctrwork.c"
cc -O2 -g -DV=ctr -o "$R$D/bin/ctrprog" "$here/ctrprog.c" -L"$R$D/lib" -lctrwork -Wl,-rpath,$D/lib
cc -O2 -g -DV=ctr -o "$W/up/ctrprog" "$here/ctrprog.c" -L"$R$D/lib" -lctrwork -Wl,-rpath,$D/lib
cc -O2 -g -DV=host -shared -fPIC -o "$D/lib/libctrwork.so" "$here/ctrwork.c"
cc -O2 -g -DV=host -o "$D/bin/ctrprog" "$here/ctrprog.c" -L"$D/lib" -lctrwork -Wl,-rpath,$D/lib
cp "$D/bin/ctrprog" "$D/up/ctrprog"
cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$R/lib/x86_64-linux-gnu/"
ln -s /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$R/lib64/ld-linux-x86-64.so.2"
chmod 1777 "$R/tmp"
tar -C "$R" -cf "$W/rootfs.tar" .
chmod 755 "$W" "$W/up"; chmod 644 "$W/rootfs.tar"; chmod 755 "$W/up/ctrprog"

pid_of() { pod inspect -f '{{.State.Pid}}' "$1"; }
sample() { # OUT PID ARGS...
  local out=$1 pid=$2; shift 2
  sample_cpu 1000 "$pid" "$EU_STACKTRACE" -v -f json -o "$out.jsonl" "$@" -p "$pid" > "$out.out" 2> "$out.err"
}
no_cgroup() { ! grep -q libpod- "/proc/$1/cgroup"; }

# A scenario: live with the namespace helper (default: it enters the
# user's namespaces), live from the
# user's storage (--ns-helper none), then recorded live, the container
# stopped, and unwound after exit.  NUM DESC NAME
scenario() {
  local s=$1 desc=$2 c=$3 p r
  p=$(pid_of "$c")
  if [ -z "$p" ] || [ "$p" = 0 ] || ! wait_mapped "$p" libctrwork; then
    for _ in 1 2 3; do tap_result 1 "scenario $s: $desc: container $c did not start" /dev/null; done; return
  fi
  sample "$W/s$s" "$p"
  $PYTHON3 "$here/check-frames.py" "$W/s$s.jsonl" "$s $desc (live)" "podman:$c" > "$W/s$s.row" 2>&1
  r=$?; cat "$W/s$s.row"; no_cgroup "$p" || { echo "# has a libpod cgroup"; r=1; }
  grep -q "libctrwork.so: found by namespace helper" "$W/s$s.err" || r=1
  tap_result "$r" "scenario $s: $desc, live: every frame from the container's files (namespace helper), labelled [podman:$c]" "$W/s$s.err"

  sample "$W/s${s}n" "$p" --ns-helper none
  $PYTHON3 "$here/check-frames.py" "$W/s${s}n.jsonl" "$s $desc (live, storage)" "podman:$c" > "$W/s${s}n.row" 2>&1
  r=$?; cat "$W/s${s}n.row"; grep -q "found by container storage" "$W/s${s}n.err" || r=1
  tap_result "$r" "scenario $s: $desc, live, --ns-helper none: found in the user's storage" "$W/s${s}n.err"

  sample_cpu 1000 "$p" "$EU_STACKTRACE" --record "$W/s$s.data" -f json -o /dev/null -p "$p" 2> "$W/s${s}rec.err"
  pod stop -t 0 "$c" >/dev/null 2>&1
  "$EU_STACKTRACE" -v --ns-helper none -i "$W/s$s.data" -f json -o "$W/s${s}x.jsonl" 2> "$W/s${s}x.err"
  $PYTHON3 "$here/check-frames.py" "$W/s${s}x.jsonl" "$s $desc (exited)" > "$W/s${s}x.row" 2>&1
  r=$?; cat "$W/s${s}x.row"; grep -q "found in the storage of \[podman:$c\]" "$W/s${s}x.err" || r=1
  tap_result "$r" "scenario $s: $desc, exited: unwound after exit from the user's graph root" "$W/s${s}x.err"
}
run() { pod run -d --network=none --name "$1" "$IMG" $D/bin/ctrprog >/dev/null; }

# 2: rootless, overlay storage.
driver overlay || { tap_bail "podman import (overlay) failed"; }
run eust-s2; scenario 2 "rootless podman overlay" eust-s2

# 4: toolbox-like (host pid namespace, keep-id user namespace), the binary
# only in the container's upper layer.
pod create --name eust-s4 --userns=keep-id --pid=host --network=host --privileged \
  --security-opt label=disable --ulimit host "$IMG" $D/up/ctrprog >/dev/null
pod cp "$W/up/ctrprog" eust-s4:$D/up/ctrprog && pod start eust-s4 >/dev/null
scenario 4 "toolbox-like, upper layer only" eust-s4
# Removed: its upper layer is gone with it, and the frames say so; the
# library is still in the image's id-mapped copy of its layer.
pod rm -f -t 0 eust-s4 >/dev/null 2>&1
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s4.data" -f json -o "$W/s4r.jsonl" 2> "$W/s4r.err"
$PYTHON3 "$here/check-frames.py" "$W/s4r.jsonl" "4 removed (its upper layer gone)" > "$W/s4r.row" 2>&1
cat "$W/s4r.row"
grep -q "up/ctrprog: not found .*gone with its container" "$W/s4r.err" \
  && grep -q "libctrwork.so: found in the storage of \[podman:" "$W/s4r.err" \
  && ! grep -q '"symbol":"host_' "$W/s4r.jsonl"
tap_result $? "scenario 4, removed: the upper layer's binary is reported gone, the image's library found, no host frame" "$W/s4r.err"

# 3: rootless, vfs storage.
driver vfs || { tap_bail "podman import (vfs) failed"; }
run eust-s3; scenario 3 "rootless podman vfs" eust-s3
tap_done
