"""Requests that must fail (tests/ns-helper/attacks.sh runs this, root).

usage: attacks.py EVIL-PID HELPER STAGE HOST-ELF UID GID NS-RUN TMP HOST-PID
"""
import errno
import os
import signal
import subprocess
import sys
import time

import nsh

evil, helper, stage, host_elf = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
uid, gid, ns_run, tmp = int(sys.argv[5]), int(sys.argv[6]), sys.argv[7], sys.argv[8]
host_pid = int(sys.argv[9])   # a process whose root is the host's
tap = nsh.Tap()
h = nsh.Helper(helper)

host_shadow = nsh.sha256("/etc/shadow")
host_elf_sum = nsh.sha256(host_elf)


def never_host(reply, fd):
    """The reply carries no host file: no descriptor, or one of neither."""
    if fd is None:
        return True
    s = nsh.sha256_fd(fd)
    os.close(fd)
    return s not in (host_shadow, host_elf_sum)


def must_fail(path, want_errno, desc, openat2_errno=None, **extra):
    for ways in (["openat2"], ["setns"], None):
        fields = dict(extra)
        if ways:
            fields["ways"] = ways
        t0 = time.monotonic()
        reply, fd = h.open(evil, path, **fields)
        took = time.monotonic() - t0
        good = (not reply.get("ok") and fd is None and reply.get("errno") in want_errno
                and took < 5)
        if ways == ["openat2"] and openat2_errno is not None:
            good = good and reply.get("errno") == openat2_errno
        tap.ok(good and never_host(reply, fd),
               f"{desc}: {path} by {'+'.join(ways) if ways else 'every way'}: "
               f"{errno.errorcode.get(reply.get('errno'), reply.get('errno'))}"
               + (f" ({reply.get('message')})" if ways is None else ""),
               f"{reply} in {took:.2f} s")


ENOENT, ELOOP, EINVAL, ENOEXEC, ESTALE, EXDEV = (errno.ENOENT, errno.ELOOP, errno.EINVAL,
                                                   errno.ENOEXEC, errno.ESTALE, errno.EXDEV)
# Symlinks to host files stay in the container's root, where these are not.
must_fail("/usr/lib/libshadow.so", {ENOENT}, "absolute symlink to /etc/shadow")
must_fail("/usr/lib/libhost.so", {ENOENT}, "absolute symlink to a host ELF file")
# `..' stops at the container's root.
must_fail("/app/lib/libdotdot.so", {ENOENT}, "relative symlink climbing out to /etc/shadow")
must_fail("/app/lib/libdotdot-elf.so", {ENOENT}, "relative symlink climbing out to a host ELF")
must_fail("/../../../../../../etc/shadow", {ENOENT}, "`..' in the path")
must_fail("/app/../../../.." + host_elf, {ENOENT}, "`..' in the path to a host ELF")
must_fail("/../../../etc/hosts", {ENOEXEC}, "`..' in the path: the container's own file, not ELF")
# /proc of the host's pid namespace, mounted in the container: its magic
# links lead to the host's root.  openat2 refuses to follow them
# (RESOLVE_NO_MAGICLINKS: ELOOP); the resolver and the setns worker, which
# have no CAP_SYS_PTRACE and are landlocked, are stopped before, by the
# kernel's ptrace check on another process's /proc/PID/root (EACCES).
# Init's, the kernel refuses even to root (EACCES).
EACCES = errno.EACCES
must_fail("/app/lib/libmagic.so", {ELOOP, EACCES},
          f"symlink through /proc/{host_pid}/root (a magic link)")
must_fail("/app/lib/libmagic-elf.so", {ELOOP, EACCES},
          f"symlink through /proc/{host_pid}/root to a host ELF")
must_fail(f"/proc/{host_pid}/root/etc/shadow", {ELOOP, EACCES},
          f"a path through /proc/{host_pid}/root")
must_fail("/proc/self/root" + host_elf, {ELOOP}, "a path through /proc/self/root")
must_fail("/proc/1/root/etc/shadow", {ELOOP, EACCES}, "a path through /proc/1/root")
# What is no regular ELF file.
must_fail("/app/lib/fifo.so", {EINVAL}, "a FIFO (answered, not blocked on)")
must_fail("/app/lib/null.so", {EINVAL}, "a character device")
must_fail("/app/lib/dir.so", {EINVAL}, "a directory")
must_fail("/app/lib/text.so", {ENOEXEC}, "a file that is not ELF")
# The right file, another build-id.
lib_id = nsh.build_id_of(f"{stage}/root/app/lib/libnswork.so")
start, end = nsh.maps_of(evil, "/app/bin/nsprog")
for ways in (["map_files"], ["openat2"], ["setns"]):
    reply, fd = h.open(evil, "/app/bin/nsprog", start=hex(start), end=hex(end), build_id=lib_id,
                       ways=ways)
    tap.ok(not reply.get("ok") and fd is None and reply.get("errno") == ESTALE
           and f"but {lib_id} was asked for" in reply.get("message", ""),
           f"a wrong build-id by {ways[0]}: refused ({reply.get('message')})", reply)

