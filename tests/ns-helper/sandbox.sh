#!/bin/sh
# The helper's sandbox, as the kernel reports it: started as root, its main
# process runs as nobody with CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH and
# CAP_CHECKPOINT_RESTORE only, its setns broker with CAP_SYS_ADMIN,
# CAP_SYS_CHROOT and CAP_DAC_READ_SEARCH only; both with no_new_privs, a
# seccomp filter, no core dumps, bounded memory and descriptors.  A system
# call outside the allow-list kills it: the test build of the helper has a
# debug request that makes one (execve, ptrace, socket, mount, ...), and the
# test sees it die of SIGSYS, with nothing done; the installed build has no
# such request.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
start_ns root sandbox "" sleep 60 || exit 1

"$PYTHON3" - "$pid" "$helper" "$nsh_build/eu-stacktrace-ns-helper-test" > "$tmp/sandbox.tap" <<'PY'
import os, signal, subprocess, sys
import nsh
pid, helper, test_helper = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tap = nsh.Tap()

def decode(hexcaps):
    out = subprocess.run(["capsh", f"--decode={hexcaps}"], capture_output=True, text=True)
    return out.stdout.strip().split("=", 1)[-1]

h = nsh.Helper(helper)
reply, fd = h.open(pid, "/app/bin/nsprog")   # answered: the sandbox is in place
if fd is not None:
    os.close(fd)
broker = h.broker_pid()
want = {h.pid: {"cap_dac_read_search", "cap_sys_ptrace", "cap_checkpoint_restore"},
        broker: {"cap_dac_read_search", "cap_sys_chroot", "cap_sys_admin"}}
for proc, name in ((h.pid, "main process"), (broker, "setns broker")):
    eff = nsh.status_field(proc, "CapEff")
    caps = set(decode(eff).split(","))
    tap.note(f"{name} (pid {proc}): CapEff {eff} = {decode(eff)}; CapPrm "
             f"{nsh.status_field(proc, 'CapPrm')}, CapBnd {nsh.status_field(proc, 'CapBnd')}, "
             f"CapAmb {nsh.status_field(proc, 'CapAmb')}")
    tap.ok(caps == want[proc], f"{name}: CapEff {eff} holds exactly {','.join(sorted(want[proc]))}",
           f"got {caps}")
    bnd = set(decode(nsh.status_field(proc, "CapBnd")).split(","))
    tap.ok(bnd == want[proc] and nsh.status_field(proc, "CapAmb") == "0000000000000000"
           and nsh.status_field(proc, "CapInh") == "0000000000000000",
           f"{name}: nothing else in its bounding set, nothing inheritable or ambient", bnd)
    uids = nsh.status_field(proc, "Uid").split()
    tap.ok(set(uids) == {"65534"}, f"{name}: runs as nobody (Uid {' '.join(uids)})")
    tap.ok(nsh.status_field(proc, "NoNewPrivs") == "1" and nsh.status_field(proc, "Seccomp") == "2",
           f"{name}: no_new_privs and a seccomp filter "
           f"(NoNewPrivs {nsh.status_field(proc, 'NoNewPrivs')}, Seccomp "
           f"{nsh.status_field(proc, 'Seccomp')})")
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

marker = "/tmp/eu-stacktrace-ns-helper-must-not-exist"
for name in ("execve", "ptrace", "socket", "mount", "setns", "kill", "write-stdout",
             "open-write", "mmap-exec"):
    t = nsh.Helper(test_helper)
    reply, fd = t.request(op="open", pid=pid, path="/app/bin/nsprog")
    if fd is not None:
        os.close(fd)
    try:
        reply, fd = t.request(op="debug-syscall", syscall=name)
    except OSError as e:
        reply, fd = None, None
    t.sock.close()
    status = t.proc.wait(timeout=10)
    tap.ok(reply is None and status == -signal.SIGSYS and not os.path.exists(marker),
           f"a forbidden {name} inside the helper: killed by "
           f"{signal.Signals(-status).name if status < 0 else f'nothing (exit {status})'}, "
           f"no reply", reply)
tap.done()
PY
while IFS= read -r line; do
  case $line in
    "ok "*) ok "${line#ok * - }" ;;
    "not ok "*) not_ok "${line#not ok * - }" ;;
    "1.."*) ;;
    *) echo "$line" ;;
  esac
done < "$tmp/sandbox.tap"
plan
