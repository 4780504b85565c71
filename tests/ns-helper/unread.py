"""A user who never reads the helper's replies must not stop root's service
(review of the direct reply): a descriptor waiting in a client's queue counts,
for the kernel, against the user that sent it, nobody for every connection;
past RLIMIT_NOFILE of them every sendmsg with a descriptor fails, root's too.
The user's 8 connections each ask N times for its own program and read
nothing (each reply is waited for by the queue's size, SIOCINQ, so the count
does not depend on timing); then root asks for its own, and last the user
reads what it was sent.  Usage: unread.py SOCKET UID GID N"""
import array
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time

import nsh

SIOCINQ = 0x541B
CONNECTIONS = 8
sock_path, uid, gid, n_req = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tap = nsh.Tap()


def queued(s):
    buf = bytearray(4)
    fcntl.ioctl(s, SIOCINQ, buf)
    return struct.unpack("i", buf)[0]


def wait_growth(s, before, deadline):
    while queued(s) <= before:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def attacker(ready_w, go_r, out_w):
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    target = subprocess.Popen(["sleep", "300"])
    conns, result = [], {"sent": 0, "arrived": 0}
    deadline = time.monotonic() + 120
    for c in range(CONNECTIONS):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sock_path)
        conns.append(s)
        for i in range(n_req):
            before = queued(s)
            s.send(json.dumps({"v": 1, "id": i + 1, "op": "open", "pid": target.pid,
                               "path": "/usr/bin/sleep"}).encode())
            result["sent"] += 1
            if not wait_growth(s, before, deadline):
                break
            result["arrived"] += 1
    os.write(ready_w, b"r")
    os.read(go_r, 1)
    per_conn = []
    for s in conns:
        s.setblocking(False)
        fds_got, busy, replies = 0, 0, 0
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(s, 65536, 4)
            except BlockingIOError:
                break
            if not msg:
                break
            replies += 1
            fds_got += len(fds)
            for f in fds:
                os.close(f)
            if json.loads(msg).get("error") == "EBUSY" or "unread" in json.loads(msg).get("message", ""):
                busy += 1
        per_conn.append((replies, fds_got, busy))
    result["per_conn"] = per_conn
    target.kill()
    os.write(out_w, json.dumps(result).encode())


ready_r, ready_w = os.pipe()
go_r, go_w = os.pipe()
out_r, out_w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        attacker(ready_w, go_r, out_w)
    finally:
        os._exit(0)
os.close(ready_w)
os.close(go_r)
os.close(out_w)
os.read(ready_r, 1)
# Root's own request while the user's replies lie unread.
root_target = subprocess.Popen(["sleep", "300"])
h = nsh.Helper(socket_path=sock_path)
reply, fd = h.open(root_target.pid, "/usr/bin/sleep")
tap.ok(reply is not None and reply.get("ok") and fd is not None,
       f"root's request while a user's 8 connections leave {n_req} replies each unread: "
       f"{'a descriptor' if fd is not None else 'no descriptor'}", json.dumps(reply))
if fd is not None:
    os.close(fd)
h.close()
root_target.kill()
os.write(go_w, b"g")
data = b""
while True:
    chunk = os.read(out_r, 65536)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
res = json.loads(data)
tap.ok(res["arrived"] == res["sent"] == CONNECTIONS * n_req,
       f"every request of the user was answered ({res['arrived']} of {res['sent']})", data.decode())
most = max(p[1] for p in res["per_conn"])
tap.ok(most <= 8 and all(p[0] == n_req and p[1] + p[2] == n_req for p in res["per_conn"]),
       f"a connection that reads nothing gets at most {most} descriptors, then EBUSY "
       f"(replies, descriptors, EBUSY per connection: {res['per_conn']})", data.decode())
tap.done()
