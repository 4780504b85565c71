#!/bin/sh
# A user whose 8 connections leave their replies unread does not stop
# root's service: after a few unread replies a connection gets EBUSY and no
# descriptor (unread.py says why).  Against the helper as a socket service.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }

mkdir -p "$tmp/sock"
sock=$tmp/sock/ns-helper.socket
start_service "$sock" "$helper" --idle-timeout=60 --slots-dir="$tmp/slots" \
  || tap_bail "the helper's service did not start"

"$PYTHON3" "$nsh_src/unread.py" "$sock" "$test_uid" "$test_gid" 150 \
  > "$tmp/unread.tap" 2> "$tmp/unread.err"
relay_tap unread.py "$tmp/unread.tap" "$tmp/unread.err"
plan_and_done
