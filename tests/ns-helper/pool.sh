#!/bin/sh
# The setns way's pool of namespace workers (src/ns-helper/pool.h), as the
# kernel shows it in /proc: a connection's second request for a namespace
# is served by the worker its first one started; two clients of different
# uids (root's spawned helper, a user's connection to the privileged
# service) never share a worker, even for the same namespace, and each
# worker runs as its own client with the sandbox of a worker of one job;
# a worker whose pinned process died exits and is never used again; a
# connection has at most 3 workers.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
roots=""
for n in 1 2 3 4 5 6; do
  start_ns root "pool$n" "" sleep 600 || exit 1
  roots="$roots $pid"
done
RUN_AS=$test_user start_ns user upool "" sleep 600 || exit 1
user_pid=$pid

mkdir "$tmp/sock"
sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$helper" --slots-dir="$tmp/slots" || tap_bail "the helper's service did not start"

# shellcheck disable=SC2086  # the pids are split into arguments on purpose
"$PYTHON3" - "$helper" "$sock" "$activate" "$test_uid" "$test_gid" "$user_pid" $roots \
  > "$tmp/pool.tap" 2> "$tmp/pool.err" <<'PY'
import json, os, select, signal, sys, time
import nsh
helper, sock_path, activate = sys.argv[1], sys.argv[2], int(sys.argv[3])
uid, gid, user_pid = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
roots = [int(p) for p in sys.argv[7:]]
tap = nsh.Tap()
SETNS = "/app/bin/nsprog"

def named(pid, name):
    return [k for k in nsh.kids(pid) if nsh.status_field(k, "Name") == name]

def workers(opener):
    """The pooled workers of a connection: the setns broker's children."""
    brokers = named(opener, "nsh-broker")
    return nsh.kids(brokers[0]) if brokers else []

def mnt(pid):
    """The mount namespace of PID, None once it has exited: a worker may
    leave between the listing and this look (idle for 30 s on a loaded
    machine, or let go as the least recently used)."""
    try:
        return os.stat(f"/proc/{pid}/ns/mnt").st_ino
    except FileNotFoundError:
        return None

def wait_gone(pid, seconds=20):
    """A worker exits by itself once its process is gone; wait for it."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}") or nsh.status_field(pid, "State").startswith("Z"):
            return True
        time.sleep(0.05)
    return False

def settled(opener, most, seconds=20):
    """The connection's live workers, once at most MOST are left (or after
    SECONDS).  A worker the pool lets go has its socket closed and exits
    when it next runs: on a loaded machine that is a while after the reply
    that let it go, and until then it is still the broker's child.  Each
    worker's exit is waited for on its pidfd, not by looking again."""
    fds = {}
    for w in workers(opener):
        try:
            fds[w] = os.pidfd_open(w)
        except ProcessLookupError:
            pass
    end = time.monotonic() + seconds
    try:
        while True:
            live = [w for w, fd in fds.items() if not select.select([fd], [], [], 0)[0]]
            left = end - time.monotonic()
            if len(live) <= most or left <= 0:
                return live
            select.select([fds[w] for w in live], [], [], left)
    finally:
        for fd in fds.values():
            os.close(fd)

def served(reply, fd):
    if fd is not None:
        os.close(fd)
    return bool(reply and reply.get("ok") and reply.get("way") == "setns")

# Root's helper, spawned: the namespaces of roots[0] and roots[1].
h = nsh.Helper(helper)
reply, fd = h.open(roots[0], SETNS, ways=["setns"])
ok1 = served(reply, fd)
first = workers(h.pid)
reply, fd = h.open(roots[0], SETNS, ways=["setns"])
ok2 = served(reply, fd)
again = workers(h.pid)
tap.ok(ok1 and ok2 and len(first) == 1 and again == first and mnt(first[0]) == mnt(roots[0]),
       f"root: two setns requests for one namespace, one worker (pid {first}), in that "
       f"namespace, kept", (reply, first, again))
reply, fd = h.open(roots[1], SETNS, ways=["setns"])
two = workers(h.pid)
tap.ok(served(reply, fd) and len(two) == 2 and first[0] in two
       and sorted(mnt(w) for w in two) == sorted([mnt(roots[0]), mnt(roots[1])]),
       f"root: another namespace, a second worker in it: {two}", (reply, two))

# The user's connection to the privileged service, in a child that does
# what the parent says over a pipe.
p2c_r, p2c_w = os.pipe()
c2p_r, c2p_w = os.pipe()
child = os.fork()
if child == 0:
    os.close(p2c_w); os.close(c2p_r)
    os.setgroups([]); os.setresgid(gid, gid, gid); os.setresuid(uid, uid, uid)
    u = nsh.Helper(socket_path=sock_path)
    inp, out = os.fdopen(p2c_r), os.fdopen(c2p_w, "w")
    for line in inp:
        pid = int(line)
        r, f = u.open(pid, SETNS, ways=["setns"])
        if f is not None:
            os.close(f)
        out.write(json.dumps(r) + "\n"); out.flush()
    os._exit(0)
