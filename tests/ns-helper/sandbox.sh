#!/bin/sh
# The helper's sandbox, as the kernel reports it.  Started as root, it is
# four processes (src/ns-helper/sandbox.h): the parser, the only one that
# reads the client, runs as nobody with no capability at all; the opener
# (pins, map_files) as nobody with CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH and
# CAP_CHECKPOINT_RESTORE; the resolver (openat2) and the setns broker with
# what they need for the client: for root, CAP_DAC_READ_SEARCH (and
# CAP_SYS_ADMIN, CAP_SYS_CHROOT for setns); for a user, through the
# service, the resolver is that user with no capability, and the broker
# keeps CAP_SETUID and CAP_SETGID to make each worker that user.  All with
# no_new_privs, a seccomp filter, no core dumps, bounded memory and
# descriptors.  The test build of the helper has a debug request that
# makes a forbidden system call in a given process: each dies of SIGSYS,
# and an attempt to write a file fails in every process, killed by seccomp
# or refused by Landlock (EACCES), with nothing created.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
start_ns root sandbox "" sleep 60 || exit 1
test_helper=$nsh_build/eu-stacktrace-ns-helper-test

mkdir "$tmp/sock"
sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$test_helper" --slots-dir="$tmp/slots" || tap_bail "the helper's service did not start"

"$PYTHON3" - "$pid" "$helper" "$test_helper" "$sock" "$activate" "$test_uid" "$test_gid" \
  > "$tmp/sandbox.tap" <<'PY'
import json, os, signal, subprocess, sys, time
import nsh
pid, helper, test_helper, sock_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
activate, uid, gid = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
tap = nsh.Tap()
marker = "/tmp/eu-stacktrace-ns-helper-must-not-exist"

def decode(hexcaps):
    out = subprocess.run(["capsh", f"--decode={hexcaps}"], capture_output=True, text=True)
    caps = out.stdout.strip().split("=", 1)[-1]
    return set(caps.split(",")) if caps != "0x0000000000000000" and caps else set()

def children(top):
    with open(f"/proc/{top}/task/{top}/children") as f:
        kids = [int(c) for c in f.read().split()]
    return {nsh.status_field(k, "Name"): k for k in kids}

def check(name, proc, want_caps, want_uid, client):
    eff = nsh.status_field(proc, "CapEff")
    caps = decode(eff)
    tap.note(f"{client}: {name} (pid {proc}): CapEff {eff} = {','.join(sorted(caps)) or 'none'}; "
             f"CapPrm {nsh.status_field(proc, 'CapPrm')}, CapBnd {nsh.status_field(proc, 'CapBnd')}, "
             f"Uid {nsh.status_field(proc, 'Uid')}")
    tap.ok(caps == want_caps and decode(nsh.status_field(proc, "CapPrm")) == want_caps,
           f"{client}: {name}: CapEff {eff}"
           f"{' = ' + ','.join(sorted(want_caps)) if want_caps else ', no capability'}",
           f"got {caps}")
    bnd = decode(nsh.status_field(proc, "CapBnd"))
    tap.ok(bnd <= want_caps | {"cap_setuid", "cap_setgid"}
           and nsh.status_field(proc, "CapAmb") == "0000000000000000"
           and nsh.status_field(proc, "CapInh") == "0000000000000000",
           f"{client}: {name}: nothing more in its bounding set, nothing inheritable or ambient",
           bnd)
    uids = nsh.status_field(proc, "Uid").split()
    tap.ok(set(uids) == {str(want_uid)}, f"{client}: {name}: runs as uid {want_uid} (Uid {' '.join(uids)})")
    tap.ok(nsh.status_field(proc, "NoNewPrivs") == "1" and nsh.status_field(proc, "Seccomp") == "2",
           f"{client}: {name}: no_new_privs and a seccomp filter")

# Root's helper, spawned.
h = nsh.Helper(helper)
reply, fd = h.open(pid, "/app/bin/nsprog")   # answered: the sandbox is in place
if fd is not None:
    os.close(fd)
kids = children(h.pid)
opener_caps = {"cap_dac_read_search", "cap_sys_ptrace", "cap_checkpoint_restore"}
for name, proc, want in (("parser", kids["nsh-parser"], set()),
                         ("opener", h.pid, opener_caps),
                         ("resolver", kids["nsh-resolver"], {"cap_dac_read_search"}),
                         ("setns broker", kids["nsh-broker"],
                          {"cap_dac_read_search", "cap_sys_chroot", "cap_sys_admin"})):
    check(name, proc, want, 65534, "root's helper")
