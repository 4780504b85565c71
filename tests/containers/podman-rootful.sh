#!/bin/bash
# Real rootful podman (overlay storage): a program and its library that
# exist only in the container, with other files at the same paths on the
# host.  Scenarios: 1 (live, cgroup libpod-<id>), --container none on it,
# 7 (exited, not removed: unwound afterwards from its layers), 8 (removed,
# its image remains), and a forged containers.json entry.
# Run as root (.ci/run); needs podman, runc (tools/install-deps.sh).
set -u
: "${EU_STACKTRACE:?}" "${TOP_SRCDIR:?}" "${PYTHON3:=python3}"
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
tap_plan 7
here=$TOP_SRCDIR/tests/containers
# shellcheck source=tests/containers/ctr-lib.sh
. "$here/ctr-lib.sh"
W=$(mktemp -d /var/tmp/eust-podman.XXXXXX)
IMG=localhost/eust-ctrtest:$$
C1=eust-s1-$$
C7=eust-s7-$$
pod() { podman --runtime runc --cgroup-manager=cgroupfs "$@"; }
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  pod rm -f -t 0 "$C1" "$C7" >/dev/null 2>&1
  pod rmi -f "$IMG" >/dev/null 2>&1
  rm -rf /opt/ctrtest "$W"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
if [ "$(id -u)" != 0 ] || ! command -v podman >/dev/null; then
  tap_bail "needs root and podman (sh tools/install-deps.sh)"
fi

# The container's program and library, and the host's other versions.
mkdir -p "$W/rootfs/opt/ctrtest/bin" "$W/rootfs/opt/ctrtest/lib" "$W/rootfs/lib/x86_64-linux-gnu" \
  "$W/rootfs/lib64" "$W/rootfs/etc" "$W/rootfs/tmp" "$W/rootfs/run" /opt/ctrtest/bin /opt/ctrtest/lib
cc -O2 -g -fno-omit-frame-pointer -DV=ctr -shared -fPIC -o "$W/rootfs/opt/ctrtest/lib/libctrwork.so" "$here/ctrwork.c"
cc -O2 -g -DV=ctr -o "$W/rootfs/opt/ctrtest/bin/ctrprog" "$here/ctrprog.c" \
  -L"$W/rootfs/opt/ctrtest/lib" -lctrwork -Wl,-rpath,/opt/ctrtest/lib
cc -O2 -g -DV=host -shared -fPIC -o /opt/ctrtest/lib/libctrwork.so "$here/ctrwork.c"
cc -O2 -g -DV=host -o /opt/ctrtest/bin/ctrprog "$here/ctrprog.c" \
  -L/opt/ctrtest/lib -lctrwork -Wl,-rpath,/opt/ctrtest/lib
cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$W/rootfs/lib/x86_64-linux-gnu/"
ln -s /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$W/rootfs/lib64/ld-linux-x86-64.so.2"
tar -C "$W/rootfs" -cf "$W/rootfs.tar" .
pod import "$W/rootfs.tar" "$IMG" >/dev/null || { tap_bail "podman import failed"; }
run() { pod run -d --network=none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --name "$1" "$IMG" /opt/ctrtest/bin/ctrprog >/dev/null; }
pid_of() { pod inspect -f '{{.State.Pid}}' "$1"; }
sample() { # OUT PID ARGS...
  local out=$1 pid=$2; shift 2
  sample_cpu 1000 "$pid" "$EU_STACKTRACE" -v -f json -o "$out.jsonl" "$@" -p "$pid" > "$out.out" 2> "$out.err"
}

# 1: live, rootful overlay, detected by cgroup; the container step finds
# the files (the namespace helper is off to show it).
run "$C1"; P1=$(pid_of "$C1"); wait_mapped "$P1" libctrwork
sample "$W/s1" "$P1" --ns-helper none
$PYTHON3 "$here/check-frames.py" "$W/s1.jsonl" "1 rootful podman overlay (live)" "podman:$C1" > "$W/s1.row" 2>&1
r=$?; cat "$W/s1.row"; grep -q "found by container storage" "$W/s1.err" || r=1
tap_result $r "scenario 1: rootful podman overlay, every frame from the container's files, labelled" "$W/s1.err"

