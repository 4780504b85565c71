"""Batches: a client may send several requests before it reads the replies
(src/ns-helper/README, "Batches").  (tests/ns-helper/batch.sh runs this,
root, against a helper spawned over a socketpair.)

1. Batches of 4 with hostile requests in the middle (malformed JSON, a
   FIFO, two descriptors, a pid that does not exist, a path through `..'):
   every request gets one reply with its id, the hostile ones their errors,
   and the valid ones around them their files, by each way.
2. A client that sends 600 requests (a quarter malformed, answered by the
   parser) and never reads: the helper reads all of them (neither the
   parser nor the opener waits on the client), gives a few descriptors (4
   KiB of unread replies), then EBUSY, and drops what does not fit; once
   the client reads, it is served again, and the helper holds no more
   descriptors than before.

usage: batch.py PID HELPER
"""
import array
import fcntl
import json
import os
import socket
import struct
import sys
import time

import nsh

SIOCOUTQ = 0x5411
pid, helper_path = int(sys.argv[1]), sys.argv[2]
tap = nsh.Tap()
start, end = nsh.maps_of(pid, "/app/bin/nsprog")
build_id = nsh.build_id_of(f"/proc/{pid}/root/app/bin/nsprog")
ENOENT, EINVAL, ESRCH, EBUSY = 2, 22, 3, 16
no_pid = next(p for p in range(4194300, 1, -1) if not os.path.exists(f"/proc/{p}"))


def valid(rid, way):
    return {"v": 1, "id": rid, "op": "open", "pid": pid, "path": "/app/bin/nsprog",
            "start": hex(start), "end": hex(end), "build_id": build_id, "ways": [way]}


def send(h, msg, fds=()):
    data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    h.sock.sendmsg([data], anc)


def read_replies(h, n):
    """N replies (in the order they come), as {id: (reply, fd)}; id 0 may
    come more than once, as a list."""
    got, zero = {}, []
    for _ in range(n):
        reply, fd = h.receive()
        if reply is None:
            break
        if reply.get("id", 0) == 0:
            zero.append((reply, fd))
        else:
            got[reply["id"]] = (reply, fd)
    return got, zero


def file_ok(reply_fd, way):
    reply, fd = reply_fd
    ok = (reply.get("ok") is True and fd is not None and reply.get("way") == way
          and nsh.build_id_of_fd(fd) == build_id)
    if fd is not None:
        os.close(fd)
    return ok


def failed(reply_fd, errnos):
    reply, fd = reply_fd
    if fd is not None:
        os.close(fd)
    return reply.get("ok") is False and reply.get("errno") in errnos


h = nsh.Helper(helper_path)
# Warm up: the first requests pin the target and start its setns worker,
# whose descriptors the helper then keeps.
for way in ("map_files", "openat2", "setns"):
    reply, fd = h.request(**{k: v for k, v in valid(0, way).items() if k != "id"})
    if fd is not None:
        os.close(fd)


def settle():
    """A request that fails: once its reply is in, the opener has closed
    what it sent before (it closes a descriptor after its reply)."""
    h.open(pid, "/nonexistent/settle")


settle()
fds_before = nsh.fd_count(h.pid)

# 1. Batches of 4, the hostile ones in the middle.
null = os.open("/dev/null", os.O_RDONLY)
batches = [
    ("map_files", [(b'{"v":1,"id":12,"op":"open","pid":', (), None),
                   ({"v": 1, "id": 11, "op": "open", "pid": pid, "path": "/app/lib/fifo.so",
                     "ways": ["openat2", "setns"]}, (), {EINVAL})]),
    ("openat2", [({"v": 1, "id": 21, "op": "open", "pid": pid, "path": "/app/bin/nsprog",
                   "ns_fd": True}, (null, null), None),
                 ({"v": 1, "id": 22, "op": "open", "pid": no_pid, "path": "/app/bin/nsprog"},
                  (), {ESRCH})]),
    ("setns", [({"v": 1, "id": 31, "op": "open", "pid": pid,
                 "path": "/app/../../../../etc/shadow", "ways": ["openat2", "setns"]}, (),
                {ENOENT, EINVAL}),
               (b"\xff" * 100, (), None)]),
]
for k, (way, hostile) in enumerate(batches):
    base = 10 * (k + 1)
    send(h, valid(base, way))
    for msg, fds, _ in hostile:
        send(h, msg, fds)
    send(h, valid(base + 3, way))
    got, zero = read_replies(h, 4)
    ids = sorted(got)
    # Those the parser could not read an id from are answered with id 0:
    # (errs None) malformed JSON, two descriptors.
    want_zero = sum(1 for msg, _, errs in hostile if errs is None)
    good = (ids == sorted([base, base + 3] + [m["id"] for m, _, e in hostile if e is not None])
            and len(zero) == want_zero)
    tap.ok(good, f"batch of 4 by {way}, hostile requests in the middle: one reply each "
           f"(ids {ids}, {len(zero)} without an id)")
    if not good:
        continue
    tap.ok(file_ok(got[base], way) and file_ok(got[base + 3], way),
           f"batch by {way}: the valid requests before and after got their file")
    for msg, _, errs in hostile:
        if errs is None:
            continue
        r = got[msg["id"]]
        tap.ok(failed(r, errs), f"batch by {way}: request {msg['id']} refused: "
               f"errno {r[0].get('errno')} ({r[0].get('message', '')[:80]})")
    for r, fd in zero:
        if fd is not None:
            os.close(fd)
        tap.ok(r.get("ok") is False and r.get("errno") == EINVAL,
               f"batch by {way}: the malformed message answered EINVAL without an id")
