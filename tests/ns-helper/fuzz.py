"""10,000 malformed requests, made by mutating valid ones the way a fuzzer
would (bytes flipped, inserted, cut; fields of the wrong type or range;
unknown keys; deep nesting; oversized, empty and binary messages; stray
descriptors), sent to one helper: each gets an error reply, the helper
carries on (a valid request between them is still served), and neither
side holds a descriptor more at the end.  The seed is printed; FUZZ_SEED
replays a run.  (tests/ns-helper/fuzz.sh runs this, root.)

usage: fuzz.py PID HELPER [N]
"""
import json
import os
import random
import socket
import sys

import nsh

pid, helper = int(sys.argv[1]), sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
seed = int(os.environ.get("FUZZ_SEED", random.SystemRandom().randrange(1 << 32)))
rng = random.Random(seed)
tap = nsh.Tap()
tap.note(f"seed {seed} (FUZZ_SEED={seed} replays it)")

start, end = nsh.maps_of(pid, "/app/bin/nsprog")
valid = {"v": 1, "id": 1, "op": "open", "pid": pid, "path": "/app/bin/nsprog",
         "start": hex(start), "end": hex(end),
         "build_id": nsh.build_id_of(f"/proc/{pid}/root/app/bin/nsprog")}
valid_debuginfo = {"v": 1, "id": 1, "op": "debuginfo", "pid": pid, "path": "/app/bin/nsprog",
                   "build_id": valid["build_id"], "debuglink": "nsprog.debug"}

ODD_VALUES = [None, True, False, 0, -1, 1, 2**31, 2**63 - 1, -2**63, 2**64, 1e308, -0.5, "",
              "x", "0x", "0xg", "0x" + "f" * 17, "/", "relative/path", "a\u0000b", "\u00ff" * 3,
              "/" + "a" * 5000, [], [1, 2], {}, {"a": {"b": 1}}, "\ud800", "..", "open"]
KEYS = list(valid.keys()) + ["ways", "ns_fd", "start_time", "debuglink", "syscall", "ino"]


def mutate_fields(req):
    req = dict(req)
    for _ in range(rng.randint(0, 3)):
        what = rng.random()
        if what < 0.3 and req:
            req.pop(rng.choice(list(req.keys())))
        elif what < 0.75:
            req[rng.choice(KEYS)] = rng.choice(ODD_VALUES)
        elif what < 0.85:
            req["k" * rng.randint(1, 300)] = rng.choice(ODD_VALUES)
        elif what < 0.92:
            req["ways"] = rng.choice([[], ["warp"], ["setns", "setns"], ["map_files"] * 5, "setns",
                                      [1], [None]])
        else:
            req["v"] = rng.choice([0, 2, "1", 1.0, -1, 99999999999])
    # Then one thing surely wrong: a key no request has.
    req["k" * rng.randint(1, 300)] = rng.choice(ODD_VALUES)
    return req