limits = {}
with open(f"/proc/{h.pid}/limits") as f:
    for line in f:
        for key in ("Max core file size", "Max open files", "Max address space",
                    "Max locked memory"):
            if line.startswith(key):
                limits[key] = line[len(key):].split()[0]
tap.ok(limits == {"Max core file size": "0", "Max open files": "1024",
                  "Max address space": str(256 << 20), "Max locked memory": "0"},
       f"limits: no core dumps, 1024 descriptors, 256 MiB of address space: {limits}")
reply, fd = h.request(op="debug-syscall", syscall="execve")
tap.ok(not reply.get("ok") and reply.get("errno") == 95 and h.proc.poll() is None,
       f"the installed build has no debug request: {reply.get('message')}", reply)
h.close()

# A user's connection to the privileged service (the test build): the
# resolver and each worker are that user.
r_fd, w_fd = os.pipe()
child = os.fork()
if child == 0:
    os.close(r_fd)
    os.setgroups([]); os.setresgid(gid, gid, gid); os.setresuid(uid, uid, uid)
    u = nsh.Helper(socket_path=sock_path)
    u.request(op="open", pid=os.getpid(), path="/usr/bin/python3")
    os.write(w_fd, b"connected\n")
    results = []
    for where in ("resolver", "worker"):
        reply, fd = u.request(op="debug-syscall", syscall="openat2-write", **{"in": where})
        results.append(reply.get("message"))
    os.write(w_fd, (json.dumps(results) + "\n").encode())
    time.sleep(5)   # until the parent has looked
    os._exit(0)
os.close(w_fd)
reader = os.fdopen(r_fd)
reader.readline()
writes = json.loads(reader.readline())
top = [int(c) for c in open(f"/proc/{activate}/task/{activate}/children").read().split()][-1]
kids = children(top)
check("parser", kids["nsh-parser"], set(), 65534, f"uid {uid}'s connection")
check("resolver", kids["nsh-resolver"], set(), uid, f"uid {uid}'s connection")
check("setns broker", kids["nsh-broker"],
      {"cap_sys_chroot", "cap_sys_admin", "cap_setuid", "cap_setgid"}, 65534,
      f"uid {uid}'s connection")
for where, message in zip(("resolver", "worker"), writes):
    tap.ok("EACCES" in (message or "") and not os.path.exists(marker),
           f"uid {uid}'s connection: openat2 O_WRONLY|O_CREAT in /tmp (world-writable) as the "
           f"user, in the {where}: {message}")
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)

# A forbidden system call in each process: it dies of SIGSYS (seccomp), or
# for a write that seccomp cannot see (openat2), fails with EACCES
# (Landlock).  Nothing is created.
def attempt(name, where):
    t = nsh.Helper(test_helper, env={})
    t.proc_stderr = None
    reply, fd = t.request(op="open", pid=pid, path="/app/bin/nsprog")
    if fd is not None:
        os.close(fd)
    try:
        reply, fd = t.request(op="debug-syscall", syscall=name, **{"in": where})
    except OSError:
        reply, fd = None, None
    t.sock.close()
    status = t.proc.wait(timeout=10)
    if reply is not None:
        return reply.get("message"), status, reply
    if status < 0:
        return f"{where}: {name}: killed by {signal.Signals(-status).name}", status, None
    if status > 128:
        return f"{where}: {name}: killed by {signal.Signals(status - 128).name}", status, None
    return f"{where}: {name}: exit {status}", status, None

for name in ("execve", "ptrace", "socket", "mount", "setns", "kill", "write-stdout",
             "mmap-exec"):
    msg, status, reply = attempt(name, "parser")
    tap.ok(reply is None and status == 128 + signal.SIGSYS and not os.path.exists(marker),
           f"a forbidden {name} in the parser: {msg}, no reply", reply)
# The opener keeps the client's socket to send its replies on, and may
# never read it.
# Every way: by its number, under another number (fcntl F_DUPFD), and by
# the number with bits above the 32 the kernel uses (seccomp sees 64).
for name, how in (("read-client", "by its number"),
                  ("read-client-dup", "under another number (F_DUPFD)"),
                  ("read-client-hi", "as 0x100000003")):
    msg, status, reply = attempt(name, "opener")
    tap.ok(reply is None and "SIGSYS" in msg,
           f"the opener reads the client's socket {how}: {msg}, no reply", reply)
for where in ("parser", "opener", "resolver", "broker", "worker"):
    for name in ("open-write", "openat2-write"):
        msg, status, reply = attempt(name, where)
        good = (("SIGSYS" in msg or "EACCES" in msg) and not os.path.exists(marker)
                and "let it through" not in msg)
        tap.ok(good, f"write attempt: {msg}", reply)
tap.done()
PY
tap_relay < "$tmp/sandbox.tap"
plan_and_done
