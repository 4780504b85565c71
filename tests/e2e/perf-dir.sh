#!/bin/sh
# A perf.data directory (perf record --threads), whole, broken and planted
# with what its owner may put there: eu-stacktrace reads `-i DIR` as
# `-i DIR/data`, and as the header file reached through a symbolic link or
# standard input; a FIFO, a symbolic link or a socket named data.N is left
# out with a warning, never waited on or followed, and a FIFO named data is
# refused at once; the header of a recording that was killed (no data size,
# no feature sections) still leads to its data.N files; a file split into
# 300 (each in time order) gives the same samples in a few MB more; a data.N
# cut short or with a malformed record ends the run with status 2 and an
# error that names that file and the byte offset in it, after writing the
# samples read before it; a directory format of another version is refused.
# The sanitizer build runs the broken variants clean.
#
# Set E2E_KEEP=1 to keep the recording and the variants.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

DEMO="$TOP_BUILDDIR/demo/eu-stacktrace-demo"
VARIANT="$TOP_SRCDIR/tests/e2e/perf-dir-variant.py"

tap_plan 19
e2e_setup

problem=$(tools_problem "perf:$PERF" "python3:$PYTHON3" "eu-stacktrace:$EU_STACKTRACE" \
         "eu-stacktrace-asan:$EU_STACKTRACE_ASAN" "the demo workload:$DEMO")

# 1. The recording: 0.5 s of the demo, one file per CPU.
dir="$tmp/perf.data"
if [ -z "$problem" ] \
   && run_perf record -e cpu-clock -F 999 --threads --call-graph dwarf -o "$dir" \
        -- "$DEMO" 0.5 > "$tmp/record.out" 2> "$tmp/record.err" \
   && [ -f "$dir/data" ]; then
  tap_ok "perf record --threads writes a directory ($(cd "$dir" && echo data*))"
else
  tap_diag_file "$tmp/record.err" 20
  problem=${problem:-perf record --threads failed}
  tap_not_ok "perf record --threads writes a directory: $problem"
fi

# run NAME INPUT [EXTRA...]: eu-stacktrace -f json of INPUT, at most 60 s;
# leaves $tmp/NAME.{jsonl,err,rc}.
run ()
{
  _name=$1 _input=$2
  shift 2
  timeout 60 "${TOOL:-$EU_STACKTRACE}" -i "$_input" -f json -o "$tmp/$_name.jsonl" "$@" \
    > "$tmp/$_name.out" 2> "$tmp/$_name.err" < /dev/null
  echo $? > "$tmp/$_name.rc"
}
rc_of () { cat "$tmp/$1.rc"; }
samples_of () { wc -l < "$tmp/$1.jsonl" | tr -d ' '; }
same_as_whole () { cmp -s "$tmp/whole.jsonl" "$tmp/$1.jsonl"; }

# expect NAME STATUS SAME PATTERN DESCRIPTION: one TAP line, ok when no
# earlier step failed and run NAME ended with STATUS, wrote the same samples
# as the whole directory when SAME is "same" (else "-"), and said PATTERN (a
# grep pattern; "" for none) on its standard error.
expect ()
{
  _name=$1 _status=$2 _same=$3 _pattern=$4 _desc=$5
  if [ -z "$problem" ] && [ "$(rc_of "$_name")" = "$_status" ] \
     && { [ "$_same" != same ] || same_as_whole "$_name"; } \
     && { [ -z "$_pattern" ] || grep -q "$_pattern" "$tmp/$_name.err"; }; then
    tap_ok "$_desc"
  else
    [ -n "$problem" ] || { tap_diag "status $(rc_of "$_name") (want $_status)";
                           tap_diag_file "$tmp/$_name.err" 10; }
    tap_not_ok "$_desc${problem:+: $problem}"
  fi
}

biggest=""
if [ -z "$problem" ]; then
  # shellcheck disable=SC2012  # perf's own file names: data.N
  biggest=$(cd "$dir" && ls -S data.* | head -n 1)
  run whole "$dir" -j 1
  run header "$dir/data" -j 1
  run jobs "$dir" -j 2
