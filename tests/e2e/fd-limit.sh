#!/bin/sh
# Out of descriptors (basic/fd-limit.h).  eu-stacktrace keeps a descriptor
# for each ELF file it unwinds through, and the soft limit of a shell on a
# systemd machine is 1024: it raises the soft limit to the hard one at
# start, gives the command it starts the limit it had, and when even the
# hard limit is reached says so once (the files it could not open would
# otherwise be reported like missing ones, with nothing to say why).
#
# 1. Runs with both limits set low (prlimit --nofile=L:L, L from 5 up): every run
#    whose output lost something completes and warns exactly once, naming
#    the file and RLIMIT_NOFILE; at least one such L exists.
# 2. The soft limit alone at that L: the output is the unlimited run's,
#    with no warning (the soft limit was raised).
# 3. A command run under a soft limit of 77 sees 77, not the raised one.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

tap_plan 3
e2e_setup

data="$tmp/perf.data"
problem=$(tools_problem "perf:$PERF" "eu-stacktrace:$EU_STACKTRACE" "shlib:$WORKLOADS/shlib" \
  "prlimit:prlimit")
if [ -z "$problem" ] \
   && ! run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$data" -- "$WORKLOADS/shlib" \
        > "$tmp/record.out" 2> "$tmp/record.err"; then
  tap_diag_file "$tmp/record.err" 10
  problem="perf record failed"
fi
if [ -z "$problem" ] \
   && ! "$EU_STACKTRACE" -i "$data" -f folded -o "$tmp/ref.folded" 2> "$tmp/ref.err"; then
  tap_diag_file "$tmp/ref.err" 10
  problem="the unlimited run failed"
fi

# 1. Both limits low.
short=""      # the highest L whose output lost something
bad=""        # what went wrong at some L
if [ -z "$problem" ]; then
  L=5
  while [ $L -le 40 ]; do
    prlimit --nofile=$L:$L "$EU_STACKTRACE" -i "$data" -f folded -o "$tmp/L$L.folded" \
      2> "$tmp/L$L.err"
    status=$?
    if [ $status -eq 0 ] && ! cmp -s "$tmp/ref.folded" "$tmp/L$L.folded"; then
      warned=$(grep -c "Too many open files: this process may open $L (RLIMIT_NOFILE" "$tmp/L$L.err")
      if [ "$warned" = 1 ]; then
        short=$L
      else
        bad="${bad}L=$L: output short, $warned warnings; "
        tap_diag_file "$tmp/L$L.err" 5
      fi
    fi
    L=$((L + 1))
  done
fi
if [ -z "$problem" ] && [ -n "$short" ] && [ -z "$bad" ]; then
  tap_ok "out of descriptors (both limits at most $short): the run completes and warns once, naming the limit"
  tap_diag "$(head -1 "$tmp/L$short.err")"
else
  tap_not_ok "out of descriptors: one warning${problem:+: $problem}${bad:+: $bad}${short:-: no limit lost any output}"
fi

# 2. The soft limit alone: raised at start.
if [ -z "$problem" ] && [ -n "$short" ] \
   && prlimit --nofile="$short": "$EU_STACKTRACE" -i "$data" -f folded -o "$tmp/soft.folded" \
        2> "$tmp/soft.err" \
   && cmp -s "$tmp/ref.folded" "$tmp/soft.folded" && ! grep -q "open files" "$tmp/soft.err"; then
  tap_ok "a soft limit of $short (the hard one higher) is raised: the output is whole, no warning"
else
  [ -n "$problem" ] || tap_diag_file "$tmp/soft.err" 5
  tap_not_ok "a low soft limit is raised${problem:+: $problem}"
fi

# 3. The command gets the limit it would have had.
if [ -z "$problem" ] \
   && prlimit --nofile=77: "$EU_STACKTRACE" -f folded -o /dev/null \
        -- sh -c "ulimit -n > '$tmp/child.limit'" 2> "$tmp/child.err" \
   && [ "$(cat "$tmp/child.limit")" = 77 ]; then
  tap_ok "a command run under a soft limit of 77 sees 77"
else
  [ -n "$problem" ] || tap_diag_file "$tmp/child.err" 5
  tap_not_ok "the command's soft limit${problem:+: $problem}: $(cat "$tmp/child.limit" 2> /dev/null)"
fi
