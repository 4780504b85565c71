#!/bin/sh
# The helper adds reachability, never permission: a user who is not root
# gets from the privileged service (socket activation, one helper per
# connection, emulated by systemd-socket-activate as in service.sh) no file
# it could not open itself, by any way or trick (authz.py has the list),
# cannot tell a missing file from a forbidden one, and cannot take every
# connection: 8 at most per user, and each idle one is closed.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_user 2 || { tap_not_ok "creating a second test user"; plan_and_done; }
uid2=$test_uid gid2=$test_gid
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
idle=3

mkdir -p "$tmp/private" "$tmp/pub" "$tmp/u" "$tmp/sock"
cp "$nsh_build/libnswork.so" "$tmp/private/secret.so"
cp "$nsh_build/libnswork.so" "$tmp/pub/secret2.so"
chmod 600 "$tmp/private/secret.so" "$tmp/pub/secret2.so"
chmod 700 "$tmp/private"
chmod 755 "$tmp/pub"
chown "$test_user" "$tmp/u"
cp /usr/bin/sleep "$tmp/suid-sleep"
chmod 4755 "$tmp/suid-sleep"

sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$helper" --idle-timeout=$idle --slots-dir="$tmp/slots" \
  || tap_bail "the helper's service did not start"

"$PYTHON3" "$nsh_src/authz.py" "$sock" "$tmp" "$test_uid" "$test_gid" "$uid2" "$gid2" "$idle" \
  > "$tmp/authz.tap" 2> "$tmp/authz.err"
relay_tap authz.py "$tmp/authz.tap" "$tmp/authz.err"
plan_and_done