fi

# 2. -i DIR, and -i DIR/data, which is the same.
if [ -z "$problem" ] && [ "$(rc_of whole)" = 0 ] && [ "$(samples_of whole)" -gt 100 ] \
   && same_as_whole header; then
  tap_ok "-i DIR reads every data.N file ($(samples_of whole) samples), as -i DIR/data does"
else
  [ -n "$problem" ] || tap_diag_file "$tmp/whole.err" 20
  tap_not_ok "-i DIR reads every data.N file, as -i DIR/data does${problem:+: $problem}"
fi

# 3. Two unwinding threads write what one does.
expect jobs 0 same "" "-j 2 writes what -j 1 does"

# variant NAME: a copy of the recording to break.
variant ()
{
  rm -rf "${tmp:?}/$1"
  cp -r "$dir" "$tmp/$1"
}

# 4. A FIFO named data.7: nobody writes it, and the run must not wait.
if [ -z "$problem" ]; then
  variant fifo
  mkfifo "$tmp/fifo/data.7"
  run fifo "$tmp/fifo" -j 1
fi
expect fifo 0 same "data.7: not a regular file: left out" \
  "a FIFO named data.7 is left out with a warning, not waited on"

# 5. A symbolic link named data.8 to a file of the recording: followed, it
# would count that file's samples twice.
if [ -z "$problem" ]; then
  variant link
  ln -s "$biggest" "$tmp/link/data.8"
  run link "$tmp/link" -j 1
fi
expect link 0 same "data.8: a symbolic link, not a file perf record wrote: left out" \
  "a symbolic link named data.8 is left out with a warning, not followed"

# 6. The largest data.N cut in the middle of a record.
if [ -z "$problem" ]; then
  variant cut
  size=$(wc -c < "$dir/$biggest")
  head -c $((size / 2 + 3)) "$dir/$biggest" > "$tmp/cut/$biggest"
  run cut "$tmp/cut"
fi
if [ -z "$problem" ] && [ "$(rc_of cut)" = 2 ] \
   && grep -q "cut/$biggest: byte offset [0-9]*: " "$tmp/cut.err" \
   && [ "$(samples_of cut)" -gt 10 ]; then
  tap_ok "$biggest cut short: status 2, the error names it, $(samples_of cut) samples written before"
else
  [ -n "$problem" ] || { tap_diag "status $(rc_of cut), $(samples_of cut) samples"; tap_diag_file "$tmp/cut.err" 10; }
  tap_not_ok "$biggest cut short: status 2, the error names it, samples written${problem:+: $problem}"
fi

# 7. A record of that file whose size is smaller than a record header.
if [ -z "$problem" ]; then
  variant size
  offset=$("$PYTHON3" "$VARIANT" bad-size "$tmp/size/$biggest")
  run size "$tmp/size"
fi
expect size 2 - "size/$biggest: byte offset ${offset:-?}: record of type [0-9]* has size 4" \
  "a record of $biggest smaller than its header: status 2, its file and offset named"

# 8. A directory format of version 2, which this build does not know.
if [ -z "$problem" ]; then
  variant version
  "$PYTHON3" "$VARIANT" dir-version "$tmp/version/data" 2
  run version "$tmp/version"
fi
expect version 2 - \
  "a perf.data directory of version 2 (HEADER_DIR_FORMAT); this build reads version 1" \
  "HEADER_DIR_FORMAT version 2 is refused with status 2"

# 9. The header file on standard input: its data.N files are those beside
# the file the shell opened.
if [ -z "$problem" ]; then
  timeout 60 "$EU_STACKTRACE" -j 1 -f json -o "$tmp/stdin.jsonl" < "$dir/data" \
    > "$tmp/stdin.out" 2> "$tmp/stdin.err"
  echo $? > "$tmp/stdin.rc"
fi
expect stdin 0 same "" "the header file on standard input leads to its data.N files"

