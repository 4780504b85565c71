#!/bin/bash
# JIT frames of a process in a rootless podman container: node with
# --perf-basic-prof writes /tmp/perf-NSPID.map in the container's own /tmp,
# named with its pid in the container's pid namespace.  perf looks for
# the same file through the process's mount namespace while it runs (perf
# 6.1 does); eu-stacktrace reads it through the process's root
# (RESOLVE_IN_ROOT), live and from a recording made while the container
# runs.  The oracles: the map file itself (check-names.py jit-only), and
# perf script of the recording.  Run as root; needs
# podman, runc, uidmap, nodejs, perf (tools/install-deps.sh).
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PYTHON3:=python3}" "${PERF:=perf}"
# shellcheck source=tests/tap.sh
. "$TOP_SRCDIR/tests/tap.sh"
# shellcheck source=tests/containers/ctr-lib.sh
. "$TOP_SRCDIR/tests/containers/ctr-lib.sh"
tap_plan 9
CHECK=$TOP_SRCDIR/tests/e2e/check-names.py
U=eust-jit-$$
W=$(mktemp -d /var/tmp/eust-podman-jit.XXXXXX)
IMG=localhost/eust-jit:1
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
  rm -rf "$W"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
NODE=$(command -v node)
if [ "$(id -u)" != 0 ] || ! command -v podman >/dev/null || ! command -v newuidmap >/dev/null \
   || [ -z "$NODE" ]; then
  tap_bail "needs root, podman, uidmap and node (sh tools/install-deps.sh)"
fi
# check-names.py's TAP lines, renumbered from ours.
names() { "$PYTHON3" "$CHECK" "$@" --tap-start $((tap_n + 1)) > "$W/names.out" 2>&1; cat "$W/names.out"
          _failed=0; grep -q '^not ok' "$W/names.out" && _failed=1
          tap_counted "$(grep -c '^\(not \)\{0,1\}ok ' "$W/names.out")" "$_failed"; }

retry_locked useradd -m "$U" || tap_bail "useradd $U: $retry_err"
UID_U=$(id -u "$U")
base=$((200000 + (UID_U % 4096) * 65536))
grep -q "^$U:" /etc/subuid || retry_locked usermod --add-subuids "$base-$((base + 65535))" "$U"
grep -q "^$U:" /etc/subgid || retry_locked usermod --add-subgids "$base-$((base + 65535))" "$U"
install -d -o "$U" -g "$U" -m 700 "/run/user/$UID_U"
install -d -o "$U" -g "$U" "/home/$U/.config" "/home/$U/.config/containers"
printf '[storage]\ndriver = "overlay"\n' > "/home/$U/.config/containers/storage.conf"
chown "$U": "/home/$U/.config/containers/storage.conf"

# The image: node, the libraries it links, the script.
R=$W/rootfs
mkdir -p "$R/usr/bin" "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/tmp" "$R/w" "$R/etc"
cp -L "$NODE" "$R/usr/bin/node"
for lib in $(ldd "$NODE" | awk '$3 ~ /^\// { print $3 }'); do cp -L "$lib" "$R/lib/x86_64-linux-gnu/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$R/lib64/"
cp "$TOP_SRCDIR/tests/workloads/jit-hot.js" "$R/w/"
chmod 1777 "$R/tmp"
tar -C "$R" -cf "$W/rootfs.tar" . && chmod 755 "$W" && chmod 644 "$W/rootfs.tar"
pod import "$W/rootfs.tar" "$IMG" >/dev/null 2> "$W/import.err" \
  && pod run -d --network=none --name eust-jit "$IMG" /usr/bin/node --perf-basic-prof \
       /w/jit-hot.js 120000 > /dev/null 2> "$W/run.err"
pid=$(pod inspect -f '{{.State.Pid}}' eust-jit 2>/dev/null)
nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status" 2>/dev/null)
if [ -z "$pid" ] || [ "$pid" = 0 ] || [ -z "$nspid" ] || [ "$nspid" = "$pid" ]; then
  cat "$W/import.err" "$W/run.err" > "$W/start.err"
  tap_result 1 "node starts in a rootless container, in its own pid namespace" "$W/start.err"
  tap_fill "not run: the container did not start"
  tap_done
fi
# Its map is written as it compiles: wait (bounded) until it names work().
map=/proc/$pid/root/tmp/perf-$nspid.map
for _ in $(seq 600); do grep -q 'work ' "$map" 2>/dev/null && break; sleep 0.1; done
[ ! -e "/tmp/perf-$pid.map" ] && grep -q 'work ' "$map"
tap_result $? "node runs as pid $nspid in the container (host pid $pid); its map is in the container's /tmp only"

# Live: for 3 s of node's CPU time (a window of wall time held what the
# load left node of the CPU).  Until the map was read between its loads
# (ST_JIT_MAP_GROWN_NS), the code node compiled between two loads
# (ST_JIT_MAP_RETRY_NS) went unnamed in the live run, and 1.5 s left that
# above 5% of the samples once (1360 of 1443 named, 94.2%).
sample_cpu 3000 "$pid" "$EU_STACKTRACE" -f json -o "$W/live.jsonl" -p "$pid" 2> "$W/live.err"
cp "$map" "$W/map.txt"
[ -s "$W/live.jsonl" ]; tap_result $? "eu-stacktrace -p samples the container's node" "$W/live.err"
names jit-only --ours "$W/live.jsonl" --map "$W/map.txt" --name "live, rootless podman"

# Recorded while it runs: eu-stacktrace names the frames, perf names none.
HOME=$W sample_cpu 1500 "$pid" "$PERF" record -q --no-buildid-cache -e cpu-clock -F 999 \
  --call-graph dwarf -o "$W/perf.data" -p "$pid" > "$W/rec.err" 2>&1
"$EU_STACKTRACE" -i "$W/perf.data" -f json -o "$W/rec.jsonl" 2> "$W/rec-ours.err"
cp "$map" "$W/map.txt"
[ -s "$W/rec.jsonl" ]; tap_result $? "eu-stacktrace unwinds a perf record -p of it" "$W/rec-ours.err"
names jit-only --ours "$W/rec.jsonl" --map "$W/map.txt" --name "recorded, rootless podman"
# perf 6.1 enters a running process's mount namespace and reads the map by
# its NSpid too: where it names a JIT frame, the names must agree.
HOME=$W "$PERF" script -i "$W/perf.data" -F comm,pid,tid,time,ip,sym,symoff,dso --no-inline \
  --ns > "$W/perf.txt" 2> /dev/null
names jit --perf-script "$W/perf.txt" --ours "$W/rec.jsonl" --name "recorded, against perf script"
tap_done
