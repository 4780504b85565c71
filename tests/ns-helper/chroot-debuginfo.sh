#!/bin/sh
# The debuginfo of a process that runs chrooted inside its namespace (a
# daemon's privilege separation: avahi, named, an sshd child): the paths in
# its maps, and so the places its debuginfo is looked for, are relative to
# the namespace's root, which setns sees and openat2 under the process's
# own (pinned) root does not.  The helper finds it by setns after openat2
# found every place empty; openat2 alone does not.  (Skipping setns there
# was tried, to spare the pooled worker's fork, and lost exactly this.)
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
prog=$nsh_build/nsprog
objcopy --only-keep-debug "$prog" "$stage/nsprog.debug"
chmod a+r "$stage/nsprog.debug"
id=$("$PYTHON3" -c 'import nsh, sys; print(nsh.build_id_of(sys.argv[1]))' "$prog")
nn=$(echo "$id" | cut -c1-2) rest=$(echo "$id" | cut -c3-)
# The namespace's root: the debuginfo, and /jail, a copy of the process's
# root that it chroots into.
cat > "$tmp/jail.setup" <<SETUP
mkdir -p "\$root/jail" "\$root/usr/lib/debug/.build-id/$nn" "\$root/usr/sbin"
cp -R "$stage/root/." "\$root/jail/"
cp "$stage/nsprog.debug" "\$root/usr/lib/debug/.build-id/$nn/$rest.debug"
cp "$(command -v chroot)" "\$root/usr/sbin/chroot"
SETUP
mkdir -p "$tmp/jailed"
sh "$nsh_src/ns-run.sh" root "$tmp/jailed" "$stage" "$tmp/jail.setup" -- \
  /usr/sbin/chroot /jail /app/bin/nsprog sleep 600 > "$tmp/jailed.log" 2>&1 &
pid=$!
started_pids="$started_pids $pid"
wait_nsprog "$pid" || tap_bail "the chrooted process did not start: $(cat "$tmp/jailed.log")"
echo "# pid $pid: root $(readlink "/proc/$pid/root")"

"$PYTHON3" - "$pid" "$helper" "$id" > "$tmp/chroot.tap" 2> "$tmp/chroot.err" <<'PY'
import os, sys
import nsh
pid, helper, bid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
tap = nsh.Tap()
h = nsh.Helper(helper)
def ask(ways):
    extra = {} if ways is None else {"ways": ways}
    reply, fd = h.request(op="debuginfo", pid=pid, path="/app/bin/nsprog", build_id=bid,
                          debuglink="nsprog.debug", **extra)
    if fd is not None:
        os.close(fd)
    return reply or {}, fd is not None
reply, fd = ask(None)
tap.ok(reply.get("ok") and fd and reply.get("way") == "setns"
       and reply.get("path", "").startswith("/usr/lib/debug/.build-id/"),
       f"every way: found by setns at {reply.get('path')} (the namespace's root)", reply)
reply, fd = ask(["openat2"])
tap.ok(not reply.get("ok") and not fd,
       f"openat2 alone, under the process's own root: not found ({reply.get('message')})", reply)
h.close()
PY
relay_tap chroot-debuginfo.py "$tmp/chroot.tap" "$tmp/chroot.err"
plan_and_done
