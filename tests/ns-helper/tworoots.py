"""The resolver keeps the root of the last pin (0903506): jobs of pins of
two processes in different roots, interleaved on one connection, and on
two connections at once, each get the file of their own root.
(tests/ns-helper/tworoots.sh runs this as root.)

usage: tworoots.py HELPER PID-A PID-B PATH [UID GID]
"""
import hashlib
import os
import sys

import nsh

helper, pa, pb, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tap = nsh.Tap()
want = {p: nsh.sha256(f"/proc/{p}/root{path}") for p in (pa, pb)}
tap.ok(want[pa] != want[pb], "the two roots hold different files at " + path)
h1 = nsh.Helper(path=helper)
h2 = nsh.Helper(path=helper)
order = [pa, pb, pa, pa, pb, pb, pa, pb] * 3
wrong = []
for i, p in enumerate(order):
    for h in (h1, h2) if i % 2 == 0 else (h2, h1):
        reply, fd = h.open(p, path, ways=["openat2"])
        got = nsh.sha256_fd(fd) if fd is not None else None
        if fd is not None:
            os.close(fd)
        if got != want[p]:
            wrong.append((i, p, reply.get("way") if reply else None, got and got[:12],
                          reply and reply.get("message")))
tap.ok(not wrong, f"{2 * len(order)} openat2 requests, pins of 2 roots interleaved on 2 "
       "connections: each its own root's file", repr(wrong[:5]))
h1.close()
h2.close()
tap.done()
