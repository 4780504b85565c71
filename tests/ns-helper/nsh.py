"""A test client of eu-stacktrace-ns-helper's protocol (src/ns-helper/protocol.h),
and what the tests of tests/ns-helper/ share: TAP output, the ELF build-id of
a descriptor, descriptor counts.  Written independently of the C client in
src/core/resolve/ns-client.c, so that the two check each other."""
import array
import hashlib
import json
import os
import socket
import struct
import subprocess
import sys

MAX_MESSAGE = 8192


class Tap:
    """TAP lines, numbered as they come; the plan is printed at the end."""

    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=None):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {desc}", flush=True)
        if not cond:
            self.failed += 1
            if diag:
                for line in str(diag).splitlines():
                    print(f"#   {line}", flush=True)
        return cond

    def note(self, text):
        for line in str(text).splitlines():
            print(f"# {line}", flush=True)

    def done(self):
        print(f"1..{self.n}", flush=True)
        sys.exit(0)


def build_id_of_fd(fd):
    """The GNU build-id of the ELF file open on FD (hex), or None."""
    data = os.pread(fd, 64, 0)
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        ph = os.pread(fd, 56, phoff + i * phentsize)
        p_type, = struct.unpack_from("<I", ph, 0)
        if p_type != 4:   # PT_NOTE
            continue
        offset, = struct.unpack_from("<Q", ph, 8)
        filesz, = struct.unpack_from("<Q", ph, 32)
        align, = struct.unpack_from("<Q", ph, 48)
        notes = os.pread(fd, filesz, offset)
        a = 8 if align == 8 else 4
        pos = 0
        while pos + 12 <= len(notes):
            namesz, descsz, ntype = struct.unpack_from("<III", notes, pos)
            pos += 12
            name = notes[pos:pos + namesz]
            pos += (namesz + a - 1) & ~(a - 1)
            desc = notes[pos:pos + descsz]
            pos += (descsz + a - 1) & ~(a - 1)
            if ntype == 3 and name == b"GNU\0":
                return desc.hex()
    return None


def build_id_of(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return build_id_of_fd(fd)
    finally:
        os.close(fd)


def sha256_fd(fd):
    h = hashlib.sha256()
    off = 0
    while True:
        chunk = os.pread(fd, 1 << 20, off)
        if not chunk:
            return h.hexdigest()
        h.update(chunk)
        off += len(chunk)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def status_field(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    return None


def start_time(pid):
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2:].split()[19])


def kids(pid):
    """The children of PID's main thread; [] once PID has exited."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return []


def maps_of(pid, path):
    """(start, end) of the executable mapping of PATH in process PID."""
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path and "x" in parts[1]:
                a, b = parts[0].split("-")
                return int(a, 16), int(b, 16)
    return None


class Helper:
    """One connection to a helper: spawned over a socketpair (as the
    current user, or USER), or connected to a socket."""

    def __init__(self, path=None, socket_path=None, user=None, group=None, env=None):
        self.proc = None
        if socket_path is not None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.sock.connect(socket_path)
        else:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            self.sock = ours
            self.proc = subprocess.Popen(
                [path, f"--fd={theirs.fileno()}"], pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL, user=user, group=group,
                extra_groups=[] if user is not None else None, env=env or {})
            theirs.close()
        self.sock.settimeout(20)
        self.next_id = 1

    @property
    def pid(self):
        return self.proc.pid

    def broker_pid(self):
        with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
            children = f.read().split()
        return int(children[0]) if children else None

    def raw(self, data, fds=()):
        """Sends DATA (bytes) with FDS; returns (reply dict or None, fd or None)."""
        if fds:
            self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                        array.array("i", fds))])
        else:
            self.sock.sendmsg([data])
        return self.receive()

    def receive(self):
        msg, fds, _flags, _addr = socket.recv_fds(self.sock, MAX_MESSAGE + 1, 4)
        if not msg and not fds:
            return None, None
        reply = json.loads(msg)
        for extra in fds[1:]:
            os.close(extra)
        return reply, (fds[0] if fds else None)

    def request(self, fds=(), **fields):
        req = {"v": 1, "id": self.next_id}
        self.next_id += 1
        req.update(fields)
        return self.raw(json.dumps(req).encode(), fds)

    def open(self, pid, path, **fields):
        return self.request(op="open", pid=pid, path=path, **fields)

    def close(self):
        self.sock.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
