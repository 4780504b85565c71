#!/bin/sh
# When the setns broker cannot fork a pooled worker (EAGAIN under a pids
# limit, as under the unit's TasksMax), the request gets one clean error
# reply, the opener closes none of its own descriptors (31693b3: a failed
# spawn left stale numbers in the descriptor slots, which the checks
# fstat'ed and closed), and once forks work again every request is served.
# The fork fails for real: the broker alone is moved into a pids cgroup
# whose pids.max is 1 (itself), then the limit is lifted.  The opener is
# watched by strace (its closes, and its reads to show it was traced) and
# by /proc/PID/fd.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage

# A pids cgroup: cgroup v1's pids hierarchy, or cgroup2 with the pids
# controller.
cg=""
if [ -w /sys/fs/cgroup/pids/cgroup.procs ]; then
  cg=/sys/fs/cgroup/pids/eu-stacktrace-nsh-$$
elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  grep -qw pids /sys/fs/cgroup/cgroup.subtree_control || echo +pids > /sys/fs/cgroup/cgroup.subtree_control
  cg=/sys/fs/cgroup/eu-stacktrace-nsh-$$
fi
if [ -z "$cg" ] || ! mkdir "$cg"; then
  tap_skip_all "no writable pids cgroup (v1 /sys/fs/cgroup/pids or cgroup2 +pids)"
fi
command -v strace > /dev/null || tap_bail "strace is missing (tools/install-deps.sh installs it)"

start_ns root fork1 "" sleep 600 || exit 1
ns1=$pid
start_ns root fork2 "" sleep 600 || exit 1
ns2=$pid

"$PYTHON3" - "$helper" "$cg" "$tmp" "$ns1" "$ns2" > "$tmp/fork.tap" 2> "$tmp/fork.err" <<'PY'
import errno, os, re, subprocess, sys, time
import nsh
helper, cg, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
ns1, ns2 = int(sys.argv[4]), int(sys.argv[5])
tap = nsh.Tap()
SETNS = "/app/bin/nsprog"

def kids(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(c) for c in f.read().split()]

def named(pid, name):
    return [k for k in kids(pid) if nsh.status_field(k, "Name") == name]

def fds(pid):
    """The opener's descriptors: number -> what it is."""
    out = {}
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(n)] = os.readlink(f"/proc/{pid}/fd/{n}")
        except FileNotFoundError:
            pass
    return out

def served(reply, fd):
    if fd is not None:
        os.close(fd)
    return bool(reply and reply.get("ok") and reply.get("way") == "setns")

def put(path, text):
    with open(path, "w") as f:
        f.write(text)

h = nsh.Helper(helper)
opener = h.pid
# A pooled worker for ns1: its socket is one of the opener's descriptors
# that a stale slot number would hit.
reply, fd = h.open(ns1, SETNS, ways=["setns"])
ok1 = served(reply, fd)
broker = named(opener, "nsh-broker")
# The opener's own descriptors, but not a reply's file: the opener closes
# it once sent, maybe after the client got it.
before = {n: what for n, what in fds(opener).items() if what != SETNS}
tap.ok(ok1 and len(broker) == 1 and len(kids(broker[0])) == 1,
       f"ns1 served by setns, one pooled worker: {broker and kids(broker[0])}", reply)

# The broker may not fork from now on.
put(f"{cg}/pids.max", "1")
put(f"{cg}/cgroup.procs", str(broker[0]))
trace = f"{tmp}/opener.strace"
strace = subprocess.Popen(["strace", "-qq", "-e", "trace=close,read,recvmsg", "-o", trace, "-p", str(opener)],
                          stderr=subprocess.PIPE)
# Attached once the kernel names strace as the opener's tracer.
end = time.monotonic() + 20
attached = False
while time.monotonic() < end and not attached:
    attached = nsh.status_field(opener, "TracerPid") not in ("0", "")
    if not attached:
        time.sleep(0.05)

replies = []
for _ in range(3):
    r, f = h.open(ns2, SETNS, ways=["setns"])
    replies.append(r)
    if f is not None:
        os.close(f)
r_ns1, f = h.open(ns1, SETNS, ways=["setns"])
ok_ns1 = served(r_ns1, f)
strace.terminate()
strace.wait()
after = fds(opener)
events = ""
if attached:
    with open(trace) as t:
        events = t.read()
closes = [(int(m.group(1)), m.group(2)) for m in
          re.finditer(r"close\((\d+)\)\s*=\s*(-?\d+[^\n]*)", events)]
bad = [c for c in closes if not c[1].startswith("0")]
own = sorted({n for n, _ in closes if n in before})
workers_now = kids(broker[0]) if os.path.exists(f"/proc/{broker[0]}") else None
# EAGAIN, the fork's own errno, with the message that the process failed.
clean = all(r is not None and not r.get("ok") and r.get("errno") == errno.EAGAIN
            for r in replies)
tap.ok(clean and h.proc.poll() is None,
       "the broker cannot fork: each of 3 setns requests for ns2 gets an error reply "
       f"(errno {[r and r.get('errno') for r in replies]}: "
       f"{[r and r.get('message', '')[:80] for r in replies]}), the helper runs on", replies)
tap.ok(attached and ("recvmsg(" in events or "read(" in events) and not bad and not own
       and all(after.get(n) == what for n, what in before.items()),
       f"the opener closed none of its own descriptors ({len(closes)} closes traced, none of "
       f"{sorted(before)}, none failed) and holds every one of them after (and the pin of ns2)",
       {"attached": attached, "bad": bad, "own": own, "before": before, "after": after})
tap.ok(ok_ns1 and workers_now is not None and len(workers_now) == 1,
       f"meanwhile ns1 is served by its pooled worker {workers_now}", r_ns1)

# Forks work again.
put(f"{cg}/pids.max", "max")
reply, fd = h.open(ns2, SETNS, ways=["setns"])
ok2 = served(reply, fd)
reply1, fd = h.open(ns1, SETNS, ways=["setns"])
ok1 = served(reply1, fd)
tap.ok(ok2 and ok1 and len(kids(broker[0])) == 2,
       f"the limit lifted: ns2 and ns1 served by setns, {len(kids(broker[0]))} pooled workers",
       (reply, reply1))
h.close()
tap.done()
PY
relay_tap pool-fork.py "$tmp/fork.tap" "$tmp/fork.err"
# The cgroup goes once the broker has exited with the helper.
i=0
while ! rmdir "$cg" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
plan_and_done