# The same with --container none: the host's files give wrong or no frames.
sample "$W/none" "$P1" --ns-helper none --container none
$PYTHON3 "$here/check-frames.py" "$W/none.jsonl" "1 with --container none" "host" > "$W/none.row" 2>&1
r=$?; cat "$W/none.row"
[ $r != 0 ] && ! grep -q '"container"' "$W/none.jsonl"; tap_result $? "--container none on scenario 1: no label, wrong or missing frames" "$W/none.err"

# Folded stacks start with the container's root frame.
sample_cpu 500 "$P1" "$EU_STACKTRACE" --ns-helper none -f folded -o "$W/s1.folded" -p "$P1" 2> "$W/folded.err"
grep -q "^\[podman:$C1\];ctrprog;" "$W/s1.folded"; tap_result $? "folded stacks start with [podman:NAME]" "$W/s1.folded"

# pprof carries the container as a label (go tool pprof -tags lists it).
sample_cpu 500 "$P1" "$EU_STACKTRACE" --ns-helper none -f pprof -o "$W/s1.pb.gz" -p "$P1" 2> "$W/pprof.err"
go tool pprof -tags "$W/s1.pb.gz" > "$W/pprof.tags" 2>> "$W/pprof.err"
grep -A1 "container:" "$W/pprof.tags" | grep -q "podman:$C1"; tap_result $? "pprof samples carry the label container=podman:NAME" "$W/pprof.tags"

# 7: record live, stop the container (not removed), unwind afterwards.
run "$C7"; P7=$(pid_of "$C7"); wait_mapped "$P7" libctrwork
sample_cpu 1000 "$P7" "$EU_STACKTRACE" --record "$W/s7.data" -f json -o /dev/null -p "$P7" 2> "$W/s7rec.err"
pod stop -t 0 "$C7" >/dev/null 2>&1
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s7.data" -f json -o "$W/s7.jsonl" 2> "$W/s7.err"
$PYTHON3 "$here/check-frames.py" "$W/s7.jsonl" "7 exited, not removed (layers)" > "$W/s7.row" 2>&1
r=$?; cat "$W/s7.row"; grep -q "found in the storage of \[podman:" "$W/s7.err" || r=1
tap_result $r "scenario 7: exited container unwound after exit from its layers" "$W/s7.err"

# 8: removed, its image remains: the image's layers.
pod rm -f -t 0 "$C7" >/dev/null 2>&1
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s7.data" -f json -o "$W/s8.jsonl" 2> "$W/s8.err"
$PYTHON3 "$here/check-frames.py" "$W/s8.jsonl" "8 removed, image remains" > "$W/s8.row" 2>&1
tap_result $? "scenario 8: removed container unwound from its image's layers" "$W/s8.err"
cat "$W/s8.row"

# A forged containers.json entry whose layer points at host files: refused.
G=/var/lib/containers/storage/overlay-containers
cp "$G/containers.json" "$W/containers.json.orig"
$PYTHON3 - "$G/containers.json" <<'PY'
import json, sys
p = sys.argv[1]; a = json.load(open(p))
a.append({"id": "f" * 64, "names": ["forged"], "image": "", "layer": "../../../../../opt/ctrtest"})
a.append({"id": "e" * 64, "names": ["forged2"], "image": "", "layer": "/"})
json.dump(a, open(p, "w"))
PY
"$EU_STACKTRACE" -v --ns-helper none -i "$W/s7.data" -f json -o "$W/forged.jsonl" 2> "$W/forged.err"
cp "$W/containers.json.orig" "$G/containers.json"
grep -q "refusing layer" "$W/forged.err" && ! grep -q "storage of \[podman:forged" "$W/forged.err"
tap_result $? "a forged containers.json entry gets no host file read through it" "$W/forged.err"
tap_done
