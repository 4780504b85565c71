#!/bin/sh
# 10,000 malformed requests (fuzz.py) and 10,000 valid ones (nsh-client, in
# C): every request gets a reply, the helper carries on, and neither side
# holds more descriptors after than before.
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
start_ns root fuzz "" sleep 120 || exit 1

"$PYTHON3" "$nsh_src/fuzz.py" "$pid" "$helper" 10000 > "$tmp/fuzz.tap"
tap_relay < "$tmp/fuzz.tap"

for way in map_files setns; do
  "$nsh_client" "$helper" rtt "$pid" /app/bin/nsprog 10000 "$way" > "$tmp/rtt-$way.out" 2>&1
  status=$?
  sed 's/^/# /' "$tmp/rtt-$way.out"
  fds=$(sed -n 's/^fds helper \([0-9]*\) -> \([0-9]*\) client \([0-9]*\) -> \([0-9]*\)$/\1 \2 \3 \4/p' "$tmp/rtt-$way.out")
  # shellcheck disable=SC2086  # the line is split into its numbers on purpose
  set -- $fds
  if [ $status -eq 0 ] && [ $# -eq 4 ] && [ "$1" = "$2" ] && [ "$3" = "$4" ]; then
    tap_ok "10000 files sent by $way and closed: descriptors helper $1 -> $2, client $3 -> $4"
  else
    tap_not_ok "10000 requests by $way without a descriptor leak (status $status: $fds)"
  fi
done
plan_and_done
