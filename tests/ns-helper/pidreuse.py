"""map_files of a process that exited and whose pid was reused by another
user's process (tests/ns-helper/pidreuse.sh runs this as root): the
helper's pin names the exited process, never the new one.

usage: pidreuse.py SOCKET UID GID OTHER-UID SECRET-PROG

The client (UID) pins its own sleep by map_files; it exits; the pid is
given (ns_last_pid) to OTHER-UID's SECRET-PROG (mode 0700: the client may
not read it).  The client then asks map_files of that pid for the range of
the secret program: on the same connection (the old pin, no start_time),
and on a fresh one.  Neither may serve it.
"""
import errno
import json
import os
import subprocess
import sys
import time

import nsh

sock_path, uid, gid, other, secret = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5]
tap = nsh.Tap()


def as_user(u, g):
    return lambda: (os.setgroups([]), os.setresgid(g, g, g), os.setresuid(u, u, u))


def range_of(pid, path):
    with open(f"/proc/{pid}/maps") as f:
        for ln in f:
            if ln.rstrip().endswith(path):
                a, b = ln.split()[0].split("-")
                return "0x" + a, "0x" + b
    return None


def mapped(pid, path, seconds=60):
    """range_of once PID maps PATH: after its exec (a bounded poll, not a
    guess of 0.2 s: a loaded machine may not have run the exec yet)."""
    end = time.monotonic() + seconds
    while True:
        r = range_of(pid, path)
        if r is not None or time.monotonic() >= end:
            return r
        time.sleep(0.05)


# The client's side runs in a child as UID; it reads commands on a pipe.
cr, pw = os.pipe()
pr, cw = os.pipe()
client = os.fork()
if client == 0:
    os.close(pw)
    os.close(pr)
    as_user(uid, gid)()
    fin, fout = os.fdopen(cr), os.fdopen(cw, "w")
    h = nsh.Helper(socket_path=sock_path)
    for ln in fin:
        cmd = json.loads(ln)
        hh = h if not cmd.pop("fresh", False) else nsh.Helper(socket_path=sock_path)
        reply, fd = hh.request(op="open", ways=["map_files"], **cmd)
        out = {"reply": reply}
        if fd is not None:
            out["target"] = os.readlink(f"/proc/self/fd/{fd}")
            out["sha"] = nsh.sha256_fd(fd)
            os.close(fd)
        fout.write(json.dumps(out) + "\n")
        fout.flush()
    os._exit(0)
os.close(cr)
os.close(cw)
fout, fin = os.fdopen(pw, "w"), os.fdopen(pr)


def ask(**cmd):
    fout.write(json.dumps(cmd) + "\n")
    fout.flush()
    return json.loads(fin.readline())


reused = None
for attempt in range(50):
    a = subprocess.Popen(["/bin/sleep", "60"], preexec_fn=as_user(uid, gid))
    ra = mapped(a.pid, "/sleep")
    first = ask(pid=a.pid, path="/usr/bin/sleep", start=ra[0], end=ra[1])
    a.kill()
    a.wait()
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(a.pid - 1))
    b = subprocess.Popen([secret, "60"], preexec_fn=as_user(other, other))
    if b.pid != a.pid:
        b.kill()
        b.wait()
        continue
    reused = (a.pid, first, b)
    break

if reused is None:
    tap.ok(False, "the pid of an exited process given to another user's (50 tries)", "")
else:
    pid, first, b = reused
    rb = mapped(pid, os.path.basename(secret))
    tap.ok(first["reply"].get("ok") and "target" in first,
           "map_files of the client's own process (the pin)", json.dumps(first)[:300])
    for fresh, what in ((False, "the same connection (the exited process's pin)"),
                        (True, "a fresh connection")):
        got = ask(pid=pid, path=secret, start=rb[0], end=rb[1], fresh=fresh)
        tap.note(json.dumps(got["reply"])[:300])
        served = "target" in got
        tap.ok(not served,
               f"map_files of pid {pid} reused by uid {other}'s 0700 program, {what}: "
               + ("SERVED " + got["target"] if served else "refused"),
               json.dumps(got["reply"])[:300])
    b.kill()
    b.wait()
fout.close()
os.waitpid(client, 0)
tap.done()
