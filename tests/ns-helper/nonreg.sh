#!/bin/sh
# Only regular files, read-only, by each way (nonreg.py).
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
cat > "$tmp/nonreg.setup" <<'EOF2'
mkfifo "$root/app/lib/fifo.so"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$root/app/lib/sock.so"
mknod "$root/app/lib/null.so" c 1 3
mkdir "$root/app/lib/dir.so"
ln -s ../../../../../../etc/shadow "$root/app/lib/up.so"
EOF2
start_ns root nonreg "$tmp/nonreg.setup" sleep 120 || exit 1
"$PYTHON3" "$nsh_src/nonreg.py" "$helper" "$pid" > "$tmp/nonreg.tap" 2> "$tmp/nonreg.err"
relay_tap nonreg.py "$tmp/nonreg.tap" "$tmp/nonreg.err"
plan_and_done
