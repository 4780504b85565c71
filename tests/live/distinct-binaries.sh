#!/bin/sh
# Binaries nobody runs any more are let go: root's profiler keeps open the
# files of the processes alive and the 64 it used last, not every file it
# ever met.  Before, each distinct binary a user ran (a copy of a program
# with its own build-id is one) kept a descriptor and about 70 KB of tables
# for the rest of the run: 400 copies took the profiler from 3 to 39 MB
# and 437 descriptors, a user's way to bloat root's profiler and run it out
# of descriptors.
#
# One live run follows a shell that runs, as nobody, 400 copies of the deep
# workload one after the other (10 ms of CPU each), each with its own
# build-id; the shell reads the profiler's descriptors and VmRSS after the
# 100th and after the last.  Then a copy let go long ago runs again, and
# must be symbolized from its file, opened again.  The run's recording,
# unwound again by the sanitizer build with two threads (whose samples are
# written by the reading thread after the files they name may have been
# let go), must run clean and write the same.
#
# And one path rewritten in place (the same inode; a file known by its
# inode, no build-id recorded, as with -a or a binary built without one):
# the file opened before is dropped, and must neither be freed under a
# sample another thread has yet to write (-j 2, sanitizer build), nor stay
# open for the rest of the run (-a: descriptors on that path).
set -u
: "${EU_STACKTRACE:?}" "${EU_STACKTRACE_ASAN:?}" "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}" "${PYTHON3:=python3}"
. "$TOP_SRCDIR/tests/tap.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-distinct.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tap_plan 9
copies=400

if [ "$(id -u)" != 0 ]; then
  echo "# needs root: the copies run as nobody, and the profiler's /proc files are read"
fi
chmod 755 "$tmp"
mkdir "$tmp/bin"
chmod 755 "$tmp/bin"
# The copies: the deep workload with the first 4 bytes of its build-id
# replaced by the copy's number.
if "$PYTHON3" - "$TOP_BUILDDIR/tests/workloads/deep" "$tmp/bin" "$copies" <<'EOF'
import os, subprocess, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
notes = subprocess.run(["readelf", "-n", "--wide", src], capture_output=True, text=True,
                       check=True).stdout
hexid = [l.split()[-1] for l in notes.splitlines() if "Build ID:" in l][0]
data = open(src, "rb").read()
at = data.find(bytes.fromhex(hexid))
assert at > 0 and data.count(bytes.fromhex(hexid)) == 1
for i in range(1, n + 1):
    copy = bytearray(data)
    copy[at:at + 4] = i.to_bytes(4, "little")
    path = os.path.join(out, "d%d" % i)
    with open(path, "wb") as f:
        f.write(copy)
    os.chmod(path, 0o755)
EOF
then
  tap_ok "$copies copies of the deep workload, each with its own build-id"
else
  tap_not_ok "$copies copies of the deep workload, each with its own build-id"
fi

# The shell is the profiler's child ($PPID); the copies run as nobody.
cat > "$tmp/run.sh" <<EOF
note () { echo "\$(ls /proc/\$PPID/fd | wc -l) \$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/\$PPID/status)" > "$tmp/\$1"; }
i=1
while [ \$i -le $copies ]; do
  setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/bin/d\$i" 10 > /dev/null
  [ \$i = 100 ] && note at100
  i=\$((i + 1))
done
note at$copies
setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/bin/d1" 200 > /dev/null
EOF
# SCHED_RESET_ON_FORK (chrt -f -R, as no-lost.sh): the tests beside this
# one cannot starve the profiler while the kernel's ring fills; the
# command runs as any other task.
chrt -f -R 1 "$EU_STACKTRACE" --stats -f folded -o "$tmp/out.folded" --record="$tmp/rec.data" \
  -- sh "$tmp/run.sh" 2> "$tmp/err"
status=$?
let_go=$(sed -n 's/^files closed when no process mapped them any more.*: \([0-9]*\)$/\1/p' "$tmp/err")
# Each thread keeps 64 idle files, and lets go of more once 64 more are held.
if [ $status = 0 ] && [ -n "$let_go" ] && [ "$let_go" -ge $((copies - 2 * 64 - 16)) ]; then
  tap_ok "the run let go of $let_go of the $copies binaries"
else
  tap_not_ok "the run let go of ${let_go:-no} binaries of $copies (status $status)"
  grep -e 'files' -e 'error' -e 'samples' "$tmp/err" | sed 's/^/#   /'
fi

