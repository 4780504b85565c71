#!/bin/sh
# The one-way house: every #include in src/ runs down the table of layers
# below (or stays in its own folder, or reaches a sibling of its layer),
# never up, so that a folder can be read, tested and changed knowing only
# what lies under it.  Prints TAP: one test per layer group, and a "not ok" line
# names each include that runs the wrong way (file, line and header).
#
#   0  src/basic
#   1  src/container  src/debuginfod  src/ns-helper
#   2  src/core/resolve
#   3  src/core/unwind
#   4  src/core/input  src/core/output
#   5  src/core/session.[ch]  src/core/session-*.[ch]
#   6  src/core/main.c  src/core/options.[ch]
#
# src/core/event.h, the event model every core folder shares, may be
# included from any folder of src/core/; it includes only src/basic.
# A header generated in the build tree (profile.pb-c.h) belongs to the
# folder it is generated in.
set -u

top=${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1

# The group (a name that tells siblings apart) and the rank of a path
# under src/; "?" for a file the table does not place.
place ()
{
  case $1 in
    src/basic/*) echo "basic 0" ;;
    src/container/*) echo "container 1" ;;
    src/debuginfod/*) echo "debuginfod 1" ;;
    src/ns-helper/*) echo "ns-helper 1" ;;
    src/core/resolve/*) echo "resolve 2" ;;
    src/core/unwind/*) echo "unwind 3" ;;
    src/core/input/*) echo "input 4" ;;
    src/core/output/*) echo "output 4" ;;
    src/core/session.[ch] | src/core/session-*.[ch]) echo "session 5" ;;
    src/core/main.c | src/core/options.[ch]) echo "main 6" ;;
    src/core/event.h) echo "event E" ;;
    *) echo "? ?" ;;
  esac
}

n=0
failed=0
for group in basic container debuginfod ns-helper resolve unwind input output session main event; do
  n=$((n + 1))
  bad=$(
    find src -name '*.[ch]' | LC_ALL=C sort | while read -r file; do
      read -r from_group from_rank <<EOF
$(place "$file")
EOF
      [ "$from_group" = "$group" ] || continue
      dir=$(dirname "$file")
      grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
        while IFS= read -r hit; do
          line=${hit%%:*}
          header=$(printf '%s\n' "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
          case $header in
            config.h) continue ;;
            src/*) target=$header ;;
            */*) target=src/$header ;;
            *) target=$dir/$header ;;
          esac
          read -r to_group to_rank <<EOF
$(place "$target")
EOF
          why=
          if [ "$to_group" = "?" ]; then
            why="a header outside the table of layers"
          elif [ "$to_group" = "$from_group" ]; then
            continue
          elif [ "$to_group" = event ]; then
            case $file in
              src/core/*) continue ;;
              *) why="core/event.h is for the folders of src/core/" ;;
            esac
          elif [ "$from_group" = event ]; then
            [ "$to_group" = basic ] && continue
            why="core/event.h includes only src/basic"
          elif [ "$to_rank" -gt "$from_rank" ]; then
            why="runs upward ($from_group, layer $from_rank, includes $to_group, layer $to_rank)"
          else
            continue
          fi
          printf '%s:%s: #include "%s": %s\n' "$file" "$line" "$header" "$why"
        done
    done
  )
  if [ -z "$bad" ]; then
    echo "ok $n - includes from $group run only downward"
  else
    failed=$((failed + 1))
    echo "not ok $n - includes from $group run only downward"
    printf '%s\n' "$bad" | sed 's/^/# /'
  fi
done
# Sinks know nothing of libdwfl: of the unwinder they see its result
# (callchain.h) and plain tables (regs.h), headers that include no
# elfutils header and no other header of the unwinder, so that an output
# format is written and tested without libdw.
n=$((n + 1))
elfutils='^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(elfutils/\|libelf\|gelf\|dwarf\)'
dwfl=$(
  grep -Hn "$elfutils" src/core/output/*.[ch] src/core/event.h src/container/label.h
  grep -h '^[[:space:]]*#[[:space:]]*include[[:space:]]*"core/unwind/' src/core/output/*.[ch] |
    sed 's/^[^"]*"\([^"]*\)".*/src\/\1/' | LC_ALL=C sort -u |
    while read -r header; do
      grep -Hn "$elfutils" "$header"
      grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"core/unwind/' "$header" |
        grep -v '"core/unwind/callchain.h"'
    done
)
if [ -z "$dwfl" ]; then
  echo "ok $n - sinks compile without libdwfl"
else
  echo "not ok $n - sinks compile without libdwfl"
  printf '%s\n' "$dwfl" | sed 's/^/# /'
fi
# A folder of src/ that the table does not place is a layer nobody chose.
n=$((n + 1))
unplaced=$(find src -name '*.[ch]' | LC_ALL=C sort | while read -r file; do
  read -r g _ <<EOF
$(place "$file")
EOF
  [ "$g" = "?" ] && echo "$file"
done)
if [ -z "$unplaced" ]; then
  echo "ok $n - every source file of src/ has a layer"
else
  echo "not ok $n - every source file of src/ has a layer"
  printf '%s\n' "$unplaced" | sed 's/^/# not in the table: /'
fi
echo "1..$n"
