"""Attacks found in the review of issue 11's redesign (tests/ns-helper/review.sh
runs this as root, against the test build of the helper as a socket service).

usage: review.py SOCKET TMP UID GID SUID-PROG

Each attack is one TAP line; the table at the end says what came back.
  - connections from the uids of a user namespace the user owns (its
    subordinate ids): one account, 8 connections, not 8 per uid
  - map_files of the user's process that exec's a setuid program between
    the helper's check and its open (the test build pauses in between)
  - map_files of a process in a user namespace the user owns, nested in
    root's: the kernel does not let the user read that process
  - map_files of a process of the user's uid with capabilities the user
    lacks (ambient): neither
  - malformed binary ops to the opener from a parser taken over
  - namespace proofs of other kinds (user, pid namespace, pidfd, a file)
  - a wrong start_time for root's process: not answered with the real one
"""
import ctypes
import errno
import json
import mmap
import os
import select
import socket
import subprocess
import sys
import time

import nsh

sock_path, tmp = sys.argv[1], sys.argv[2]
uid, gid = int(sys.argv[3]), int(sys.argv[4])
suid_prog = sys.argv[5]
tap = nsh.Tap()
rows = []
NO_FILE = "no readable ELF file at that path"
CLONE_NEWUSER = 0x10000000
libc = ctypes.CDLL(None, use_errno=True)


def record(cond, attack, result, evidence):
    tap.ok(cond, f"{attack}: {result}", evidence)
    rows.append((attack, result, evidence))


def unshare_user():
    if libc.unshare(CLONE_NEWUSER) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def become(u, g):
    os.setgroups([])
    os.setresgid(g, g, g)
    os.setresuid(u, u, u)
    libc.prctl(4, 1, 0, 0, 0)    # PR_SET_DUMPABLE, as after an exec