# 10. The header file through a symbolic link elsewhere: the same.
if [ -z "$problem" ]; then
  mkdir "$tmp/elsewhere"
  ln -s "$dir/data" "$tmp/elsewhere/header"
  run linked "$tmp/elsewhere/header" -j 1
fi
expect linked 0 same "" \
  "the header file through a symbolic link elsewhere leads to its data.N files"

# 11. A socket named data.9: left out like the FIFO, not an error.
if [ -z "$problem" ]; then
  variant socket
  "$PYTHON3" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
    "$tmp/socket/data.9"
  run socket "$tmp/socket" -j 1
fi
expect socket 0 same "data.9: not a regular file: left out" \
  "a socket named data.9 is left out with a warning"

# 12. A FIFO named data, in place of the header: refused at once.
if [ -z "$problem" ]; then
  mkdir "$tmp/fifo-header"
  mkfifo "$tmp/fifo-header/data"
  run fifo-header "$tmp/fifo-header"
fi
expect fifo-header 1 - "fifo-header/data: not a regular file, so not the header" \
  "a FIFO named data is refused at once, not waited on"

# 13. The header as a killed perf record leaves it: data size 0, and the
# feature sections, the directory format's version with them, not written.
if [ -z "$problem" ]; then
  variant killed
  "$PYTHON3" "$VARIANT" killed "$tmp/killed/data"
  run killed "$tmp/killed" -j 1
fi
expect killed 0 same "reading them as version 1" \
  "a killed recording's header still leads to its data.N files, with a warning"

# 14. The largest data.N split into 300 files: the same samples in the same
# order, and each file's buffer costs only what is read into it.
if [ -z "$problem" ]; then
  variant split
  "$PYTHON3" "$VARIANT" split "$tmp/split" 300
  whole_rss=$("$PYTHON3" "$VARIANT" maxrss "$EU_STACKTRACE" -j 1 -i "$dir" -f json -o /dev/null)
  split_rss=$("$PYTHON3" "$VARIANT" maxrss "$EU_STACKTRACE" -j 1 -i "$tmp/split" -f json \
                -o "$tmp/split.jsonl" 2> "$tmp/split.err")
  echo $? > "$tmp/split.rc"
fi
if [ -z "$problem" ] && [ "$(rc_of split)" = 0 ] && same_as_whole split \
   && [ "$split_rss" -le $((whole_rss + 16384)) ]; then
  tap_ok "300 data.N files: the same samples, peak RSS $split_rss KB against $whole_rss KB"
else
  [ -n "$problem" ] || { tap_diag "peak RSS ${split_rss:-?} KB against ${whole_rss:-?} KB"; tap_diag_file "$tmp/split.err" 10; }
  tap_not_ok "300 data.N files: the same samples, peak RSS within 16 MB${problem:+: $problem}"
fi

# 15-19. The sanitizer build on the whole directory and the broken ones:
# the same status and output as the plain build, and no report.
for name in whole fifo cut size split; do
  if [ -n "$problem" ]; then
    tap_not_ok "sanitizer build on the $name variant: not run ($problem)"
    continue
  fi
  input="$tmp/$name"
  [ "$name" = whole ] && input="$dir"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TOOL=$EU_STACKTRACE_ASAN run "asan-$name" "$input" -j 1
  if grep -q -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' -e 'runtime error:' \
       "$tmp/asan-$name.err"; then
    tap_diag_file "$tmp/asan-$name.err" 40
    tap_not_ok "sanitizer build on the $name variant: a sanitizer report"
  elif [ "$(rc_of "asan-$name")" != "$(rc_of "$name")" ] \
       || ! cmp -s "$tmp/$name.jsonl" "$tmp/asan-$name.jsonl"; then
    tap_diag "status $(rc_of "asan-$name") against $(rc_of "$name")"
    tap_not_ok "sanitizer build on the $name variant: not what the plain build did"
  else
    tap_ok "sanitizer build on the $name variant: clean, status $(rc_of "$name"), the same samples"
  fi
done

tap_done
