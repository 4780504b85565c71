#!/bin/sh
# The resolver's kept root: pins of two roots interleaved (tworoots.py).
. "$TOP_SRCDIR/tests/ns-helper/ns-lib.sh"
make_stage
# shellcheck disable=SC2016  # $root is the setup script's, expanded when it runs
printf 'cp "$root/app/lib/libnswork.so" "$root/app/lib/m.so"; echo A >> "$root/app/lib/m.so"\n' > "$tmp/a.setup"
# shellcheck disable=SC2016
printf 'cp "$root/app/lib/libnswork.so" "$root/app/lib/m.so"; echo B >> "$root/app/lib/m.so"\n' > "$tmp/b.setup"
start_ns root ra "$tmp/a.setup" sleep 120 || exit 1
pa=$pid
start_ns root rb "$tmp/b.setup" sleep 120 || exit 1
pb=$pid
"$PYTHON3" "$nsh_src/tworoots.py" "$helper" "$pa" "$pb" /app/lib/m.so > "$tmp/tworoots.tap" 2> "$tmp/tworoots.err"
relay_tap tworoots.py "$tmp/tworoots.tap" "$tmp/tworoots.err"
plan_and_done