os.close(p2c_r); os.close(c2p_w)
cin, cout = os.fdopen(c2p_r), os.fdopen(p2c_w, "w")
def as_user(pid):
    cout.write(f"{pid}\n"); cout.flush()
    return json.loads(cin.readline())

r_user = as_user(user_pid)
conns = nsh.kids(activate)
user_opener = conns[-1] if conns else None
reply, fd = h.open(user_pid, SETNS, ways=["setns"])
r_root = served(reply, fd)
uw, rw = workers(user_opener), workers(h.pid)
uw_in = [w for w in uw if mnt(w) == mnt(user_pid)]
rw_in = [w for w in rw if mnt(w) == mnt(user_pid)]
tap.ok(r_user.get("ok") and r_user.get("way") == "setns" and r_root
       and len(uw_in) == 1 and len(rw_in) == 1 and not set(uw) & set(rw),
       f"root and uid {uid}, one namespace: each served by a worker of its own connection "
       f"(root's {rw_in}, the user's {uw_in}), none shared", (r_user, reply, uw, rw))
def ids(pid, key):
    return set(nsh.status_field(pid, key).split())
# The user's worker became the user, then entered the user namespace the
# user owns (as a worker of one job does, and as the user could): the
# capabilities it shows are the user's own in that namespace, and none in
# the helper's.
w = uw_in[0] if uw_in else None
def userns(pid):
    return os.stat(f"/proc/{pid}/ns/user").st_ino
tap.ok(w is not None and ids(w, "Uid") == {str(uid)} and ids(w, "Gid") == {str(gid)}
       and userns(w) == userns(user_pid) and userns(w) != userns(os.getpid())
       and nsh.status_field(w, "NoNewPrivs") == "1" and nsh.status_field(w, "Seccomp") == "2"
       and nsh.status_field(w, "CapAmb") == "0000000000000000",
       f"the user's pooled worker: uid/gid {uid}/{gid}, in the user namespace the user owns "
       "(none of the helper's capabilities), no_new_privs, seccomp",
       w and {k: nsh.status_field(w, k) for k in ("Uid", "Gid", "CapEff", "NoNewPrivs", "Seccomp")})
w = rw_in[0] if rw_in else None
tap.ok(w is not None and ids(w, "Uid") == {"65534"}
       and nsh.status_field(w, "NoNewPrivs") == "1" and nsh.status_field(w, "Seccomp") == "2",
       "root's pooled worker: nobody, no_new_privs, seccomp (as a worker of one job)",
       w and {k: nsh.status_field(w, k) for k in ("Uid", "CapEff", "NoNewPrivs", "Seccomp")})
r_forbidden = as_user(roots[0])
tap.ok(not r_forbidden.get("ok") and not set(workers(user_opener)) & set(workers(h.pid))
       and all(mnt(x) != mnt(roots[0]) for x in workers(user_opener)),
       f"uid {uid} asks for root's namespace (roots[0]): refused ({r_forbidden.get('errno')}), "
       "root's worker there not lent", r_forbidden)

# A dead namespace: its process killed, the worker exits by itself and is
# not used again; a new namespace gets a new worker.
dead_ns = mnt(roots[1])
old = [x for x in workers(h.pid) if mnt(x) == dead_ns]
os.kill(roots[1], signal.SIGKILL)
gone = bool(old) and wait_gone(old[0])
# The pin keeps the namespace: a worker of that one job serves the request
# (as before the pool) and is gone with its reply.
reply, fd = h.open(roots[1], SETNS, ways=["setns"])
ok = served(reply, fd)
left = [x for x in workers(h.pid) if not nsh.status_field(x, "State").startswith("Z")
        and os.path.exists(f"/proc/{x}/ns/mnt") and mnt(x) == dead_ns]
tap.ok(gone and ok and old[0] not in workers(h.pid) and not left,
       f"roots[1] killed: its worker {old} exited by itself; the next request for its file "
       "is served by a worker of one job in the pinned namespace, and no worker stays there",
       (gone, reply, workers(h.pid), left))
reply, fd = h.open(roots[2], SETNS, ways=["setns"])
now = workers(h.pid)
new = [x for x in now if mnt(x) == mnt(roots[2])]
tap.ok(served(reply, fd) and len(new) == 1 and new[0] not in old,
       f"a new namespace (roots[2]): a new worker {new}, not {old}", (reply, now))

# The bound: six namespaces, at most four workers; all served.
oks = []
for p in roots[2:] + [roots[0], user_pid]:
    reply, fd = h.open(p, SETNS, ways=["setns"])
    oks.append(served(reply, fd))
now = workers(h.pid)
live = settled(h.pid, 3)
tap.ok(all(oks) and len(live) <= 3, f"{len(oks)} namespaces in turn: all served, "
       f"{len(live)} live workers once those let go have exited (at most 3)", (oks, now, live))

cout.close()
os.waitpid(child, 0)
h.close()
tap.done()
PY
relay_tap pool.py "$tmp/pool.tap" "$tmp/pool.err"
plan_and_done
