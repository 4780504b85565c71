#!/bin/sh
# A stripped program whose debuginfo exists only inside its mount namespace:
# its frames get the names that only the debuginfo has, found by the helper
# where the process's own tools would look (/usr/lib/debug/.build-id, the
# .gnu_debuglink name beside the program and under the debug roots,
# flatpak's /app/lib/debug), checked against the program's build-id.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage

prog=$nsh_build/nsprog
objcopy --only-keep-debug "$prog" "$stage/nsprog.debug"
objcopy --strip-all --add-gnu-debuglink="$stage/nsprog.debug" "$prog" "$stage/nsprog.stripped"
id=$("$PYTHON3" -c 'import nsh, sys; print(nsh.build_id_of(sys.argv[1]))' "$prog")
nn=$(echo "$id" | cut -c1-2) rest=$(echo "$id" | cut -c3-)
chmod a+r "$stage/nsprog.debug" "$stage/nsprog.stripped"
echo "# nsprog build-id $id; stripped: $(nm "$stage/nsprog.stripped" 2>&1 | head -n 1)"

cat > "$tmp/stripped.setup" <<EOF
cp "$stage/nsprog.stripped" "\$root/app/bin/nsprog"
EOF
cat > "$tmp/with-debug.setup" <<EOF
cp "$stage/nsprog.stripped" "\$root/app/bin/nsprog"
mkdir -p "\$root/usr/lib/debug/.build-id/$nn"
cp "$stage/nsprog.debug" "\$root/usr/lib/debug/.build-id/$nn/$rest.debug"
chown 1234 "\$root/usr/lib/debug/.build-id/$nn/$rest.debug"
EOF

# Without its debuginfo, the stripped program's own functions have no name.
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
sample no-debug -- $(ns_command root no-debug "$tmp/stripped.setup" 500)
named=$(grep -c '"symbol":"ns_outer"' "$tmp/no-debug.jsonl")
lib=$(grep -c '"symbol":"nswork_leaf"' "$tmp/no-debug.jsonl")
if [ "$named" -eq 0 ] && [ "$lib" -gt 100 ]; then
  tap_ok "stripped, no debuginfo anywhere: no sample names ns_outer (its library's nswork_leaf: $lib samples)"
else
  tap_not_ok "stripped, no debuginfo: ns_outer named in $named samples, nswork_leaf in $lib"
fi

# With it, under the namespace's /usr/lib/debug/.build-id only (and the
# sanitized build: the client's debuginfo path runs clean).
# shellcheck disable=SC2046  # the command prints the words of a command line on purpose
EU=$EU_STACKTRACE_ASAN sample with-debug -- $(ns_command root with-debug "$tmp/with-debug.setup" 700)
if grep -q Sanitizer "$tmp/with-debug.err"; then
  tap_not_ok "the sanitized build runs clean"; diag "$tmp/with-debug.err"
fi
# What libdwfl reads is a copy, counted in the copies' budget with the files
# of the process that maps the program: root's, in a mount namespace of its
# own (a rootful container's), not the debug file's owner (uid 1234).
if grep -q "/app/bin/nsprog: debuginfo /usr/lib/debug/.build-id/$nn/$rest.debug opened by the namespace helper (.*), read from a copy counted with root's files of mount namespace [0-9]*$" \
    "$tmp/with-debug.err"; then
  tap_ok "the helper found the debuginfo in the namespace: /usr/lib/debug/.build-id/$nn/$rest.debug, read from a copy counted with its process's mount namespace"
else
  tap_not_ok "the helper found the debuginfo in the namespace"; diag "$tmp/with-debug.err"
fi
check_chains with-debug "stripped, debuginfo only in the namespace: names from it" 250 \
  "nswork_leaf:nswork_run,ns_middle,ns_outer,main,$libc_start" \
  "ns_hidden_leaf:ns_middle,ns_outer,main,$libc_start"

# Every place, one at a time, through the protocol.
start_ns root places "$tmp/stripped.setup" sleep 60 || exit 1
"$PYTHON3" - "$pid" "$helper" "$stage" "$id" > "$tmp/places.tap" <<'PY'
import os, shutil, sys
import nsh
pid, helper, stage, bid = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
root = f"/proc/{pid}/root"
debug = f"{stage}/nsprog.debug"
places = [
    f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug",
    f"/app/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug",
    "/app/bin/nsprog.debug",
    "/app/bin/.debug/nsprog.debug",
    "/usr/lib/debug/app/bin/nsprog.debug",
    "/app/lib/debug/bin/nsprog.debug",
]
h = nsh.Helper(helper)
def ask(**extra):
    return h.request(op="debuginfo", pid=pid, path="/app/bin/nsprog", build_id=bid,
                     debuglink="nsprog.debug", **extra)
for place in places:
    os.makedirs(os.path.dirname(root + place), exist_ok=True)
    shutil.copy(debug, root + place)
    for way in ("openat2", "setns"):
        reply, fd = ask(ways=[way])
        good = reply.get("ok") and reply.get("path") == place and fd is not None \
            and nsh.build_id_of_fd(fd) == bid and nsh.sha256_fd(fd) == nsh.sha256(debug)
        print(f"{'ok' if good else 'not ok'} - debuginfo at {place}: found by {way}"
              + ("" if good else f": {reply}"))
        if fd is not None:
            os.close(fd)
    os.unlink(root + place)
# Nowhere: an error, not a guess.
reply, fd = ask()
print(f"{'ok' if not reply.get('ok') and reply.get('errno') == 2 and fd is None else 'not ok'}"
      f" - no debuginfo anywhere: ENOENT ({reply.get('message')})")
# A file with another build-id at the build-id path is refused, and the
# next place is used.
first = root + places[0]
os.makedirs(os.path.dirname(first), exist_ok=True)
shutil.copy(f"{stage}/root/app/lib/libnswork.so", first)
shutil.copy(debug, root + places[3])
reply, fd = ask()
print(f"{'ok' if reply.get('ok') and reply.get('path') == places[3] else 'not ok'} - a file of "
      f"another build-id at {places[0]} is passed over for {reply.get('path')}")
if fd is not None:
    os.close(fd)
os.unlink(root + places[3])
reply, fd = ask()
print(f"{'ok' if not reply.get('ok') and 'build-id' in reply.get('message', '') else 'not ok'}"
      f" - alone, it is refused: {reply.get('message')}")
os.unlink(first)
# A debuglink naming the program itself does not make it its own debuginfo.
reply, fd = h.request(op="debuginfo", pid=pid, path="/app/bin/nsprog", build_id=bid,
                      debuglink="nsprog")
print(f"{'ok' if not reply.get('ok') and fd is None else 'not ok'} - a debuglink naming the "
      f"program itself finds nothing: {reply.get('message')}")
# Without a build-id to check against, nothing is looked for.
reply, fd = h.request(op="debuginfo", pid=pid, path="/app/bin/nsprog", debuglink="nsprog.debug")
print(f"{'ok' if not reply.get('ok') and reply.get('errno') == 22 else 'not ok'} - a request "
      f"without a build-id is refused: {reply.get('message')}")
h.close()
PY
tap_relay < "$tmp/places.tap"
plan_and_done