def child(fn, *args):
    """FN(w, *ARGS) in a child; its lines on a pipe: (pid, file of lines)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            fn(w, *args)
        except BaseException as e:   # noqa: B036 -- reported to the parent
            os.write(w, (json.dumps({"exception": repr(e)}) + "\n").encode())
        os._exit(0)
    os.close(w)
    return pid, os.fdopen(r)


def line(f):
    out = json.loads(f.readline() or '{"exception": "no answer"}')
    if "exception" in out:
        raise RuntimeError(out["exception"])
    return out


def say(w, **kw):
    os.write(w, (json.dumps(kw) + "\n").encode())


def write_map(pid, what, text):
    with open(f"/proc/{pid}/{what}", "w") as f:
        f.write(text)


# 1. The uids of a user namespace the user owns (as newuidmap would map its
#    /etc/subuid range; root writes the map here).
def many_uids(w, go_r, n):
    become(uid, gid)
    unshare_user()
    say(w, ready=True)
    os.read(go_r, 1)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    socks = []
    for i in range(1, n + 1):
        os.seteuid(i)       # SO_PEERCRED reports this uid: 400000 + i
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sock_path)
        socks.append(s)
        os.seteuid(0)
    # Refusals come as the helpers start: wait for them on a loaded machine.
    live, refusals = list(socks), []
    t0 = time.monotonic()
    while len(live) > 8 and time.monotonic() - t0 < 30 or time.monotonic() - t0 < 1.5:
        ready, _, _ = select.select(live, [], [], 0.25)
        for s in ready:
            msg = s.recv(8192)
            refusals.append(json.loads(msg) if msg else None)
            live.remove(s)
    held = len(live)
    say(w, held=held, refused=len(refusals), example=refusals[0] if refusals else None)
    time.sleep(30)


go_r, go_w = os.pipe()
pid, f = child(many_uids, go_r, 24)
line(f)
write_map(pid, "uid_map", "0 400000 64\n")
write_map(pid, "gid_map", "0 400000 64\n")
os.write(go_w, b"g")
out = line(f)
ex = out.get("example") or {}
good = out["held"] <= 8 and out["refused"] >= 16
record(good, "24 connections from 24 uids of a user namespace the user owns",
       f"{out['held']} held, {out['refused']} refused",
       f"errno {ex.get('errno')}: {ex.get('message')}")
os.kill(pid, 9)
os.waitpid(pid, 0)
time.sleep(0.5)


# 2. exec of a setuid program between the check and the open of map_files.
def race_exec(w):
    become(uid, gid)
    r, wr = os.pipe()
    target = os.fork()
    if target == 0:
        os.close(wr)
        os.read(r, 1)
        os.execv(suid_prog, [suid_prog])
        os._exit(1)
    os.close(r)
    h = nsh.Helper(socket_path=sock_path)
    req = {"v": 1, "id": 1, "op": "open", "pid": target, "path": suid_prog,
           "ways": ["map_files"], "start": "0x400000", "end": "0x401000"}
    h.sock.sendmsg([json.dumps(req).encode()])
    time.sleep(0.5)          # the helper has judged the process: the user's
    os.write(wr, b"x")       # now it becomes the setuid program
    # (On a starved machine the helper may judge it after the exec: then it
    # refuses a setuid process, EPERM/EACCES, which is as good.)
    reply, fd = h.receive()
    ino = os.fstat(fd).st_ino if fd is not None else None
    if fd is not None:
        os.close(fd)
    status = open(f"/proc/{target}/status").read()
    uids = [ln for ln in status.splitlines() if ln.startswith("Uid:")][0]
    readable = os.access(suid_prog, os.R_OK)
    os.kill(target, 9)
    os.waitpid(target, 0)
    say(w, reply=reply, ino=ino, uids=uids, readable=readable)


pid, f = child(race_exec)
out = line(f)
os.waitpid(pid, 0)
reply = out["reply"] or {}
secret_ino = os.stat(suid_prog).st_ino
served = out["ino"] == secret_ino
good = (not served and not reply.get("ok")
        and reply.get("errno") in (errno.ENOENT, errno.EPERM, errno.EACCES))
record(good, "map_files of the user's process that exec's a setuid 4711 program after the check",
       "SERVED the unreadable program" if served else "refused",
       f"target {out['uids']}, user may read it: {out['readable']}; "
       f"errno {reply.get('errno')}: {reply.get('message')}")


# 3. A user namespace the user owns, nested in root's: root's container
#    maps its root to the user's uid and 300000 to its uid 1.
nested_dir = f"{tmp}/nested"
secret = f"{nested_dir}/secret.so"


def nested_b(w, go_r):
    unshare_user()               # owned by the user's uid: A's root is it
    say(w, ready=True)
    os.read(go_r, 1)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)        # 300000 on the host
    libc.prctl(4, 1, 0, 0, 0)    # dumpable, as after an exec
    fd = os.open(secret, os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)   # noqa: F841 -- kept mapped
    os.close(fd)
    for ln in open("/proc/self/maps"):
        parts = ln.split()
        if len(parts) >= 6 and parts[5] == secret:
            a, b = parts[0].split("-")
            say(w, start=hex(int(a, 16)), end=hex(int(b, 16)), pid=os.getpid())
            break
    time.sleep(60)


def nested_a(w, go_r):
    unshare_user()               # root's
    say(w, ready=True)
    os.read(go_r, 1)
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)        # the user's uid on the host, root in A
    libc.prctl(4, 1, 0, 0, 0)    # dumpable: it writes its child's maps
    go2_r, go2_w = os.pipe()
    bpid, bf = child(nested_b, go2_r)
    line(bf)
    write_map(bpid, "uid_map", "0 1 1\n")
    write_map(bpid, "gid_map", "0 1 1\n")
    os.write(go2_w, b"g")
    out = line(bf)
    say(w, **out)
    time.sleep(60)


os.makedirs(nested_dir, exist_ok=True)
os.chmod(nested_dir, 0o755)
with open(secret, "wb") as dst, open(f"{tmp}/secret-src.so", "rb") as src:
    dst.write(src.read())
os.chown(secret, 300000, 300000)
os.chmod(secret, 0o600)
go_r, go_w = os.pipe()
apid, af = child(nested_a, go_r)
line(af)
write_map(apid, "uid_map", f"0 {uid} 1\n1 300000 10\n")
write_map(apid, "gid_map", f"0 {gid} 1\n1 300000 10\n")
os.write(go_w, b"g")
b = line(af)


def user_tries(w, bpid, start, end):
    become(uid, gid)
    try:
        os.readlink(f"/proc/{bpid}/exe")
        kernel = "the kernel lets the user read it"
    except OSError as e:
        kernel = f"the kernel: /proc/{bpid}/exe: {errno.errorcode[e.errno]}"
    h = nsh.Helper(socket_path=sock_path)
    reply, fd = h.request(op="open", pid=bpid, path=secret, ways=["map_files"], start=start,
                          end=end)
    sha = nsh.sha256_fd(fd) if fd is not None else None
    if fd is not None:
        os.close(fd)
    say(w, reply=reply, sha=sha, kernel=kernel)


pid, f = child(user_tries, b["pid"], b["start"], b["end"])
out = line(f)
os.waitpid(pid, 0)
reply = out["reply"] or {}
served = out["sha"] == nsh.sha256(secret)
good = not served and not reply.get("ok")
record(good, "map_files of a process in the user's user namespace nested in root's (uid 300000)",
       "SERVED a file of uid 300000" if served else "refused",
       f"{out['kernel']}; errno {reply.get('errno')}: {reply.get('message')}")
os.kill(apid, 9)
os.waitpid(apid, 0)
try:
    os.kill(b["pid"], 9)
except ProcessLookupError:
    pass

# 4. The user's own uid, but capabilities the user lacks (a service's
#    AmbientCapabilities=): the kernel's ptrace rule wants the target's
#    capabilities to be a subset of the caller's.
rootonly = f"{tmp}/rootonly"
os.makedirs(rootonly, exist_ok=True)
os.chmod(rootonly, 0o700)
capsecret = f"{rootonly}/secret.so"
with open(capsecret, "wb") as dst, open(f"{tmp}/secret-src.so", "rb") as src:
    dst.write(src.read())
os.chmod(capsecret, 0o600)
capped = subprocess.Popen(
    ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
     "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", sys.executable, "-c",
     "import mmap, sys, time\n"
     "f = open(sys.argv[1], 'rb')\n"
     "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
     "print(open('/proc/self/maps').read(), flush=True)\n"
     "time.sleep(60)\n", capsecret], stdout=subprocess.PIPE, text=True)
rng = None
for ln in capped.stdout:
    parts = ln.split()
    if len(parts) >= 6 and parts[5] == capsecret:
        a, b2 = parts[0].split("-")
        rng = (hex(int(a, 16)), hex(int(b2, 16)))
        break
cap_status = [ln for ln in open(f"/proc/{capped.pid}/status").read().splitlines()
              if ln.startswith(("Uid:", "CapPrm:"))]
pid, f = child(user_tries, capped.pid, rng[0], rng[1])
out = line(f)
os.waitpid(pid, 0)
reply = out["reply"] or {}
served = out["sha"] == nsh.sha256(capsecret)
good = not served and not reply.get("ok")
record(good, "map_files of the user's uid with CAP_DAC_READ_SEARCH (ambient) mapping a root-only "
       "file", "SERVED the root-only file" if served else "refused",
       f"{' '.join(cap_status)}; {out['kernel']}; errno {reply.get('errno')}: "
       f"{reply.get('message')}")
capped.kill()
capped.wait()

# 5. A parser taken over (the test build's "raw-op:N", parser.c): the
#    opener gets malformed binary ops on one connection, refuses each and
#    lives on to serve the user's own process.
def raw_ops(w):
    become(uid, gid)
    own = subprocess.Popen(["sleep", "60"])
    # Past its exec (a bounded poll, not a guess of 0.3 s): the open below
    # names its program.
    end = time.monotonic() + 60
    while time.monotonic() < end and not any(
            ln.rstrip().endswith("/sleep") for ln in open(f"/proc/{own.pid}/maps")):
        time.sleep(0.05)
    h = nsh.Helper(socket_path=sock_path)
    answers = {}
    for n in range(23):
        reply, fd = h.request(op="debug-syscall", syscall=f"raw-op:{n}")
        if fd is not None:
            os.close(fd)
        answers[n] = (reply or {}).get("message")
    reply, fd = h.request(op="open", pid=own.pid, path="/usr/bin/sleep", ways=["openat2"])
    if fd is not None:
        os.close(fd)
    own.kill()
    own.wait()
    say(w, answers=answers, after=reply)


pid, f = child(raw_ops)
out = line(f)
os.waitpid(pid, 0)
answers = {int(k): v for k, v in out["answers"].items()}
bad = []
for n, msg in sorted(answers.items()):
    want = ("errno 1, 0 fds: uid" if n == 0
            else "errno 1, 0 fds: uid" if n == 22
            else "errno 22, 0 fds: a malformed operation")
    if not (msg or "").startswith(f"raw-op:{n}: {want}"):
        bad.append(f"{n}: {msg}")
good = not bad and (out["after"] or {}).get("ok")
record(good, "22 malformed binary ops from a parser taken over (magic, length, op, unterminated "
       "strings, ways, build-id size, ns_fd and fd counts, pid, relative path, debuglink with /, "
       "range, a socket as proof)",
       "each refused, opener alive" if good else "NOT ALL REFUSED",
       "; ".join(bad) if bad else f"0: {answers[0]}; 22: {answers[22]}; then served by "
       f"{(out['after'] or {}).get('way')}")

# 6. Namespace "proof" descriptors of other kinds for root's process (this
#    script): the user's own user and pid namespaces, a pidfd of the target,
#    a regular file; the user's own mount namespace is the control (same
#    namespace as root's process: openat2 with the user's credentials only).
def wrong_proofs(w, target):
    become(uid, gid)
    kinds = {
        "own /proc/self/ns/user": lambda: os.open("/proc/self/ns/user", os.O_RDONLY),
        "own /proc/self/ns/pid": lambda: os.open("/proc/self/ns/pid", os.O_RDONLY),
        "a pidfd of root's process": lambda: os.pidfd_open(target),
        "a regular file": lambda: os.open("/etc/hostname", os.O_RDONLY),
        "own /proc/self/ns/mnt, map_files": lambda: os.open("/proc/self/ns/mnt", os.O_RDONLY),
    }
    out = {}
    for what, opener in kinds.items():
        proof = opener()
        h = nsh.Helper(socket_path=sock_path)
        ways = ["map_files"] if "map_files" in what else ["openat2"]
        path = capsecret if "map_files" in what else "/usr/bin/sleep"
        reply, fd = h.request(fds=[proof], op="open", pid=target, path=path, ways=ways,
                              ns_fd=True, start="0x1000", end="0x2000")
        if fd is not None:
            os.close(fd)
        os.close(proof)
        h.close()
        out[what] = [reply.get("ok"), reply.get("errno"), reply.get("message")]
    say(w, out=out)


pid, f = child(wrong_proofs, os.getpid())
out = line(f)["out"]
os.waitpid(pid, 0)
good = all(not v[0] for v in out.values())
record(good, "ns_fd of another kind (user ns, pid ns, pidfd, a file) or own mount namespace for "
       "map_files, for root's process", "each refused" if good else "ONE SERVED",
       "; ".join(f"{k}: {v[1]} {v[2]}" for k, v in out.items()))

# 7. A wrong start_time for root's process: the answer must not tell the
#    real one (under hidepid= the user may not read /proc/PID/stat).
def wrong_start(w, target):
    become(uid, gid)
    h = nsh.Helper(socket_path=sock_path)
    reply, fd = h.request(op="open", pid=target, path="/usr/bin/sleep", start_time=1)
    if fd is not None:
        os.close(fd)
    say(w, reply=reply)


real_start = str(nsh.start_time(os.getpid()))
pid, f = child(wrong_start, os.getpid())
reply = line(f)["reply"] or {}
os.waitpid(pid, 0)
told = real_start in (reply.get("message") or "")
record(not told and not reply.get("ok"), "a wrong start_time for root's process",
       "TELLS the real start time" if told else "refused, start time not told",
       f"real {real_start}; errno {reply.get('errno')}: {reply.get('message')}")

tap.note("")
tap.note("attack | result | evidence")
for attack, result, evidence in rows:
    tap.note(f"{attack} | {result} | {evidence}")
tap.done()
