#!/bin/sh
# Sysprof's GUI on a converted capture: `sysprof FILE' under Xvfb, driven
# with xdotool (gui-drive.sh): its Descendants tree of [Everything], copied
# with Sysprof's own Ctrl+C, must be the tree libsysprof-4 builds of the
# same capture (sysprof-callgraph, folded as the GUI folds recursion), row
# for row and total for total, with the program's process rows and
# functions.  The screenshots stay for a person to look at, in
# tests/sysprof/gui-output/ of the build tree (sysprof-gui.png: the capture
# as opened; sysprof-gui-tree.png: the tree expanded), with the capture,
# the copied rows and the Details page's own log.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/sysprof/sysprof-lib.sh"

CALLGRAPH="$TOP_BUILDDIR/tests/sysprof/sysprof-callgraph"
OUT="$TOP_BUILDDIR/tests/sysprof/gui-output"

plan=4
tap_plan "$plan"
e2e_setup
problem=$(tools_problem)
for _t in "sysprof-callgraph:$CALLGRAPH" Xvfb:Xvfb xdotool:xdotool sysprof:sysprof \
          xclip:xclip "import (imagemagick):import" dbus-run-session:dbus-run-session; do
  _q=$(tool_problem "${_t%%:*}" "${_t#*:}")
  [ -n "$_q" ] && problem="$problem${problem:+; }$_q"
done
[ -x "$TOP_BUILDDIR/tests/sysprof/shellfork" ] || problem="$problem${problem:+; }shellfork is not built"
if [ -n "$problem" ]; then
  tap_fill "not run ($problem: tools/install-deps.sh)"
  tap_done
fi
E=$EU_STACKTRACE
rm -rf "$OUT"
mkdir -p "$OUT"

# shellcheck disable=SC2317  # called by name through check
capture ()
{
  date -u +%s > "$tmp/started"
  record "$tmp/perf.data" "$TOP_BUILDDIR/tests/sysprof/shellfork" 400 "$WORKLOADS/deep" 300 ||
    { cat "$tmp/record.err"; return 1; }
  "$E" -i "$tmp/perf.data" -f sysprof -o "$OUT/shellfork.cap" &&
    "$CALLGRAPH" "$OUT/shellfork.cap" > "$OUT/library-tree.folded" &&
    echo "# libsysprof-4's tree: $(wc -l < "$OUT/library-tree.folded") stacks"
}
check "perf.data of a program that forks a shell -> -f sysprof, and libsysprof-4's tree of it" \
  capture

xvfb_pid=""
# shellcheck disable=SC2317  # also called from gui, which check calls by name
stop_xvfb ()
{
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2> /dev/null && wait "$xvfb_pid" 2> /dev/null
  xvfb_pid=""
}

# shellcheck disable=SC2317  # called by name through check
gui ()
{
  # Xvfb picks a free display and writes its number to the fd.
  rm -f "$tmp/display"
  Xvfb -displayfd 9 -screen 0 1024x768x24 -nolisten tcp 9> "$tmp/display" \
    > "$tmp/xvfb.log" 2>&1 &
  xvfb_pid=$!
  _i=0
  while ! [ -s "$tmp/display" ] && [ "$_i" -lt 120 ]; do
    kill -0 "$xvfb_pid" 2> /dev/null || break
    sleep 0.5
    _i=$((_i + 1))
  done
  [ -s "$tmp/display" ] || { cat "$tmp/xvfb.log"; return 1; }
  echo "Xvfb on :$(cat "$tmp/display")"
  DISPLAY=":$(cat "$tmp/display")" dbus-run-session -- \
    sh "$TOP_SRCDIR/tests/sysprof/gui-drive.sh" "$OUT/shellfork.cap" "$OUT"
  _r=$?
  stop_xvfb
  [ "$_r" -eq 0 ] && [ -s "$OUT/sysprof-gui.png" ] && [ -s "$OUT/sysprof-gui-tree.png" ]
}
check "sysprof FILE under Xvfb: the capture opens, its tree is copied, screenshots in \
tests/sysprof/gui-output/" gui
stop_xvfb

check "the GUI's tree is libsysprof-4's, row for row, with [shellfork], [sh], [deep] and \
their functions" \
  "$PYTHON3" "$TOP_SRCDIR/tests/sysprof/gui-compare.py" "$OUT/gui-tree.txt" \
  "$OUT/library-tree.folded" '[shellfork]' '[sh]' '[deep]' parent_work child_before_exec \
  mix main recurse leaf_work

# shellcheck disable=SC2317  # called by name through check
details ()
{
  sed 's/^/# /' "$OUT/gui-details.txt"
  _model=$(run_perf report -i "$tmp/perf.data" --header-only 2> /dev/null |
    sed -n 's/^# cpudesc : //p')
  echo "# perf.data's cpudesc: $_model; recording started at $(date -u -d "@$(cat "$tmp/started")")"
  [ -n "$_model" ] && grep -q -x -F "CPU Model: $_model" "$OUT/gui-details.txt" || return 1
  # "Recorded At" (%x %X in the C locale, UTC): within the recording.
  _at=$(sed -n 's/^Recorded At: //p' "$OUT/gui-details.txt")
  _at_s=$(date -u -d "$(echo "$_at" | sed 's|^\(..\)/\(..\)/\(..\) |20\3-\1-\2 |')" +%s) || return 1
  _start=$(cat "$tmp/started")
  echo "# Recorded At $_at_s, the recording ran from $_start"
  [ "$_at_s" -ge "$_start" ] && [ "$_at_s" -le $((_start + 30)) ]
}
check "Sysprof's Details page: Recorded At is the recording's start, CPU Model perf's cpudesc" \
  details

tap_done
