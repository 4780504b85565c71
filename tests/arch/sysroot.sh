#!/bin/sh
# Files of another machine, on an aarch64 recording made with qemu-user and
# gdb (arch-lib.sh), unwound here with the recording machine's files:
#  - under --sysroot, moved away from where the recording says they were,
#    they unwind the same as in place;
#  - a wrong file at the sysroot path (another build-id) is refused, and the
#    message names it;
#  - a recording without build-ids and with another machine's inodes is
#    unwound the same with files found under --sysroot, accepted by name,
#    and --stats says so;
#  - --search-path finds the files by name in a flat folder.
# shellcheck source=tests/tap.sh
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
# shellcheck source=tests/arch/arch-lib.sh
. "$(dirname "$0")/arch-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-sysroot.XXXXXX") || exit 1
[ -n "$ARCH_KEEP" ] || trap 'rm -rf "$tmp"' EXIT
tap_plan 6
if ! arch_record aarch64 "$tmp/rec"; then
  tap_bail "no aarch64 recording: $(cat "$tmp/rec/why" 2>/dev/null)"
fi
arch_params aarch64
rec=$tmp/rec

# frames FILE: each sample's frames as "symbol@module" (module by name).
frames ()
{
  "$PYTHON3" -c '
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    print(" ".join("%s@%s" % (f.get("symbol"), (f.get("module") or "").rsplit("/", 1)[-1])
                   for f in s["frames"]), s["stop"])' "$1"
}

run ()   # NAME ARGS...: unwinds into $tmp/NAME.json, stats in $tmp/NAME.err
{
  name=$1
  shift
  "$EU_STACKTRACE" -f json -s -o "$tmp/$name.json" "$@" 2>"$tmp/$name.err"
}

# The same stops without build-ids, with inodes of another machine (written
# while the files are still where the recording says).
"$PYTHON3" "$ARCH_DIR/arch-check.py" write --stops "$rec/stops.jsonl" --maps "$rec/maps.txt" \
  --sysroot "$sysroot" --arch aarch64 --pc-index 32 --no-build-ids --bogus-inodes \
  --out "$tmp/nobuildid.data"

run inplace -i "$rec/perf.data" --sysroot="$sysroot"
frames "$tmp/inplace.json" >"$tmp/inplace.frames"
complete=$(grep -c ' end$' "$tmp/inplace.frames")

# The recording machine's tree in a folder of its own; the workload moved
# (not copied) into it, at the path the recording names.
root=$tmp/root
mkdir -p "$root/lib" "$root$rec"
cp -L "$sysroot/lib/ld-linux-aarch64.so.1" "$sysroot/lib/libc.so.6" "$root/lib/"
mv "$rec/archwork" "$rec/libarchlib.so" "$root$rec/"
run moved -i "$rec/perf.data" --sysroot="$root"
frames "$tmp/moved.json" >"$tmp/moved.frames"
from_root=$(sed -n 's/^  sysroot  *\([0-9]*\)$/\1/p' "$tmp/moved.err")
if cmp -s "$tmp/inplace.frames" "$tmp/moved.frames" && [ "$complete" -ge 300 ] &&
   [ "$from_root" = 4 ]; then
  tap_ok "files moved under --sysroot: the same frames as in place ($complete complete unwinds, $from_root files from the sysroot)"
else
  tap_not_ok "files moved under --sysroot: frames differ from in place, or $from_root files from it"
  diff "$tmp/inplace.frames" "$tmp/moved.frames" | head -n 6 | sed 's/^/#   /'
  sed 's/^/#   /' "$tmp/moved.err"
fi
if grep -q '^architecture unwound: aarch64$' "$tmp/moved.err"; then
  tap_ok "the summary says which architecture was unwound"
else
  tap_not_ok "the summary does not name aarch64"
fi

# Another libc at the sysroot path: riscv64's, with its own build-id.
mkdir -p "$tmp/wrong/lib" "$tmp/wrong$rec"
cp -L "$sysroot/lib/ld-linux-aarch64.so.1" "$tmp/wrong/lib/"
cp -L /usr/riscv64-linux-gnu/lib/libc.so.6 "$tmp/wrong/lib/libc.so.6"
cp "$root$rec/archwork" "$root$rec/libarchlib.so" "$tmp/wrong$rec/"
run wrong -i "$rec/perf.data" --sysroot="$tmp/wrong"
if grep -q "$tmp/wrong/lib/libc.so.6: build-id" "$tmp/wrong.err" &&
   ! grep -q '"symbol":"[^"]*","offset":[0-9]*,"module":"\\/lib\\/libc.so.6"' "$tmp/wrong.json"; then
  tap_ok "a libc of another build-id at the sysroot path is refused and named"
else
  tap_not_ok "the wrong libc was not refused by name"
  sed 's/^/#   /' "$tmp/wrong.err"
fi

run byname -i "$tmp/nobuildid.data" --sysroot="$root"
frames "$tmp/byname.json" | sed 's/ [^ ]*$//' >"$tmp/byname.frames"
sed 's/ [^ ]*$//' "$tmp/inplace.frames" >"$tmp/inplace.names"
by_name=$(sed -n 's/^files of the sysroot or search path accepted by name (no build-id recorded): //p' "$tmp/byname.err")
if cmp -s "$tmp/inplace.names" "$tmp/byname.frames" && [ "$by_name" = 4 ]; then
  tap_ok "no build-ids, another machine's inodes: found under --sysroot by name, the same frames; --stats counts $by_name"
else
  tap_not_ok "without build-ids: frames differ, or $by_name accepted by name"
  diff "$tmp/inplace.names" "$tmp/byname.frames" | head -n 6 | sed 's/^/#   /'
  sed 's/^/#   /' "$tmp/byname.err"
fi
# The same recording without --sysroot: the recorded paths are gone or
# (this machine's /lib/libc.so.6) another file: nothing of it is used.
if run nosysroot -i "$tmp/nobuildid.data" && [ -s "$tmp/nosysroot.json" ] &&
   ! grep -q '"symbol":"[^"]*","offset":[0-9]*,"module":"\\/lib\\/libc.so.6"' "$tmp/nosysroot.json"; then
  tap_ok "without --sysroot, this machine's /lib/libc.so.6 is not taken for the recording's"
else
  tap_not_ok "this machine's libc was used for an aarch64 recording"
fi

# A flat folder of the files, found by name.
mkdir -p "$tmp/flat"
cp "$root/lib/"* "$root$rec/"* "$tmp/flat/"
mkdir -p "$tmp/empty"
run search -i "$rec/perf.data" --search-path="$tmp/empty:$tmp/flat"
frames "$tmp/search.json" >"$tmp/search.frames"
from_search=$(sed -n 's/^  search path  *\([0-9]*\)$/\1/p' "$tmp/search.err")
if cmp -s "$tmp/inplace.frames" "$tmp/search.frames" && [ "$from_search" = 4 ]; then
  tap_ok "--search-path finds the moved files by name: the same frames as in place"
else
  tap_not_ok "--search-path: frames differ, or $from_search files from it"
  diff "$tmp/inplace.frames" "$tmp/search.frames" | head -n 6 | sed 's/^/#   /'
  sed 's/^/#   /' "$tmp/search.err"
fi
tap_done
