#!/bin/sh
# bench-jit-live.sh: how many of a live run's JIT samples are named.
#
# tests/e2e/jit.sh's live case, repeated: `eu-stacktrace -f json -- node
# --perf-basic-prof tests/workloads/jit-hot.js 2000` (node's hot loop runs
# for 2 s of its CPU time and compiles as it goes), checked by
# tests/e2e/check-names.py jit-only against the map node wrote: of the
# samples whose leaf is JIT code, how many the run named.  Code a JIT
# compiles between two reads of its map goes unnamed until the next read,
# so the share depends on how soon the run reads what the JIT appends, and
# on the load: BENCH_BUSY shell loops keep cores busy meanwhile, as a
# parallel `make check' does.  EU_BASELINE names a second eu-stacktrace run
# alternately with the first (before and after a change, in one run).
#
# Nothing here asserts a share.  Environment:
#   EU_STACKTRACE  the eu-stacktrace to run [../eu-stacktrace]
#   EU_BASELINE    another one, run alternately
#   NODE           node [node]
#   PYTHON3        python3 [python3]
#   BENCH_RUNS     runs of each [8]
#   BENCH_BUSY     busy loops beside the runs [1]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
EU_STACKTRACE=${EU_STACKTRACE:-$top/eu-stacktrace}
EU_BASELINE=${EU_BASELINE:-}
NODE=${NODE:-node}
PYTHON3=${PYTHON3:-python3}
BENCH_RUNS=${BENCH_RUNS:-8}
BENCH_BUSY=${BENCH_BUSY:-1}
die () { echo "bench: $*" >&2; exit 1; }
command -v "$EU_STACKTRACE" > /dev/null 2>&1 || die "no eu-stacktrace at '$EU_STACKTRACE'"
command -v "$NODE" > /dev/null 2>&1 || die "no node ('$NODE'): set NODE"
command -v "$PYTHON3" > /dev/null 2>&1 || die "no python3 ('$PYTHON3'): set PYTHON3"

work=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-bench.XXXXXX")
busy=""
maps=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup () {
  for p in $busy; do kill "$p" 2> /dev/null; done
  for m in $maps; do rm -f "$m"; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

i=0
while [ "$i" -lt "$BENCH_BUSY" ]; do
  ( while :; do :; done ) &
  busy="$busy $!"
  i=$((i + 1))
done

# one NAME TOOL RUN: one live run; prints "NAME RUN: NAMED of JUDGED".
one () {
  d=$work/$1-$3
  mkdir "$d"
  # shellcheck disable=SC2016  # $$ and $0, $1 are the inner shell's
  (cd "$d" && "$2" -f json -o ours.jsonl \
     -- sh -c 'echo $$ > pid; exec "$0" --perf-basic-prof "$1" 2000' "$NODE" \
     "$top/tests/workloads/jit-hot.js") > "$d/out" 2>&1 || {
    sed 's/^/bench:   /' "$d/out" >&2
    die "$1 run $3 failed"
  }
  map=/tmp/perf-$(cat "$d/pid").map
  maps="$maps $map"
  "$PYTHON3" "$top/tests/e2e/check-names.py" jit-only --ours "$d/ours.jsonl" --map "$map" \
    --name "$1" --tap-start 1 > "$d/check" 2>&1 || true
  line=$(sed -n 's/.*JIT leaf frames named in \([0-9]*\) of \([0-9]*\) samples.*/\1 \2/p' "$d/check")
  [ -n "$line" ] || { cat "$d/check" >&2; die "$1 run $3: no share printed"; }
  echo "$1 $3: $line" | awk '{ printf "%s %s named %d of %d JIT samples (%.1f%% unnamed)\n", $1, $2, $3, $4, $4 ? 100 * ($4 - $3) / $4 : 0 }'
  echo "$1 $line" >> "$work/results"
  rm -f "$map"
}

: > "$work/results"
run=1
while [ "$run" -le "$BENCH_RUNS" ]; do
  # Alternately, each first in turn: a first run of a pair is slower.
  if [ -n "$EU_BASELINE" ] && [ $((run % 2)) -eq 0 ]; then
    one baseline "$EU_BASELINE" "$run"
    one current "$EU_STACKTRACE" "$run"
  else
    one current "$EU_STACKTRACE" "$run"
    [ -z "$EU_BASELINE" ] || one baseline "$EU_BASELINE" "$run"
  fi
  run=$((run + 1))
done

awk '{ n[$1]++; if ($2 < $3) { short[$1]++; u = 100 * ($3 - $2) / $3;
         if (!($1 in lo) || u < lo[$1]) lo[$1] = u; if (u > hi[$1]) hi[$1] = u } }
     END { for (k in n) if (short[k]) printf "summary: %s: %d of %d runs left JIT samples unnamed, %.1f-%.1f%%\n", k, short[k], n[k], lo[k], hi[k];
                        else printf "summary: %s: every JIT sample named in %d of %d runs\n", k, n[k], n[k] }' \
  "$work/results"