def raw_message(i):
    """A malformed message (bytes) and the descriptors to send with it."""
    base = json.dumps(rng.choice([valid, valid_debuginfo]) | {"id": i}).encode()
    kind = rng.randrange(12)
    fds = []
    if kind == 0:
        data = bytearray(base)
        # One byte of the JSON syntax broken, surely; then any bytes.
        syntax = [k for k, c in enumerate(data) if c in b'{}":,']
        data[rng.choice(syntax)] = rng.choice(b"'x#\x00\xff;=")
        for _ in range(rng.randint(0, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), fds
    if kind == 1:
        return base[:rng.randrange(len(base))], fds
    if kind == 2:
        # Bytes before or after the object, the first of them no blank.
        junk = bytes([rng.choice(b"x{[\x01\x80")]) \
            + bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
        return junk + base if rng.random() < 0.5 else base + junk, fds
    if kind == 3:
        return json.dumps(mutate_fields(valid | {"id": i})).encode("utf-8", "surrogatepass"), fds
    if kind == 4:
        return json.dumps(mutate_fields(valid_debuginfo | {"id": i})).encode(
            "utf-8", "surrogatepass"), fds
    if kind == 5:
        depth = rng.randint(2, 2000)
        return ('{"v":1,"op":"open","pid":1,"path":"/","ways":' + "[" * depth + "]" * depth
                + "}").encode(), fds
    if kind == 6:
        return rng.choice([b"", b" ", b"null", b"[]", b"42", b'"open"', b"{}", b"{", b"}",
                           b'{"v":1}', b'{"v":1,"op":"open"}', b"\x00" * 10]), fds
    if kind == 7:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 9000))), fds
    if kind == 8:
        return base + b" " * rng.randint(8200, 9000), fds   # longer than any request
    if kind == 9:
        # A descriptor nobody asked for ("ns_fd" not said), or more than one.
        r, w = os.pipe()
        fds = rng.choice([[r], [r, w], [r, w, r, w, r]])
        return json.dumps(valid | {"id": i}).encode(), fds + [-r - 1, -w - 1]
    if kind == 10:
        return json.dumps(valid | {"id": i, "ns_fd": True}).encode(), fds
    # Paths that name nothing valid (no address range: map_files, which
    # goes by address, does not apply).
    msg = {k: v for k, v in valid.items() if k not in ("start", "end")}
    return json.dumps(msg | {"id": i, "path": rng.choice(
        ["/app/bin/nsprog/../../../etc/shadow/" * 100, "/" * 4097, "/app/\x01\x02",
         "/app/bin/nsprog/", "/app/bin/nsprog\u0000.so", "app/bin/nsprog"])}).encode(), fds


h = nsh.Helper(helper)
reply, fd = h.request(**{k: v for k, v in valid.items() if k not in ("v", "id")})
if fd is not None:
    os.close(fd)
reply, fd = h.request(op="open", pid=pid, path="/nonexistent")   # settles the one before
helper_before, client_before = nsh.fd_count(h.pid), nsh.fd_count(os.getpid())
tap.note(f"descriptors before: helper {helper_before}, this client {client_before}")

answered = errors = served_after = 0
served_wrong = []
unanswered = []
for i in range(1, n + 1):
    data, extra = raw_message(i)
    send_fds = [f for f in extra if f >= 0]
    to_close = sorted({-f - 1 for f in extra if f < 0})
    try:
        if send_fds:
            h.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, bytes(
                __import__("array").array("i", send_fds)))])
        else:
            h.sock.send(data)
        reply, fd = h.receive()
    except (OSError, ValueError) as e:
        unanswered.append((i, data[:80], repr(e)))
        break
    finally:
        for f in to_close:
            os.close(f)
    if reply is None:
        unanswered.append((i, data[:80], "the helper hung up"))
        break
    answered += 1
    if fd is not None:
        # A mutation that left a well-formed request (an optional field
        # dropped, a path byte changed into another existing file's): it
        # must have been served the file it names, nothing else.
        if nsh.build_id_of_fd(fd) != valid["build_id"]:
            served_wrong.append((i, data[:120]))
        os.close(fd)
    if not reply.get("ok"):
        errors += 1
    if i % 1000 == 0:
        r, fd = h.request(**{k: v for k, v in valid.items() if k not in ("v", "id")})
        if r.get("ok") and fd is not None:
            served_after += 1
        if fd is not None:
            os.close(fd)

tap.ok(answered == n, f"{n} malformed requests: {answered} answered",
       "\n".join(map(str, unanswered)))
tap.ok(errors == answered and not served_wrong,
       f"each with an error reply, and no descriptor ({errors} of {answered})",
       "\n".join(map(str, served_wrong[:5])))
tap.ok(served_after == n // 1000, f"a valid request after every 1000 of them was served "
       f"({served_after} of {n // 1000})")
reply, fd = h.request(op="open", pid=pid, path="/nonexistent")   # settles
helper_after, client_after = nsh.fd_count(h.pid), nsh.fd_count(os.getpid())
tap.ok(helper_after == helper_before, f"the helper's descriptors: {helper_before} before, "
       f"{helper_after} after (stray ones it was sent are closed)")
tap.ok(client_after == client_before, f"this client's descriptors: {client_before} before, "
       f"{client_after} after")
tap.ok(h.proc.poll() is None, "the helper is still running")
h.close()
tap.ok(h.proc.returncode == 0, f"it exits normally when the client hangs up "
       f"(status {h.proc.returncode})")
tap.done()
