#!/bin/sh
# map_files of a pid that was reused by another user's process (pidreuse.py
# says what is checked), against the helper as a socket service as root.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
client_uid=$test_uid client_gid=$test_gid
make_user other || { tap_not_ok "creating a second test user"; plan_and_done; }
mkdir -p "$tmp/sock" "$tmp/secret"
chmod 755 "$tmp/secret"
cp /bin/sleep "$tmp/secret/secret-sleep"
chown "$test_uid:$test_gid" "$tmp/secret/secret-sleep"
chmod 700 "$tmp/secret/secret-sleep"
sock=$tmp/sock/ns-helper.socket
systemd-socket-activate --seqpacket --accept --listen="$sock" \
  "$helper" --idle-timeout=60 --slots-dir="$tmp/slots" > "$tmp/activate.log" 2>&1 &
started_pids="$started_pids $!"
i=0
# A bounded poll of a minute: a loaded machine takes more than 5 s.
while [ ! -S "$sock" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
chmod 666 "$sock"
"$PYTHON3" "$nsh_src/pidreuse.py" "$sock" "$client_uid" "$client_gid" "$test_uid" \
  "$tmp/secret/secret-sleep" > "$tmp/pidreuse.tap" 2> "$tmp/pidreuse.err"
relay_tap pidreuse.py "$tmp/pidreuse.tap" "$tmp/pidreuse.err"
plan_and_done
