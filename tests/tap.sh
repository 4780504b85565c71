# shellcheck shell=sh
# The one TAP library of the shell tests; POSIX sh, sourced:
#   . "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/tap.sh"
#
# automake's tap-driver.sh reads what a test prints: a plan ("1..N"), one
# "ok N - what" or "not ok N - what" per check, "# ..." diagnostics.  The
# numbers are counted here, so a test never writes one by hand.
#
#   tap_plan N              the plan; once, before or after the results
#   tap_ok DESCRIPTION      a check that passed
#   tap_not_ok DESCRIPTION  a check that failed
#   tap_result STATUS DESCRIPTION [FILE]  ok when STATUS is 0, else not ok
#                           and FILE's last 15 lines as diagnostics
#   tap_skip DESCRIPTION REASON     a check the harness cannot run here (a
#                           missing privilege, not a missing package): the
#                           driver counts it as SKIP, never as a pass, and CI
#                           fails on any skip
#   tap_skip_all REASON     "1..0 # SKIP": the whole test cannot run here;
#                           exits
#   tap_diag TEXT...        one diagnostic line
#   tap_diag_file FILE [MAX_LINES]  a file's first lines (40) as diagnostics
#   tap_counted N [FAILED]  N results that another program printed (a
#                           python checker told where to start numbering
#                           with $((tap_n + 1))); FAILED non-zero: one of
#                           them failed
#   tap_relay < FILE        the results another program printed (numbered
#                           or not; its plan dropped), renumbered as ours;
#                           other lines as diagnostics
#   tap_fill DESCRIPTION    "not ok" up to the plan, for checks that cannot
#                           run after an earlier failure
#   tap_bail REASON         "Bail out!": the test cannot go on; exits
#   tap_done                the summary; checks the count against the plan
#                           (a mismatch is an error: exit 99), exits 0:
#                           the verdict is in the "ok"/"not ok" lines, and a
#                           non-zero status would count one more ERROR
#
# tap_n is the number of results so far, tap_failed is 1 once one failed.

tap_n=0
tap_failed=0
tap_skipped=0
tap_planned=""

tap_plan ()
{
  tap_planned=$1
  echo "1..$1"
}

tap_ok ()
{
  tap_n=$((tap_n + 1))
  echo "ok $tap_n - $*"
}

tap_not_ok ()
{
  tap_n=$((tap_n + 1))
  tap_failed=1
  echo "not ok $tap_n - $*"
}

tap_result ()
{
  if [ "$1" -eq 0 ]; then
    tap_ok "$2"
  else
    tap_not_ok "$2"
    [ -z "${3:-}" ] || [ ! -s "$3" ] || tail -n 15 "$3" | sed 's/^/#   /'
  fi
}

tap_skip ()
{
  tap_n=$((tap_n + 1))
  tap_skipped=$((tap_skipped + 1))
  echo "ok $tap_n - $1 # SKIP ${2:-}"
}

tap_skip_all ()
{
  echo "1..0 # SKIP $*"
  exit 0
}

tap_diag ()
{
  echo "# $*"
}

tap_diag_file ()
{
  [ -s "$1" ] || return 0
  head -n "${2:-40}" "$1" | sed 's/^/#   /'
}

tap_counted ()
{
  tap_n=$((tap_n + $1))
  [ "${2:-0}" -eq 0 ] || tap_failed=1
}

tap_relay ()
{
  while IFS= read -r _tap_line; do
    # shellcheck disable=SC2001  # a regular expression, not a fixed string
    case $_tap_line in
      "ok" | "ok "*)
        tap_ok "$(echo "${_tap_line#ok}" | sed 's/^ *[0-9]* *-\{0,1\} *//')" ;;
      "not ok" | "not ok "*)
        tap_not_ok "$(echo "${_tap_line#not ok}" | sed 's/^ *[0-9]* *-\{0,1\} *//')" ;;
      "1.."*) ;;
      "#"*) printf '%s\n' "$_tap_line" ;;
      *) printf '# %s\n' "$_tap_line" ;;
    esac
  done
}

tap_fill ()
{
  while [ "$tap_n" -lt "$tap_planned" ]; do
    tap_not_ok "$@"
  done
}

tap_bail ()
{
  echo "Bail out! $*"
  exit 99
}

tap_done ()
{
  [ "$tap_failed" -eq 0 ] || echo "# $(basename "$0"): FAILED"
  echo "# summary: $tap_n results, failed: $tap_failed, skipped: $tap_skipped"
  if [ -n "$tap_planned" ] && [ "$tap_n" -ne "$tap_planned" ]; then
    echo "# internal error: $tap_n results for a plan of $tap_planned"
    exit 99
  fi
  exit 0
}
