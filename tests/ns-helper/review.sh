#!/bin/sh
# Attacks from the review of the helper's authorization (review.py has the
# list): a user's subordinate uids take no more connections than the user,
# an exec of a setuid program between the check and the open of map_files
# gets the user nothing, and owning a user namespace nested in root's
# container proves nothing.  Against the test build (a pause between the
# check and the open, ST_NSH_TEST_AUTH_DELAY_MS) as a socket service.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
# shellcheck disable=SC2119  # make_user takes no argument here
make_user || { tap_not_ok "creating a test user"; plan_and_done; }
test_helper=$nsh_build/eu-stacktrace-ns-helper-test

mkdir -p "$tmp/sock" "$tmp/suid"
chmod 755 "$tmp/suid"
cp "$nsh_build/libnswork.so" "$tmp/secret-src.so"
# A setuid program the user may run but not read, at a fixed address (not
# PIE: a setuid exec drops ADDR_NO_RANDOMIZE).
printf '#include <unistd.h>\nint main (void) { sleep (30); return 0; }\n' > "$tmp/suid/prog.c"
${CC:-cc} -no-pie -O0 -o "$tmp/suid/prog" "$tmp/suid/prog.c" || tap_not_ok "building the setuid program"
chmod 4711 "$tmp/suid/prog"

sock=$tmp/sock/ns-helper.socket
start_service "$sock" -E ST_NSH_TEST_AUTH_DELAY_MS=1500 \
  "$test_helper" --idle-timeout=60 --slots-dir="$tmp/slots" || tap_bail "the helper's service did not start"

"$PYTHON3" "$nsh_src/review.py" "$sock" "$tmp" "$test_uid" "$test_gid" "$tmp/suid/prog" \
  > "$tmp/review.tap" 2> "$tmp/review.err"
relay_tap review.py "$tmp/review.tap" "$tmp/review.err"
plan_and_done
