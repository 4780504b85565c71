#!/bin/sh
# Compressed contents a file carries, read, and bounded
# (core/resolve/inflate-bounds.h).  The dlopen workload runs in plugin.so,
# made three ways, under `eu-stacktrace -- dlopen LIB`:
#  - real: stripped, with a MiniDebugInfo (.gnu_debugdata) made as Fedora's
#    find-debuginfo makes it (the function symbols .dynsym lacks,
#    xz-compressed): the static functions plugin_hot and plugin_middle are
#    named from it, nothing is refused;
#  - bomb: stripped, its .gnu_debugdata 256 MiB of zeros in a few KB of xz.
#    libdwfl inflates it whole (the build before peaked at 260 MB); now it
#    is refused: the peak RSS stays under 64 MB, --stats lists it, and
#    plugin_entry is still named from .dynsym;
#  - zbomb: plugin-nocfi.so without its debug sections (no CFI at all:
#    libdwfl opens its Dwarf to look for some) and with a GNU .zdebug_info
#    saying 1 GiB, zeros in 1 MB of zlib.  libdw inflates it when the Dwarf
#    opens (the build before: 1,029 MB); now the file's compressed sections
#    are not read: under 64 MB, --stats lists it, and the plugin's frame
#    is still named.
# Needs objcopy and nm (binutils) and python3's lzma and zlib modules.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
LIMIT_KB=$((64 * 1024))

tap_plan 6
e2e_setup
problem=$(tools_problem objcopy:objcopy nm:nm python3:"$PYTHON3")
[ -x "$WORKLOADS/dlopen" ] && [ -f "$WORKLOADS/plugin.so" ] && [ -f "$WORKLOADS/plugin-nocfi.so" ] \
  || problem="${problem:+$problem; }$WORKLOADS/dlopen, plugin.so or plugin-nocfi.so is not built"
"$PYTHON3" -c 'import lzma' 2> /dev/null || problem="${problem:+$problem; }python3 has no lzma module"

# xz FILE: FILE compressed as xz, to stdout.
xz_of () {
  "$PYTHON3" -c 'import lzma, sys; sys.stdout.buffer.write(lzma.compress(open(sys.argv[1], "rb").read()))' "$1"
}

if [ -z "$problem" ]; then
  lib="$WORKLOADS/plugin.so"
  # Fedora's recipe (find-debuginfo, gdb's manual "MiniDebugInfo"): the
  # function symbols not in .dynsym, in a copy of the debug file stripped
  # of everything else.
  nm -D --format=posix --defined-only "$lib" | awk '{ print $1 }' | sort > "$tmp/dynsyms"
  nm --format=posix --defined-only "$lib" | awk '$2 == "T" || $2 == "t" { print $1 }' \
    | sort > "$tmp/funcsyms"
  comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep"
  objcopy --only-keep-debug "$lib" "$tmp/mini.debug" \
    && objcopy -S --remove-section .gdb_index --remove-section .comment \
         --keep-symbols="$tmp/keep" "$tmp/mini.debug" "$tmp/mini" \
    && xz_of "$tmp/mini" > "$tmp/mini.xz" \
    && objcopy --strip-all "$lib" "$tmp/stripped.so" \
    && objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped.so" "$tmp/real.so" \
    || problem="cannot make the MiniDebugInfo library"
  "$PYTHON3" -c '
import lzma, sys
c = lzma.LZMACompressor(preset=0)
with open(sys.argv[1], "wb") as out:
    zeros = bytes(1 << 20)
    for _ in range(256):
        out.write(c.compress(zeros))
    out.write(c.flush())' "$tmp/bomb.xz" \
    && objcopy --add-section .gnu_debugdata="$tmp/bomb.xz" "$tmp/stripped.so" "$tmp/bomb.so" \
    || problem="cannot make the bomb library"
  "$PYTHON3" -c '
import struct, sys, zlib
c = zlib.compressobj(9)
with open(sys.argv[1], "wb") as out:
    out.write(b"ZLIB" + struct.pack(">Q", 1 << 30))
    zeros = bytes(1 << 20)
    for _ in range(1024):
        out.write(c.compress(zeros))
    out.write(c.flush())' "$tmp/zbomb.z" \
    && objcopy --strip-debug "$WORKLOADS/plugin-nocfi.so" "$tmp/nocfi.so" \
    && objcopy --add-section .zdebug_info="$tmp/zbomb.z" "$tmp/nocfi.so" "$tmp/zbomb.so" \
    || problem="cannot make the zlib bomb library"
  echo "# keep: $(tr '\n' ' ' < "$tmp/keep"); MiniDebugInfo $(wc -c < "$tmp/mini.xz") bytes, bomb $(wc -c < "$tmp/bomb.xz") bytes"
fi

for kind in real bomb zbomb; do
  if [ -n "$problem" ]; then
    tap_not_ok "$kind: $problem"
    tap_not_ok "$kind: $problem"
    continue
  fi
  status=0
  "$EU_STACKTRACE" --stats -f folded -o "$tmp/$kind.folded" -- \
    "$WORKLOADS/dlopen" "$tmp/$kind.so" 0 1500 2> "$tmp/$kind.err" || status=$?
  grep -E 'peak RSS|samples read|refusing' "$tmp/$kind.err" | cut -c1-200 | sed 's/^/# /'
  refused=$(grep -c "$kind.so (symbols from .dynsym only): its MiniDebugInfo\|$kind.so (compressed sections not read): its compressed sections" "$tmp/$kind.err")
  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/$kind.err")
  peak=$((${peak:-999999} * 1024))
  if [ "$kind" = real ]; then
    hot=$(grep -c ';plugin_middle;plugin_hot' "$tmp/$kind.folded")
    if [ "$status" -eq 0 ] && [ "$hot" -gt 0 ] && [ "$refused" -eq 0 ]; then
      tap_ok "real: the static functions are named from the MiniDebugInfo ($hot stacks in plugin_middle;plugin_hot)"
    else
      tap_not_ok "real: named from the MiniDebugInfo: status $status, $hot stacks in plugin_middle;plugin_hot, refused $refused"
      sed 's/^/#   /' "$tmp/$kind.folded" | head -5
    fi
    if [ "$peak" -lt $LIMIT_KB ]; then
      tap_ok "real: peak RSS $((peak / 1024)) MB"
    else
      tap_not_ok "real: peak RSS ${peak} kB, over $((LIMIT_KB / 1024)) MB"
    fi
  else
    # The bomb's static functions have no name left; the zlib bomb keeps
    # its .symtab, but nothing unwinds out of its code.
    pattern=';plugin_entry'
    [ "$kind" = zbomb ] && pattern=';plugin_hot'
    entry=$(grep -c "$pattern" "$tmp/$kind.folded")
    if [ "$peak" -lt $LIMIT_KB ] && [ "$refused" -gt 0 ]; then
      tap_ok "$kind: refused (--stats says so); peak RSS $((peak / 1024)) MB, under $((LIMIT_KB / 1024)) MB"
    else
      tap_not_ok "$kind: refused and under $((LIMIT_KB / 1024)) MB: peak ${peak} kB, refused $refused"
    fi
    if [ "$status" -eq 0 ] && [ "$entry" -gt 0 ]; then
      tap_ok "$kind: still unwound and named ($entry stacks with $pattern)"
    else
      tap_not_ok "$kind: unwound and named: status $status, $entry stacks with $pattern"
      sed 's/^/#   /' "$tmp/$kind.folded" | head -5
    fi
  fi
done
tap_done
