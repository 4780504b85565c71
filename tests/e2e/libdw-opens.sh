#!/bin/sh
# Files that libdw 0.188 would open by itself, by a name a program's own
# DWARF gives, under `eu-stacktrace --inline` (core/resolve/dwarf-alt.h).
#
# tests/e2e/dwarf-alt/inl.c is built with gcc -S -g, and every DW_FORM_strp
# of its DWARF made DW_FORM_GNU_strp_alt (dwz's form for a string of the
# dwz file), with a .gnu_debugaltlink naming that file.  The inlined
# function's name is then read from the dwz file.  When eu-stacktrace's own
# search finds none, libdw's dwarf_getalt open()s the link's name itself:
# blocking, retried on EINTR.  The build before never ended (a FIFO there:
# not on SIGTERM either) and read a crafted ELF file there with none of the
# header checks (a sparse one counting a million sections: 330 MB).
#
#  fifo-absolute, fifo-relative: the link names a FIFO (by its absolute
#     path, and beside the program): the run ends, the FIFO is named as
#     refused, the inlined frame is still there (unnamed);
#  bomb: the link names a sparse ELF file counting 1,000,000 sections:
#     peak RSS under 64 MB;
#  dwz-relative, dwz-absolute: the link names a real dwz file (the
#     program's .debug_str, a .debug_line and the build-id the link asks
#     for): the inlined function is named from it, beside the program and
#     by an absolute name (Debian's /usr/lib/debug/.dwz/ layout);
#  nested: the dwz file found names a FIFO as its own dwz file, and the
#     inlined function's name is read through it (DW_AT_specification by
#     DW_FORM_GNU_ref_alt, then an alt string in the dwz file): libdwfl
#     sets no dwz file of a dwz file, and libdw looked for it (review of
#     the first version of this fix);
#  crc0: fifo-absolute's program with a .gnu_debuglink of the same name
#     and CRC 0, so that libdwfl's request for the dwz file reads like one
#     for the program's own debug file (review);
#  dwo-fifo: split DWARF (-gsplit-dwarf), its .dwo replaced by a FIFO:
#     libdw opens a .dwo only from calls eu-stacktrace does not make; the
#     run ends.
# Needs gcc (its -dA comments name each form) and objcopy.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
LIMIT_KB=$((64 * 1024))
LOOPS=400000
ALT_ID="0x11,0x22,0x33,0x44,0x55,0x66,0x77,0x88,0x99,0xaa,0xbb,0xcc,0xdd,0xee,0xff,0x10,0x20,0x30,0x40,0x50"

tap_plan 10
e2e_setup
src="$TOP_SRCDIR/tests/e2e/dwarf-alt/inl.c"
problem=$(tools_problem gcc:gcc objcopy:objcopy python3:"$PYTHON3")

# altlink_program DIR NAME [ID [OUT]]: DIR/OUT (default inl), its names
# read through a dwz file called NAME, of build-id ID (.byte operands;
# default ALT_ID).
altlink_program () {
  sed 's/\.uleb128 0xe\([[:space:]]*\)# (DW_FORM_strp)/.uleb128 0x1f21\1# (DW_FORM_GNU_strp_alt)/' \
    "$tmp/inl.s" > "$1/inl.s" \
    && printf '\t.section .gnu_debugaltlink,"",@progbits\n\t.string "%s"\n\t.byte %s\n' \
         "$2" "${3:-$ALT_ID}" >> "$1/inl.s" \
    && gcc -o "$1/${4:-inl}" "$1/inl.s"
}

