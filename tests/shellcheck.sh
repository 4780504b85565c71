#!/bin/sh
# Runs shellcheck on every shell script of tests/, bench/ and tools/, and .ci/run:
# one TAP line per script, not ok on any finding, at every level (style
# notes included).  A check that does not apply to a line is disabled on
# that line with a comment that says why, never here.
#
# Runs from the top of the source tree, where the scripts' `# shellcheck
# source=' directives point.  shellcheck comes from tools/install-deps.sh;
# without it the test fails, it does not skip.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}/tests/tap.sh"
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SHELLCHECK:=shellcheck}"
cd "$TOP_SRCDIR" || tap_bail "cannot cd to $TOP_SRCDIR"

scripts=$( { find tests bench tools -name '*.sh' -type f; echo .ci/run; } | LC_ALL=C sort)
n=$(echo "$scripts" | wc -l)
tap_plan $((n + 1))

if version=$("$SHELLCHECK" --version 2>&1); then
  tap_ok "shellcheck runs: $(echo "$version" | sed -n 's/^version: //p')"
  problem=""
else
  problem="$SHELLCHECK does not run (sh tools/install-deps.sh installs it)"
  tap_not_ok "shellcheck runs: $problem"
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/eu-stacktrace-shellcheck.XXXXXX") || tap_bail "cannot create a temporary file"
trap 'rm -f "$tmp"' EXIT
for f in $scripts; do
  if [ -n "$problem" ]; then
    tap_not_ok "$f: not checked ($problem)"
  elif "$SHELLCHECK" -x -f gcc "$f" > "$tmp" 2>&1; then
    tap_ok "$f: no shellcheck finding"
  else
    tap_diag_file "$tmp" 40
    tap_not_ok "$f: $(grep -c . "$tmp") shellcheck findings"
  fi
done
tap_done