# Another user's process, asked for by a helper spawned as that user.
u = nsh.Helper(helper, user=uid, group=gid)
reply, fd = u.open(evil, "/app/bin/nsprog")
tap.ok(not reply.get("ok") and fd is None and reply.get("errno") in (errno.EACCES, errno.EPERM),
       f"uid {uid}'s helper asks for root's process: refused ({reply.get('message')})", reply)
reply, fd = u.open(1, "/etc/shadow")
tap.ok(not reply.get("ok") and fd is None,
       f"uid {uid}'s helper asks for init's /etc/shadow: refused ({reply.get('message')})", reply)
u.close()


# A pid that another process takes over.
def start_in_root(name, setup, pid=None):
    """Starts nsprog sleeping in a root of its own; with PID, as that pid
    (the kernel's next pid set through ns_last_pid; retried)."""
    argv = ["sh", ns_run, "root", f"{tmp}/{name}", stage, setup, "--", "/app/bin/nsprog",
            "sleep", "60"]
    for _attempt in range(200):
        if pid is not None:
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(pid - 1))
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        if pid is None or p.pid == pid:
            for _ in range(1200):   # a minute: a loaded machine takes more than 5 s
                try:
                    if nsh.maps_of(p.pid, "/app/lib/libnswork.so"):
                        return p
                except OSError:
                    pass
                time.sleep(0.05)
            raise RuntimeError(f"{name} did not start")
        p.kill()
        p.wait()
    return None


a = start_in_root("reuse-a", "")
x = a.pid
a_time, a_sum = nsh.start_time(x), nsh.sha256(f"{stage}/root/app/bin/nsprog")
b_sum = nsh.sha256(f"{stage}/nsprog.stripped")
reply, fd = h.open(x, "/app/bin/nsprog", start_time=a_time)
tap.ok(reply.get("ok") and fd is not None and nsh.sha256_fd(fd) == a_sum,
       f"process A (pid {x}) asked for by its start time: its file ({reply.get('way')})", reply)
if fd is not None:
    os.close(fd)
a.kill()
a.wait()
b = start_in_root("reuse-b", f"{tmp}/other.setup", pid=x)
tap.ok(b is not None and b.pid == x, f"A exited and process B took pid {x}")
if b is not None:
    b_time = nsh.start_time(x)
    tap.note(f"A started at {a_time}, B at {b_time}")
    for desc, fields in (("by A's start time", {"start_time": a_time}),
                         ("without a start time", {})):
        reply, fd = h.open(x, "/app/bin/nsprog", **fields)
        got = nsh.sha256_fd(fd) if fd is not None else None
        if fd is not None:
            os.close(fd)
        tap.ok(got != b_sum and (got == a_sum or not reply.get("ok")),
               f"pid {x} {desc}, after reuse, on the connection that pinned A: A's file from "
               f"its pinned namespace ({reply.get('way') or reply.get('message')}), never B's",
               reply)
    fresh = nsh.Helper(helper)
    reply, fd = fresh.open(x, "/app/bin/nsprog", start_time=a_time)
    tap.ok(not reply.get("ok") and fd is None and reply.get("errno") == errno.ESRCH
           and "reused" in reply.get("message", ""),
           f"a new connection asks for A by pid {x} and A's start time: refused "
           f"({reply.get('message')})", reply)
    reply, fd = fresh.open(x, "/app/bin/nsprog", start_time=b_time)
    got = nsh.sha256_fd(fd) if fd is not None else None
    if fd is not None:
        os.close(fd)
    tap.ok(reply.get("ok") and got == b_sum,
           f"... and for B by B's start time: B's file ({reply.get('way')})", reply)
    fresh.close()
    b.kill()
    b.wait()

fds_before = nsh.fd_count(h.pid)
h.close()
tap.ok(h.proc.returncode == 0, f"the helper served all of it and exited normally "
       f"(status {h.proc.returncode}, {fds_before} descriptors at the end)")
tap.done()