# nested_program DIR: altlink_program's, whose inlined function's
# abstract DIE has, for its name, a DW_AT_specification (DW_FORM_GNU_ref_alt)
# of the DIE at 0xd of the dwz file DIR/the-dwz-file; that file (made here
# by hand: one DWARF 5 unit, that DIE a subprogram named by an alt string)
# has a .gnu_debugaltlink of its own, naming the FIFO DIR/fifo.
nested_program () {
  altlink_program "$1" the-dwz-file || return 1
  code=$(awk '/DW_AT_name: "mix_the_values"/ { print prev; exit } { prev = $0 }' "$1/inl.s" \
           | sed -n 's/^[[:space:]]*\.uleb128 \(0x[0-9a-f]*\)[[:space:]]*# (DIE .*DW_TAG_subprogram.*/\1/p')
  [ -n "$code" ] \
    && [ "$(grep -c "\.uleb128 ${code}[[:space:]]*# (DIE " "$1/inl.s")" -eq 1 ] || return 1
  awk -v code="$code" '
    /DW_AT_name: "mix_the_values"/ { sub(/\.LASF[0-9]+/, "0xd") }
    $0 ~ "\\.uleb128 " code "[[:space:]]*# \\(abbrev code\\)" { in_abbrev = 1 }
    in_abbrev && /# \(DW_AT_name\)/ {
      sub(/0x3/, "0x47"); sub(/DW_AT_name/, "DW_AT_specification"); form = 1; print; next }
    form { sub(/0x1f21/, "0x1f20"); sub(/DW_FORM_GNU_strp_alt/, "DW_FORM_GNU_ref_alt")
           form = 0; in_abbrev = 0 }
    { print }' "$1/inl.s" > "$1/nested.s" \
    && grep -q 'DW_FORM_GNU_ref_alt' "$1/nested.s" \
    && gcc -o "$1/inl" "$1/nested.s" || return 1
  cat > "$1/dwz.s" <<EOF
	.section .note.gnu.build-id,"a",@note
	.long 4, 20, 3
	.string "GNU"
	.byte $ALT_ID
	.section .debug_abbrev,"",@progbits
	.uleb128 1, 0x11
	.byte 1, 0, 0
	.uleb128 2, 0x2e
	.byte 0
	.uleb128 0x3, 0x1f21
	.byte 0, 0, 0
	.section .debug_info,"",@progbits
	.long .Lend - .Lstart
.Lstart:
	.value 5
	.byte 1, 8
	.long 0
	.uleb128 1, 2
	.long 0
	.byte 0
.Lend:
	.section .debug_line,"",@progbits
	.long 0
	.section .gnu_debugaltlink,"",@progbits
	.string "$1/fifo"
	.byte 0xde, 0xad, 0xbe, 0xef
EOF
  gcc -c -o "$1/the-dwz-file" "$1/dwz.s" && mkfifo "$1/fifo"
}

if [ -z "$problem" ]; then
  gcc -O2 -g -S -dA -o "$tmp/inl.s" "$src" || problem="gcc -S failed"
fi
if [ -z "$problem" ]; then
  forms=$(grep -c '\.uleb128 0xe[[:space:]]*# (DW_FORM_strp)' "$tmp/inl.s")
  [ "$forms" -gt 0 ] || problem="gcc -dA wrote no DW_FORM_strp comment to rewrite"