# shellcheck disable=SC2046 # two numbers
set -- $(cat "$tmp/at100" 2> /dev/null) $(cat "$tmp/at$copies" 2> /dev/null)
# Between two sweeps a thread holds up to 128 idle files (64 kept, 64
# more before it looks again), and the run's own (perf events, the
# helper's socket, the output): about 40.  Before: one per binary.
if [ $# = 4 ] && [ "$3" -le $((2 * 64 + 48)) ]; then
  tap_ok "descriptors: $1 after 100 binaries, $3 after $copies (at most 176)"
else
  tap_not_ok "descriptors after 100 binaries and after $copies: ${1:-?} ${3:-?} (at most 176)"
fi
# Before: 21 MB more (70 KB a binary).
if [ $# = 4 ] && [ "$4" -le $(($2 + 10240)) ]; then
  tap_ok "VmRSS: $(($2 / 1024)) MB after 100 binaries, $(($4 / 1024)) MB after $copies"
else
  tap_not_ok "VmRSS after 100 binaries and after $copies: ${2:-?} ${4:-?} kB (at most 10 MB more)"
fi

# d1 was let go: its last run is symbolized from the file opened again.
# Folded lines start with the command's name, d1 for both of its runs (the
# second, 200 ms, has most of the samples), and end with a count.
counts=$(awk '/^d1;/ { n = $NF; all += n; if ($0 ~ /;main(;|$| )/) named += n }
              END { print named + 0, all + 0 }' "$tmp/out.folded")
# shellcheck disable=SC2086 # two numbers
set -- $counts
if [ "$2" -ge 50 ] && [ $(($1 * 20)) -ge $(($2 * 19)) ]; then
  tap_ok "a binary let go and run again is symbolized: $1 of its $2 samples name main"
else
  tap_not_ok "a binary let go and run again: $1 of its $2 samples name main (need 95% of at least 50)"
  grep '^d1;' "$tmp/out.folded" | head -5 | cut -c1-200 | sed 's/^/#   /'
fi
"$EU_STACKTRACE" -j 1 -i "$tmp/rec.data" -f folded -o "$tmp/j1.folded" 2> "$tmp/j1.err"
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 "$EU_STACKTRACE_ASAN" -j 2 --stats -i "$tmp/rec.data" \
  -f folded -o "$tmp/asan.folded" 2> "$tmp/asan.err"
status=$?
asan_let_go=$(sed -n 's/^files closed when no process mapped them any more.*: \([0-9]*\)$/\1/p' "$tmp/asan.err")
if [ $status = 0 ] && ! grep -q -e 'ERROR: AddressSanitizer' -e 'runtime error:' -e 'LeakSanitizer' "$tmp/asan.err" \
   && [ -s "$tmp/j1.folded" ] && cmp -s "$tmp/j1.folded" "$tmp/asan.folded" && [ "${asan_let_go:-0}" -gt 0 ]; then
  tap_ok "the recording, -j 2 under the sanitizers: clean, the same as -j 1 ($asan_let_go files let go)"
else
  tap_not_ok "the recording, -j 2 under the sanitizers: status $status, ${asan_let_go:-no} files let go"
  grep -e 'ERROR' -e 'runtime error' -e 'SUMMARY' "$tmp/asan.err" | head -5 | sed 's/^/#   /'
  cmp "$tmp/j1.folded" "$tmp/asan.folded" 2>&1 | sed 's/^/#   /'
fi
# A binary without a build-id, its first byte written again (the same
# byte: only its ctime moves) after each of 40 runs.
if cc -O2 -Wl,--build-id=none -o "$tmp/nobid" "$TOP_SRCDIR/tests/workloads/deep.c" 2> "$tmp/cc.err"; then
  cat > "$tmp/rewrite.sh" <<EOF
cp "$tmp/nobid" "$tmp/one"
i=0
while [ \$i -lt 40 ]; do
  "$tmp/one" 15 > /dev/null
  printf '\\177' | dd of="$tmp/one" bs=1 count=1 conv=notrunc status=none
  i=\$((i + 1))
done
EOF
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 chrt -f -R 1 "$EU_STACKTRACE_ASAN" -j 2 -f folded \
    -o "$tmp/rewrite.folded" -- sh "$tmp/rewrite.sh" 2> "$tmp/rewrite.err"
  status=$?
  named=$(grep -c '^one;.*;main' "$tmp/rewrite.folded")
  if [ $status = 0 ] && ! grep -q -e 'ERROR: AddressSanitizer' -e 'runtime error:' "$tmp/rewrite.err" \
     && [ "$named" -gt 0 ]; then
    tap_ok "a file rewritten in place 40 times, -j 2 under the sanitizers: clean ($named stacks name main)"
  else
    tap_not_ok "a file rewritten in place 40 times, -j 2 under the sanitizers: status $status, $named stacks name main"
    grep -e 'ERROR' -e 'SUMMARY' -e '#[0-9] ' "$tmp/rewrite.err" | head -12 | sed 's/^/#   /'
  fi
else
  tap_not_ok "a file rewritten in place: cannot build the workload without a build-id"
  sed 's/^/#   /' "$tmp/cc.err"
fi

# The same, with the size and mtime set back (touch -d, as cp -p would):
# the second version names chain_3 chXin_3.  At -j 2 the first version's
# file may still be open in a thread (parked, or in another thread's
# answers) when the second is opened: its tables must not be taken for the
# second's (the tables shared between threads are known by ctime too).
if [ -x "$tmp/nobid" ] && "$PYTHON3" -c '
import sys
data = open(sys.argv[1], "rb").read()
assert data.count(b"chain_3\0") == 1
open(sys.argv[2], "wb").write(data.replace(b"chain_3\0", b"chXin_3\0"))' "$tmp/nobid" "$tmp/nobid_x"; then
  cat > "$tmp/touched.sh" <<EOF
cp "$tmp/nobid" "$tmp/two"; touch -d 2020-01-01 "$tmp/two"
"$tmp/two" 300 > /dev/null
dd if="$tmp/nobid_x" of="$tmp/two" conv=notrunc status=none; touch -d 2020-01-01 "$tmp/two"
"$tmp/two" 300 > /dev/null
EOF
  chrt -f -R 1 "$EU_STACKTRACE" -j 2 -f folded -o "$tmp/touched.folded" -- sh "$tmp/touched.sh" \
    2> "$tmp/touched.err"
  status=$?
  new=$(grep -c ';chXin_3;' "$tmp/touched.folded")
  old=$(grep -c ';chain_3;' "$tmp/touched.folded")
  if [ $status = 0 ] && [ "$new" -gt 0 ] && [ "$old" -gt 0 ]; then
    tap_ok "rewritten with its size and mtime set back, -j 2: each version's names ($old and $new stacks)"
  else
    tap_not_ok "rewritten with its size and mtime set back, -j 2: $old stacks name chain_3, $new chXin_3 (status $status)"
  fi
else
  tap_not_ok "rewritten with its size and mtime set back: cannot make the second version"
fi

# -a records no build-ids: one path, a new build-id written into it in
# place before each of 100 runs as nobody.  The descriptors the profiler
# holds on that path are counted after the last run (before: one a run).
cp "$TOP_BUILDDIR/tests/workloads/deep" "$tmp/bin/one"
chmod 755 "$tmp/bin/one"
at=$("$PYTHON3" -c '
import re, subprocess, sys
notes = subprocess.run(["readelf", "-n", "--wide", sys.argv[1]], capture_output=True, text=True).stdout
hexid = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
print(open(sys.argv[1], "rb").read().find(bytes.fromhex(hexid)))' "$tmp/bin/one")
chrt -f -R 1 "$EU_STACKTRACE" -a -f folded -o /dev/null 2> "$tmp/all.err" &
prof=$!
# shellcheck disable=SC2010 # ls -l shows where each descriptor points
has_events () { ls -l "/proc/$prof/fd" 2> /dev/null | grep -q perf_event; }
i=0
while [ $i -lt 600 ] && ! has_events; do
  sleep 0.05
  i=$((i + 1))
done
i=1
while [ $i -le 100 ]; do
  printf '%b' "\\0$(printf %03o $((i & 255)))" | dd of="$tmp/bin/one" bs=1 seek="${at:-0}" count=1 conv=notrunc status=none
  setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/bin/one" 10 > /dev/null
  i=$((i + 1))
done
# shellcheck disable=SC2010
on_path=$(ls -l "/proc/$prof/fd" 2> /dev/null | grep -c -- "-> $tmp/bin/one\$")
kill -INT "$prof"
wait "$prof"
status=$?
if [ "${at:-0}" -gt 0 ] && [ "$on_path" -le 4 ] && { [ $status = 0 ] || [ $status = 130 ]; }; then
  tap_ok "-a, one path rewritten with a new build-id 100 times: $on_path descriptors on it at the end"
else
  tap_not_ok "-a, one path rewritten with a new build-id 100 times: $on_path descriptors on it (at most 4), status $status"
  head -5 "$tmp/all.err" | sed 's/^/#   /'
fi
tap_done
