#!/bin/sh
# Cross-architecture unwinding against gdb: for each architecture, the
# workload runs under qemu-user, gdb-multiarch stops it at >= 300 points
# (arch-lib.sh), the stops become a perf.data of that architecture, and
# eu-stacktrace unwinds it with --sysroot=/usr/<triplet> on this x86_64
# machine.  gdb's backtrace at each stop is the oracle: where gdb reaches
# main, our function names, innermost first, must equal its names in at
# least 99% of the stops.  One row per architecture.
#
# Run as tests/arch/<arch>.sh (a link to this script) it checks that
# architecture alone: make check runs one test per architecture, ~15-45 s
# each on a loaded 2-core machine.
#
# tests/arch/arm-exidx.sh is arm with a workload whose only unwind tables
# are .ARM.exidx (-g0 -funwind-tables, like Debian's armhf libc), so that
# every frame is stepped by src/core/unwind/arm-exidx.c.  Its floor is 95%:
# those tables describe a function's body, not its prologue, and gdb stops
# the workload inside prologues (before a push) that a profile seldom
# samples; gdb reads the prologue's instructions there, we do not.
floor=99
case "$(basename "$0" .sh)" in
  arch) ;;
  arm-exidx) ARCHES=arm ARCH_CFLAGS="-g0 -funwind-tables" floor=95 row=arm-exidx ;;
  *) ARCHES=$(basename "$0" .sh) ;;
esac
# shellcheck source=tests/tap.sh
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
# shellcheck source=tests/arch/arch-lib.sh
. "$(dirname "$0")/arch-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-arch.XXXXXX") || exit 1
[ -n "$ARCH_KEEP" ] || trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086  # split on purpose: one result per architecture
tap_plan "$(echo $ARCHES | wc -w)"
echo "# arch      stops  counted  equal    rate  files-from-sysroot  seconds  qemu-trampoline"
for a in $ARCHES; do
  start=$(date +%s)
  if ! arch_record "$a" "$tmp/$a"; then
    tap_not_ok "$a: no recording: $(cat "$tmp/$a/why" 2>/dev/null)"
    continue
  fi
  arch_params "$a"
  root_opt=--sysroot=$sysroot
  [ "$a" = x86_64 ] && root_opt=
  if ! "$EU_STACKTRACE" -f json -i "$tmp/$a/perf.data" -o "$tmp/$a/ours.json" -s ${root_opt:+"$root_opt"} \
       2>"$tmp/$a/stats"; then
    tap_not_ok "$a: eu-stacktrace failed"
    sed 's/^/#   /' "$tmp/$a/stats"
    continue
  fi
  "$PYTHON3" "$ARCH_DIR/arch-check.py" compare --stops "$tmp/$a/stops.jsonl" \
    --ours "$tmp/$a/ours.json" --maps "$tmp/$a/maps.txt" >"$tmp/$a/compare"
  result=$(grep '^RESULT' "$tmp/$a/compare")
  stops=$(echo "$result" | sed -n 's/.*stops=\([0-9]*\).*/\1/p')
  counted=$(echo "$result" | sed -n 's/.*counted=\([0-9]*\).*/\1/p')
  equal=$(echo "$result" | sed -n 's/.*equal=\([0-9]*\).*/\1/p')
  rate=$(echo "$result" | sed -n 's/.*rate=\([0-9.]*\).*/\1/p')
  tramp=$(echo "$result" | sed -n 's/.*trampoline=\([0-9]*\).*/\1/p')
  from_root=$(sed -n 's/^  sysroot  *\([0-9]*\)$/\1/p' "$tmp/$a/stats")
  arch_seen=$(sed -n 's/^architecture unwound: //p' "$tmp/$a/stats")
  printf '# %-9s %5s  %7s  %5s  %6s  %18s  %7s  %15s\n' "${row:-$a}" "$stops" "$counted" "$equal" \
    "$rate" "${from_root:-0}" $(( $(date +%s) - start )) "$tramp"
  if [ -n "$counted" ] && [ "$stops" -ge 300 ] && [ "$counted" -ge 300 ] &&
     [ $((equal * 100)) -ge $((counted * floor)) ]; then
    tap_ok "$a ($arch_seen${ARCH_CFLAGS:+, $ARCH_CFLAGS}): $equal of $counted stops equal gdb's backtrace ($rate% >= $floor%)"
  else
    tap_not_ok "$a ($arch_seen${ARCH_CFLAGS:+, $ARCH_CFLAGS}): $equal of $counted stops equal gdb's backtrace ($rate% < $floor%)"
    grep -v '^RESULT' "$tmp/$a/compare" | head -n 12
  fi
done
tap_done