fi
if [ -z "$problem" ]; then
  for c in fifo-absolute fifo-relative bomb dwz-relative dwz-absolute nested crc0 dwo-fifo; do
    mkdir "$tmp/$c" || problem="mkdir"
  done
  altlink_program "$tmp/fifo-absolute" "$tmp/fifo-absolute/the-dwz-file" \
    && mkfifo "$tmp/fifo-absolute/the-dwz-file" \
    && altlink_program "$tmp/fifo-relative" the-dwz-file \
    && mkfifo "$tmp/fifo-relative/the-dwz-file" \
    && altlink_program "$tmp/bomb" "$tmp/bomb/the-dwz-file" \
    && altlink_program "$tmp/dwz-relative" the-dwz-file \
    && altlink_program "$tmp/dwz-absolute" "$tmp/dwz-absolute/elsewhere/the-dwz-file" \
    && nested_program "$tmp/nested" \
    && altlink_program "$tmp/crc0" "$tmp/crc0/the-dwz-file" "$ALT_ID" plain \
    && mkfifo "$tmp/crc0/the-dwz-file" \
    && name="$tmp/crc0/the-dwz-file" \
    && { printf '%s' "$name"; printf '\0\0\0\0\0\0\0\0'; } \
         | head -c $(( (${#name} + 4) / 4 * 4 + 4 )) > "$tmp/crc0/debuglink" \
    && objcopy --add-section .gnu_debuglink="$tmp/crc0/debuglink" "$tmp/crc0/plain" "$tmp/crc0/inl" \
    || problem="cannot build the programs"
  # The bomb: ELF64, e_shnum 0 and section 0's sh_size a million (the
  # extended count), sparse: 64 MB long, a few KB on disk.
  "$PYTHON3" -c '
import struct, sys
count, shoff = 1000000, 4096
h = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
h += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 0, 0)
with open(sys.argv[1], "wb") as f:
    f.write(h)
    f.seek(shoff)
    f.write(struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, count, 0, 0, 0, 0))
    f.truncate(shoff + count * 64)' "$tmp/bomb/the-dwz-file" || problem="cannot make the bomb"
  # The dwz file: the linked program's .debug_str (the offsets its
  # DW_FORM_GNU_strp_alt give), a .debug_line (libdw opens no Dwarf
  # without one of .debug_info, .debug_line, .debug_frame) and the
  # build-id the link names.
  printf '\t.section .note.gnu.build-id,"a",@note\n\t.long 4, 20, 3\n\t.string "GNU"\n\t.byte %s\n\t.section .debug_line,"",@progbits\n\t.long 0\n' \
    "$ALT_ID" > "$tmp/dwz.s"
  mkdir -p "$tmp/dwz-absolute/elsewhere"
  gcc -c -o "$tmp/dwz.o" "$tmp/dwz.s" \
    && objcopy --dump-section .debug_str="$tmp/debug_str" "$tmp/dwz-relative/inl" \
    && objcopy --add-section .debug_str="$tmp/debug_str" "$tmp/dwz.o" "$tmp/dwz-relative/the-dwz-file" \
    && cp "$tmp/dwz-relative/the-dwz-file" "$tmp/dwz-absolute/elsewhere/the-dwz-file" \
    || problem="cannot make the dwz file"
  gcc -O2 -g -gsplit-dwarf -gdwarf-5 -c -o "$tmp/dwo-fifo/inl.o" "$src" \
    && (cd "$tmp/dwo-fifo" && gcc -o inl inl.o) \
    && rm -f "$tmp/dwo-fifo/inl.dwo" && mkfifo "$tmp/dwo-fifo/inl.dwo" \
    || problem="cannot build the split DWARF program"
fi

# run CASE: eu-stacktrace --inline on CASE's program; sets status (137:
# killed after 120 s, the build before's hang), stacks (samples in
# spin_outer_loop), named (in mix_the_values, inlined), peak (kB).
run () {
  status=0
  timeout -s KILL 120 "$EU_STACKTRACE" --inline --stats -f folded -o "$tmp/$1.folded" -- \
    "$tmp/$1/inl" $LOOPS 2> "$tmp/$1.err" || status=$?
  grep -E 'refusing|peak RSS' "$tmp/$1.err" | cut -c1-200 | sed 's/^/# /'
  touch "$tmp/$1.folded"
  stacks=$(awk '/;spin_outer_loop/ { n += $NF } END { print n + 0 }' "$tmp/$1.folded")
  named=$(awk '/;spin_outer_loop;mix_the_values_\[i\] / { n += $NF } END { print n + 0 }' \
            "$tmp/$1.folded")
  peak=$(sed -n 's/^profiler peak RSS: \([0-9]*\)\..*/\1/p' "$tmp/$1.err")
  peak=$((${peak:-999999} * 1024))
}

for c in fifo-absolute fifo-relative; do
  if [ -n "$problem" ]; then
    tap_not_ok "$c: $problem"
    continue
  fi
  run "$c"
  refused=$(grep -c "refusing untrusted file .*/$c/the-dwz-file: not a regular file" "$tmp/$c.err")
  if [ "$status" -eq 0 ] && [ "$stacks" -gt 0 ] && [ "$refused" -gt 0 ]; then
    tap_ok "$c: a FIFO named as the dwz file: the run ends, the FIFO is refused, $stacks samples in spin_outer_loop"
  else
    tap_not_ok "$c: status $status (137: hung, killed), $stacks samples in spin_outer_loop, refused $refused"
    tap_diag_file "$tmp/$c.err" 10
  fi
done

if [ -n "$problem" ]; then
  tap_not_ok "bomb: $problem"
else
  run bomb
  if [ "$status" -eq 0 ] && [ "$stacks" -gt 0 ] && [ "$peak" -lt $LIMIT_KB ]; then
    tap_ok "bomb: a million sections named as the dwz file: peak RSS $((peak / 1024)) MB, $stacks samples"
  else
    tap_not_ok "bomb: status $status, peak ${peak} kB (bound $LIMIT_KB), $stacks samples"
    tap_diag_file "$tmp/bomb.err" 10
  fi
fi

for c in dwz-relative dwz-absolute; do
  if [ -n "$problem" ]; then
    tap_not_ok "$c: $problem"
    continue
  fi
  run "$c"
  if [ "$status" -eq 0 ] && [ "$named" -gt 0 ] && [ "$named" -ge $((stacks / 2)) ]; then
    tap_ok "$c: the inlined function is named from the dwz file ($named of $stacks samples in spin_outer_loop)"
  else
    tap_not_ok "$c: status $status, $named of $stacks samples in spin_outer_loop;mix_the_values_[i]"
    tap_diag_file "$tmp/$c.err" 10
    sed 's/^/#   /' "$tmp/$c.folded" | head -5
  fi
done

for c in nested crc0; do
  if [ -n "$problem" ]; then
    tap_not_ok "$c: $problem"
    continue
  fi
  run "$c"
  if [ "$status" -eq 0 ] && [ "$stacks" -gt 0 ]; then
    tap_ok "$c: the run ends ($stacks samples in spin_outer_loop)"
  else
    tap_not_ok "$c: status $status (137: hung, killed), $stacks samples in spin_outer_loop"
    tap_diag_file "$tmp/$c.err" 10
  fi
done

if [ -n "$problem" ]; then
  tap_not_ok "dwo-fifo: $problem"
else
  run dwo-fifo
  if [ "$status" -eq 0 ] && [ "$stacks" -gt 0 ]; then
    tap_ok "dwo-fifo: a FIFO as the split DWARF file: the run ends, $stacks samples in spin_outer_loop"
  else
    tap_not_ok "dwo-fifo: status $status (137: hung, killed), $stacks samples in spin_outer_loop"
    tap_diag_file "$tmp/dwo-fifo.err" 10
  fi
fi

# A dwz file someone else may write (here nobody's) is read from a copy
# (basic/frozen-copy.h), made once for all the processes that map the
# program: three in turn, one copy, the inlined function named from it.
if [ -n "$problem" ]; then
  tap_not_ok "dwz-nobody: $problem"
else
  cp -a "$tmp/dwz-relative" "$tmp/dwz-nobody" && chown 65534 "$tmp/dwz-nobody/the-dwz-file"
  status=0
  # shellcheck disable=SC2016  # $0 and $1 are sh -c's
  timeout -s KILL 120 "$EU_STACKTRACE" -j 1 -vv --inline -f folded -o "$tmp/dwz-nobody.folded" -- \
    sh -c '"$0" "$1" && "$0" "$1" && "$0" "$1"' "$tmp/dwz-nobody/inl" $LOOPS \
    2> "$tmp/dwz-nobody.err" || status=$?
  named=$(awk '/;spin_outer_loop;mix_the_values_\[i\] / { n += $NF } END { print n + 0 }' \
            "$tmp/dwz-nobody.folded")
  stacks=$(awk '/;spin_outer_loop/ { n += $NF } END { print n + 0 }' "$tmp/dwz-nobody.folded")
  copies=$(grep -c 'dwz-nobody/the-dwz-file: others may write it: libdwfl reads a copy' \
             "$tmp/dwz-nobody.err")
  if [ "$status" -eq 0 ] && [ "$copies" -eq 1 ] && [ "$named" -gt 0 ] \
     && [ "$named" -ge $((stacks / 2)) ]; then
    tap_ok "dwz-nobody: one copy of the dwz file for three processes, $named of $stacks samples named from it"
  else
    tap_not_ok "dwz-nobody: status $status, $copies copies, $named of $stacks samples named"
    grep 'dwz\|refus\|warning' "$tmp/dwz-nobody.err" > "$tmp/dwz-nobody.said"
    tap_diag_file "$tmp/dwz-nobody.said" 10
  fi
fi

# The stand-in leaves the inlined frame unnamed, not lost.
if [ -n "$problem" ]; then
  tap_not_ok "unnamed: $problem"
else
  inlined=$(grep -c ';spin_outer_loop;[^;]*_\[i\] ' "$tmp/fifo-absolute.folded")
  if [ "$inlined" -gt 0 ]; then
    tap_ok "fifo-absolute: the inlined frame is kept without its name ($inlined stacks)"
  else
    tap_not_ok "fifo-absolute: no inlined frame below spin_outer_loop"
    sed 's/^/#   /' "$tmp/fifo-absolute.folded" | head -5
  fi
fi
