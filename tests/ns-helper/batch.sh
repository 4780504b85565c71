#!/bin/sh
# Batches of requests sent before any reply is read: hostile requests in
# the middle of one, and a client that sends a batch and never reads
# (batch.py says what is checked).
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
cat > "$tmp/batch.setup" <<EOF2
mkfifo "\$root/app/lib/fifo.so"
EOF2
start_ns root batch "$tmp/batch.setup" sleep 120 || exit 1
"$PYTHON3" "$nsh_src/batch.py" "$pid" "$helper" > "$tmp/batch.tap" 2> "$tmp/batch.err"
relay_tap batch.py "$tmp/batch.tap" "$tmp/batch.err"
plan_and_done
