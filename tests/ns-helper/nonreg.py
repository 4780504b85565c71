"""No way serves what is not a regular file, and nothing writable
(0903506 removed the opener's fcntl F_GETFL of what the resolver and the
workers send).  (tests/ns-helper/nonreg.sh runs this as root.)

usage: nonreg.py HELPER PID
"""
import fcntl
import os
import stat
import sys

import nsh

helper, pid = sys.argv[1], int(sys.argv[2])
tap = nsh.Tap()
h = nsh.Helper(path=helper)
for path in ("/app/lib/fifo.so", "/app/lib/sock.so", "/app/lib/null.so", "/app/lib/dir.so",
             "/app/lib/up.so"):
    for way in ("openat2", "setns"):
        reply, fd = h.open(pid, path, ways=[way])
        tap.ok(fd is None, f"{way} {path}: " + ("SERVED" if fd is not None else "refused"),
               reply)
        if fd is not None:
            os.close(fd)
reply, fd = h.open(pid, "/app/lib/libnswork.so", ways=["openat2"])
ok = fd is not None
for way in ("openat2", "setns"):
    reply, fd = h.open(pid, "/app/lib/libnswork.so", ways=[way])
    if fd is None:
        tap.ok(False, f"{way}: the library", reply)
        continue
    fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    st = os.fstat(fd)
    tap.ok((fl & os.O_ACCMODE) == os.O_RDONLY and not fl & getattr(os, "O_PATH", 0o10000000)
           and stat.S_ISREG(st.st_mode), f"{way}: the library read-only, regular (flags {fl:#o})")
    os.close(fd)
h.close()
tap.done()
