#!/bin/sh
# A pooled setns worker stuck on a hung FUSE mount (a daemon that never
# answers, made here with /dev/fuse and mount(2): it never reads the
# device, so every lookup below the mount waits): the request gets an
# error after the job timeout (broker.h, 10 s), the worker is killed by its
# job timer, and for the next 60 s the namespace gets an error at once
# naming the reason, with no worker started there; another namespace is
# served meanwhile.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
[ -c /dev/fuse ] || tap_skip_all "no /dev/fuse"

# Inside the namespace, before the program starts: a FUSE mount at /hung
# whose daemon (a python3 process, its pid in $tmp/fuse.pid) never answers.
cat > "$tmp/hung-setup.sh" <<SETUP
mkdir "\$root/hung"
"$PYTHON3" - "\$root/hung" "$tmp/fuse.pid" <<'PY' &
import ctypes, os, sys, time
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
if libc.mount(b"eu-stacktrace-hung", sys.argv[1].encode(), b"fuse", 0, opts) != 0:
    sys.exit(f"mounting FUSE at {sys.argv[1]}: {os.strerror(ctypes.get_errno())}")
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
sys.stdout.close()
while True:
    time.sleep(3600)
PY
# The daemon writes its pid after the mount: once it is there, both are,
# and the test below may read it (the mount alone left it a moment to lose).
i=0
while [ ! -s "$tmp/fuse.pid" ] && [ \$i -lt 400 ]; do
  sleep 0.05; i=\$((i + 1))
done
SETUP
start_ns root hung "$tmp/hung-setup.sh" sleep 600 || exit 1
hung_pid=$pid
if [ -s "$tmp/fuse.pid" ]; then
  started_pids="$started_pids $(cat "$tmp/fuse.pid")"
else
  tap_bail "the FUSE daemon did not start: $(cat "$tmp/hung.log")"
fi
start_ns root other "" sleep 600 || exit 1
other_pid=$pid

"$PYTHON3" - "$helper" "$hung_pid" "$other_pid" > "$tmp/hung.tap" 2> "$tmp/hung.err" <<'PY'
import errno, os, sys, time
import nsh
helper, hung_pid, other_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tap = nsh.Tap()
SETNS = "/app/bin/nsprog"

def live(pid):
    return os.path.exists(f"/proc/{pid}") and not nsh.status_field(pid, "State").startswith("Z")

def timed(pid, path):
    t = time.monotonic()
    reply, fd = h.open(pid, path, ways=["setns"])
    if fd is not None:
        os.close(fd)
    return reply or {}, time.monotonic() - t

h = nsh.Helper(helper)
reply, _ = timed(hung_pid, SETNS)
broker = [k for k in nsh.kids(h.pid) if nsh.status_field(k, "Name") == "nsh-broker"][0]
stuck = [w for w in nsh.kids(broker) if live(w)]
tap.ok(reply.get("ok") and len(stuck) == 1,
       f"the namespace with the hung mount: {SETNS} served by a pooled worker {stuck}", reply)

reply, took = timed(hung_pid, "/hung/file")
tap.ok(not reply.get("ok") and reply.get("errno") == errno.ETIMEDOUT
       and "did not answer in 10 s" in reply.get("message", "") and 9 < took < 19,
       f"a file under the hung mount: an error after {took:.1f} s "
       f"({reply.get('errno')}: {reply.get('message')})", reply)

# The worker's job timer kills it 2 s after the opener gave up.
end = time.monotonic() + 15
while time.monotonic() < end and stuck and live(stuck[0]):
    time.sleep(0.05)
tap.ok(stuck and not live(stuck[0]),
       f"the stuck worker {stuck} is killed (its job timer), not left waiting on the mount",
       stuck and os.path.exists(f"/proc/{stuck[0]}") and nsh.status_field(stuck[0], "State"))

replies = [timed(hung_pid, p) for p in (SETNS, "/hung/file", SETNS)]
workers = [w for w in nsh.kids(broker) if live(w)]
tap.ok(all(not r.get("ok") and r.get("errno") == errno.ETIME and "hung" in r.get("message", "")
           and took < 2 for r, took in replies) and not workers,
       "then three requests in that namespace: each an error at once "
       f"({', '.join(f'{took:.2f} s' for _, took in replies)}: {replies[0][0].get('message')}), "
       f"no worker started there ({workers})", replies)

reply, took = timed(other_pid, SETNS)
tap.ok(reply.get("ok") and reply.get("way") == "setns",
       f"another namespace is served meanwhile ({took:.2f} s)", reply)
h.close()
tap.done()
PY
relay_tap hung.py "$tmp/hung.tap" "$tmp/hung.err"
plan_and_done
