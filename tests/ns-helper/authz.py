"""The helper adds reachability, never permission (tests/ns-helper/authz.sh
runs this as root, against the helper as a socket service).

usage: authz.py SOCKET TMP UID GID UID2 GID2 IDLE-TIMEOUT

A user who is not root asks the privileged service, by every way, for a
file only root may read: by absolute path, through `..', a symlink, a hard
link, a bind mount in the user's own namespace, a setuid process's root,
another process's mount namespace proved with the user's own; it probes for
existence; it holds 64 idle connections.  Each attack is one TAP line; the
table at the end says what came back and what shows it.
"""
import errno
import json
import os
import select
import socket
import subprocess
import sys
import time

import nsh

sock_path, tmp = sys.argv[1], sys.argv[2]
uid, gid, uid2, gid2 = (int(a) for a in sys.argv[3:7])
idle_timeout = int(sys.argv[7])
tap = nsh.Tap()
rows = []
secret = f"{tmp}/private/secret.so"      # 0600 root, in a 0700 directory
secret2 = f"{tmp}/pub/secret2.so"        # 0600 root, in a 0755 directory
forbidden_sums = {nsh.sha256(secret), nsh.sha256(secret2)}
NO_FILE = "no readable ELF file at that path"


def as_user(u, g, fn, *args):
    """FN(*ARGS) in a child that is user U (no groups): its JSON result."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(g, g, g)
            os.setresuid(u, u, u)
            out = fn(*args)
        except BaseException as e:   # noqa: B036 -- reported to the parent
            out = {"exception": repr(e)}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def ask(fields, fd_paths=()):
    """One request on a new connection to the service."""
    fds = [os.open(p, os.O_RDONLY) for p in fd_paths]
    h = nsh.Helper(socket_path=sock_path)
    reply, fd = h.request(fds=fds, **fields)
    for f in fds:
        os.close(f)
    h.close()
    sha = None
    if fd is not None:
        sha = nsh.sha256_fd(fd)
        os.close(fd)
    return {"reply": reply, "sha": sha}


def user_asks(fields, fd_paths=(), u=uid, g=gid):
    return as_user(u, g, ask, fields, list(fd_paths))


def record(cond, attack, result, evidence):
    tap.ok(cond, f"{attack}: {result}", evidence)
    rows.append((attack, result, evidence))


def refused(out, want_errno=(errno.ENOENT,)):
    reply = out.get("reply") or {}
    return (not reply.get("ok") and out.get("sha") is None and reply.get("errno") in want_errno
            and "exception" not in out)


def describe(out):
    if "exception" in out:
        return out["exception"]
    reply = out["reply"]
    if reply.get("ok"):
        leaked = out["sha"] in forbidden_sums
        return f"fd by {reply.get('way')}" + (", the root-only file's bytes" if leaked else "")
    return f"{errno.errorcode.get(reply.get('errno'), reply.get('errno'))}: {reply.get('message')}"


def attack_ways(attack, pid, path, ways_list=(["openat2"], ["setns"], None), extra=None,
                fd_paths=(), want=(errno.ENOENT,)):
    for ways in ways_list:
        fields = {"op": "open", "pid": pid, "path": path}
        fields.update(extra or {})
        if ways:
            fields["ways"] = ways
        out = user_asks(fields, fd_paths)
        record(refused(out, want), f"{attack} ({'+'.join(ways) if ways else 'every way'})",
               "refused" if refused(out, want) else "SERVED", describe(out))


def wait_for(pred, what, timeout=60):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not happen")


def range_of(pid, path):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path:
                a, b = parts[0].split("-")
                return hex(int(a, 16)), hex(int(b, 16))
    return None


procs = []


def start(argv, **kw):
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, **kw)
    procs.append(p)
    return p


# The processes the user names: its own on the host, its own in a user
# namespace of its own (with a hard link and a bind mount of a root-only
# file), a setuid program it started, and root's, which maps the secret.
own = start(["sleep", "300"], user=uid, group=gid, extra_groups=[])
wait_for(lambda: nsh.status_field(own.pid, "Name") == "sleep", "the user's sleep")
os.link(secret2, f"{tmp}/u/hard-by-root.so")    # as protected_hardlinks=0 would let the user
script = f"""
ln {secret2} {tmp}/u/hard.so 2>{tmp}/u/ln.err; echo $? > {tmp}/u/ln.status
: > {tmp}/u/bind.so
mount --bind {secret2} {tmp}/u/bind.so 2>{tmp}/u/bind.err; echo $? > {tmp}/u/bind.status
exec sleep 300
"""
userns = start(["unshare", "-Urm", "--propagation", "private", "sh", "-c", script], user=uid,
               group=gid, extra_groups=[])
wait_for(lambda: os.path.exists(f"{tmp}/u/bind.status")
         and nsh.status_field(userns.pid, "Name") == "sleep", "the user's namespace")
ln_status = open(f"{tmp}/u/ln.status").read().strip()
bind_status = open(f"{tmp}/u/bind.status").read().strip()
suid = start([f"{tmp}/suid-sleep", "300"], user=uid, group=gid, extra_groups=[])
wait_for(lambda: nsh.status_field(suid.pid, "Name") == "suid-sleep", "the setuid program")
rootp = start([sys.executable, "-c",
               "import mmap, sys, time\n"
               "f = open(sys.argv[1], 'rb')\n"
               "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
               "time.sleep(300)\n", secret])
wait_for(lambda: range_of(rootp.pid, secret) is not None, "root's mapping of the secret")
start_r, end_r = range_of(rootp.pid, secret)
tap.note(f"the user's process {own.pid}, its namespace's {userns.pid} (ln exit {ln_status}, "
         f"mount --bind exit {bind_status}), setuid {suid.pid} (Uid "
         f"{nsh.status_field(suid.pid, 'Uid')}), root's {rootp.pid} maps {secret}")

# Finding 1: a root-only file by the user's own process, each way.
attack_ways("root-only file by absolute path", own.pid, secret)
build_id = nsh.build_id_of(secret)
out = user_asks({"op": "debuginfo", "pid": own.pid, "path": f"{tmp}/private/prog",
                 "build_id": build_id, "debuglink": "secret.so"})
record(refused(out), "debuginfo op: debuglink beside a root-only file", "refused" if refused(out)
       else "SERVED", describe(out))
attack_ways("root-only file through `..'", own.pid, f"{tmp}/pub/../private/secret.so", [None])
as_user(uid, gid, os.symlink, secret, f"{tmp}/u/link.so")
attack_ways("root-only file through the user's symlink", own.pid, f"{tmp}/u/link.so", [None])
attack_ways("hard link of a root-only file (made by root, as without protected_hardlinks)",
            own.pid, f"{tmp}/u/hard-by-root.so")
attack_ways(f"hard link in the user's unshare -Urm namespace (ln exit {ln_status})",
            userns.pid, f"{tmp}/u/hard.so", [None])
attack_ways(f"bind mount of a root-only file in the user's unshare -Urm namespace "
            f"(mount exit {bind_status})", userns.pid, f"{tmp}/u/bind.so")
attack_ways("root-only file by the pid of a setuid program the user started", suid.pid, secret,
            [None], want=(errno.EPERM,))
attack_ways("root-only file through /proc/PID/root of the setuid program", own.pid,
            f"/proc/{suid.pid}/root{secret}", [None])
# map_files: only for a process the user may read itself.
attack_ways("map_files of root's process that maps the secret", rootp.pid, secret,
            [["map_files"]], extra={"start": start_r, "end": end_r}, want=(errno.EPERM,))
# The user's own /proc/self/ns/mnt "proves" root's process (same namespace).
for ways in (["map_files"], ["openat2"], ["setns"], None):
    attack_ways("own /proc/self/ns/mnt as proof for root's process", rootp.pid, secret, [ways],
                extra={"start": start_r, "end": end_r, "ns_fd": True},
                fd_paths=["/proc/self/ns/mnt"])

# Existence probing: one answer for all that is not a readable ELF file.
answers = {}
for what, path in (("missing", f"{tmp}/private/missing.so"), ("forbidden", secret),
                   ("not ELF", "/etc/hostname"), ("not a regular file", "/dev/null"),
                   ("a directory", "/usr")):
    out = user_asks({"op": "open", "pid": own.pid, "path": path})
    reply = out["reply"]
    answers[what] = (reply.get("errno"), reply.get("message"))
same = len(set(answers.values())) == 1 and answers["missing"] == (errno.ENOENT, NO_FILE)
record(same, "existence probing: missing, forbidden, not ELF, not regular, a directory",
       "one answer" if same else "TELLS THEM APART",
       "; ".join(f"{k}: {v[0]} {v[1]!r}" for k, v in answers.items()))

# What the user may have, it still gets; root gets everything as before.
sleep_range = range_of(own.pid, "/usr/bin/sleep")
for ways in (["map_files"], ["openat2"], ["setns"]):
    out = user_asks({"op": "open", "pid": own.pid, "path": "/usr/bin/sleep", "ways": ways,
                     "start": sleep_range[0], "end": sleep_range[1]})
    good = out["reply"].get("ok") and out["sha"] == nsh.sha256("/usr/bin/sleep")
    record(good, f"control: the user's own process's /usr/bin/sleep by {ways[0]}",
           "served" if good else "NOT SERVED", describe(out))
out = user_asks({"op": "open", "pid": rootp.pid, "path": "/usr/bin/sleep", "ns_fd": True,
                 "ways": ["openat2"]}, ["/proc/self/ns/mnt"])
good = out["reply"].get("ok") and out["sha"] == nsh.sha256("/usr/bin/sleep")
record(good, "control: own ns_fd for root's process, a world-readable file by openat2",
       "served (reachability)" if good else "NOT SERVED", describe(out))
out = ask({"op": "open", "pid": rootp.pid, "path": secret, "ways": ["openat2"]})
good = out["reply"].get("ok") and out["sha"] == nsh.sha256(secret)
record(good, "control: root asks for the root-only file", "served" if good else "NOT SERVED",
       describe(out))
out = ask({"op": "open", "pid": rootp.pid, "path": f"{tmp}/private/missing.so"})
good = out["reply"].get("errno") == errno.ENOENT and out["reply"].get("message") != NO_FILE
record(good, "control: root keeps the detailed errors", "detailed" if good else "NOT DETAILED",
       describe(out))


# Finding 7: one user holds 64 connections.
def hold(n, report_fd):
    socks, refusals = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sock_path)
        socks.append(s)
    # Each refusal comes once its helper has started: 64 of them take a
    # while on a loaded machine.  Wait for them (up to 30 s), not 1.5 s.
    held = list(socks)
    t0 = time.monotonic()
    while len(held) > 8 and time.monotonic() - t0 < 30 or time.monotonic() - t0 < 1.5:
        r, _, _ = select.select(held, [], [], 0.25)
        for s in r:
            msg = s.recv(8192)
            refusals.append(json.loads(msg) if msg else None)
            s.close()
            held.remove(s)
    os.write(report_fd, (json.dumps({"held": len(held), "refused": len(refusals),
                                     "example": refusals[0] if refusals else None}) + "\n")
             .encode())
    # Each closed by the helper once idle: its EOF waited for (select) until
    # a minute past the idle timeout, not looked for once 2.5 s after it (a
    # loaded machine runs the helper's timer later than that).
    closed = 0
    deadline = time.monotonic() + idle_timeout + 60
    for s in held:
        r, _, _ = select.select([s], [], [], max(0, deadline - time.monotonic()))
        if r and s.recv(8192) == b"":
            closed += 1
    return {"closed": closed, "held": len(held)}


r_fd, w_fd = os.pipe()
child = os.fork()
if child == 0:
    os.close(r_fd)
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        out = hold(64, w_fd)
    except BaseException as e:   # noqa: B036
        out = {"exception": repr(e)}
    os.write(w_fd, (json.dumps(out) + "\n").encode())
    os._exit(0)
os.close(w_fd)
reader = os.fdopen(r_fd)
first = json.loads(reader.readline())
ex = first.get("example") or {}
good = first["held"] == 8 and first["refused"] == 56 and "8 connections" in ex.get("message", "")
record(good, "one user opens 64 connections", f"{first['held']} held, {first['refused']} refused",
       f"errno {ex.get('errno')}: {ex.get('message')}")
own2 = start(["sleep", "300"], user=uid2, group=gid2, extra_groups=[])
wait_for(lambda: nsh.status_field(own2.pid, "Name") == "sleep", "the other user's sleep")
out = user_asks({"op": "open", "pid": own2.pid, "path": "/usr/bin/sleep"}, u=uid2, g=gid2)
good = out["reply"].get("ok") and out["sha"] == nsh.sha256("/usr/bin/sleep")
record(good, "... meanwhile another user", "served" if good else "NOT SERVED", describe(out))
second = json.loads(reader.readline())
os.waitpid(child, 0)
good = second.get("closed") == 8
record(good, f"... the 8 idle connections after {idle_timeout} s",
       f"{second.get('closed')} of {second.get('held')} closed by the helper", "recv: EOF")
out = user_asks({"op": "open", "pid": own.pid, "path": "/usr/bin/sleep"})
good = out["reply"].get("ok")
record(good, "... then the first user again", "served" if good else "NOT SERVED", describe(out))

for p in procs:
    p.kill()
    p.wait()
tap.note("")
tap.note("attack | result | evidence")
for attack, result, evidence in rows:
    tap.note(f"{attack} | {result} | {evidence}")
tap.done()
