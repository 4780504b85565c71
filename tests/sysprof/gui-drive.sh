#!/bin/sh
# Drives Sysprof's GUI (run by gui.sh under Xvfb, inside dbus-run-session):
#   gui-drive.sh CAPTURE OUTDIR
# opens CAPTURE with `sysprof CAPTURE', waits until its call graph is
# built, takes a screenshot (OUTDIR/sysprof-gui.png), then expands the whole
# Descendants tree of [Everything] (keypad `*'), selects every row (Ctrl+A)
# and copies them with Sysprof's own Ctrl+C (the callgraph page's
# page.copy: "[SELF%] [TOTAL%]  NAME" per row, indented by depth), which
# xclip reads into OUTDIR/gui-tree.txt; and the Details page's "Recorded
# At" and "CPU Model", read through AT-SPI (OUTDIR/gui-details.txt).  Then a second screenshot of the
# expanded tree (OUTDIR/sysprof-gui-tree.png).  Polls with bounded retries:
# the GUI needs seconds to start on a loaded machine.
cap=$1
out=$2
name=$(basename "$cap")
TZ=UTC LC_ALL=C GSK_RENDERER=cairo sysprof "$cap" > "$out/sysprof-gui.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT

# The window is named for the capture once it is open.
i=0
wid=""
while [ -z "$wid" ] && [ $i -lt 240 ]; do
  wid=$(xdotool search --name "$name" 2>/dev/null | head -1)
  [ -n "$wid" ] || sleep 0.5
  i=$((i + 1))
done
[ -n "$wid" ] || { echo "no Sysprof window for $name after 120 s"; exit 1; }
echo "Sysprof window $wid"

# The Descendants view's first row is [Everything] once the call graph is
# built: click it and copy it until that shows (default window size: the
# row is at 470,211).
copy_rows ()
{
  xdotool mousemove --sync 470 211 click 1 > /dev/null 2>&1
  xdotool key --clearmodifiers ctrl+a ctrl+c > /dev/null 2>&1
  xclip -o -selection clipboard 2> /dev/null > "$out/gui-tree.txt"
}
# The Descendants view shows the function selected in the Functions list
# (left, by total time): [Everything] has 100%, and so may others
# (__libc_start_main when every sample is under it), in an order that
# varies from run to run (one CI run found __libc_start_main@GLIBC_2.2.5
# first and clicked 12 minutes at the wrong tree).  So each of the first
# four rows (20 pixels apart) is selected in turn until the Descendants
# view starts with [Everything].
i=0
while [ $i -lt 240 ]; do
  xdotool mousemove --sync 100 $((211 + 20 * (i % 4))) click 1 > /dev/null 2>&1
  copy_rows
  grep -q '\[Everything\]' "$out/gui-tree.txt" && break
  sleep 0.5
  i=$((i + 1))
done
grep -q '\[Everything\]' "$out/gui-tree.txt" || { echo "no call graph after 120 s"; exit 1; }
import -window "$wid" "$out/sysprof-gui.png" || exit 1
# The Details page's Recorded At and CPU Model, as a screen reader reads
# them (its labels are filled while the call graph is built).
i=0
while [ $i -lt 60 ]; do
  /usr/bin/python3 "$(dirname "$0")/gui-details.py" > "$out/gui-details.txt" 2>&1 &&
    ! grep -q ': $' "$out/gui-details.txt" && break
  sleep 0.5
  i=$((i + 1))
done
cat "$out/gui-details.txt"

# Expand everything below [Everything], then copy until the rows are the
# library's tree (gui.sh's check; the tree view expands over its next
# frames, and two equal copies half a second apart may still be a part of
# it), at most 30 s; without the library's tree, until the rows stop
# growing.
xdotool mousemove --sync 470 211 click 1 > /dev/null 2>&1
xdotool key KP_Multiply
library=$out/library-tree.folded
prev=0
i=0
while [ $i -lt 60 ]; do
  copy_rows
  n=$(wc -l < "$out/gui-tree.txt")
  if [ -s "$library" ]; then
    "${PYTHON3:-python3}" "$(dirname "$0")/gui-compare.py" "$out/gui-tree.txt" "$library" \
      > /dev/null 2>&1 && break
  else
    [ "$n" -gt 3 ] && [ "$n" -eq "$prev" ] && break
  fi
  prev=$n
  sleep 0.5
  i=$((i + 1))
done
echo "# $(wc -l < "$out/gui-tree.txt") rows copied from Sysprof's Descendants view"
import -window "$wid" "$out/sysprof-gui-tree.png"