os.close(null)
settle()
tap.ok(nsh.fd_count(h.pid) == fds_before,
       f"after the batches the helper holds {nsh.fd_count(h.pid)} descriptors, as before "
       f"({fds_before})")


# 2. 200 requests, never read.
def outq(s):
    buf = bytearray(4)
    fcntl.ioctl(s, SIOCOUTQ, buf)
    return struct.unpack("i", buf)[0]


N = 600
h.sock.setblocking(False)
sent = 0
for i in range(N):
    # Every fourth malformed: its error reply is the parser's to send.
    msg = valid(1000 + i, "map_files") if i % 4 else b'{"v":1,"id":'
    try:
        send(h, msg)
    except BlockingIOError:
        # Our send buffer is full: the helper has not read yet.  It must
        # read, although we read nothing (the queue to it drains).
        deadline = time.monotonic() + 60
        while outq(h.sock) > 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        try:
            send(h, msg)
        except BlockingIOError:
            break
    sent += 1
deadline = time.monotonic() + 60
while outq(h.sock) > 0 and time.monotonic() < deadline:
    time.sleep(0.001)
tap.ok(sent == N and outq(h.sock) == 0,
       f"a client that never reads: all {sent} of {N} requests (a quarter malformed) were "
       f"read by the helper ({outq(h.sock)} bytes left unread in our queue to it)")
h.sock.setblocking(True)
replies, with_fd, busy, malformed, other = 0, 0, 0, 0, []
# What was queued for us, read until half a second passes without a reply;
# then a marker request, whose reply comes after every reply still on its
# way (the helper answers in order): none is left to be taken for the
# reply of the request below.
MARKER = 999999
h.sock.settimeout(0.5)
marked = False
while True:
    try:
        reply, fd = h.receive()
    except (socket.timeout, BlockingIOError):
        if marked:
            break
        marked = True
        h.sock.settimeout(20)
        send(h, {"v": 1, "id": MARKER, "op": "open", "pid": pid, "path": "/nonexistent/marker"})
        continue
    if reply is None or reply.get("id") == MARKER:
        if fd is not None:
            os.close(fd)
        break
    replies += 1
    if fd is not None:
        with_fd += 1
        os.close(fd)
    elif reply.get("errno") == EBUSY:
        busy += 1
    elif reply.get("id", 0) == 0 and reply.get("errno") == EINVAL:
        malformed += 1
    else:
        other.append(reply)
h.sock.settimeout(20)
# How many replies carry a descriptor before the queue passes the unread
# limit depends on how the parser's error replies and the opener's
# interleave (the parser's may fill it first): only the bound is checked.
tap.ok(replies < N and with_fd <= 16 and busy > 0 and not other,
       f"unread: {replies} replies queued ({with_fd} with a descriptor, {busy} EBUSY, "
       f"{malformed} to malformed requests), the rest dropped, none else")
reply, fd = h.request(**{k: v for k, v in valid(0, "map_files").items() if k != "id"})
settle()
tap.ok(reply is not None and reply.get("ok") is True and fd is not None,
       "once it reads, the same client is served again")
if fd is not None:
    os.close(fd)
tap.ok(nsh.fd_count(h.pid) == fds_before,
       f"the helper holds {nsh.fd_count(h.pid)} descriptors at the end ({fds_before} before)")
h.close()
tap.done()
