#!/bin/sh
# -f pprof: `go tool pprof` (Debian's golang-go) reads the profile of a real
# recording, and its -top (flat and cum samples of every function) and
# -traces (every stack with its comm, pid and tid labels) equal the folded
# output of the same recording; both with --inline, so locations with
# inlined functions are covered.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/flamegraph/fg-lib.sh"

plan=6
tap_plan "$plan"
e2e_setup
fg_record

# 2. The profile: gzip.
if [ -z "$problem" ]; then
  if "$EU_STACKTRACE" -i "$data" --inline -f pprof -o "$tmp/cpu.pb.gz" 2> "$tmp/pprof.err" \
     && [ "$(od -An -tx1 -N2 "$tmp/cpu.pb.gz" | tr -d ' ')" = 1f8b ]; then
    tap_ok "eu-stacktrace -f pprof writes a gzip file: $(wc -c < "$tmp/cpu.pb.gz") bytes"
  else
    problem="eu-stacktrace -f pprof failed, or wrote no gzip file"
    tap_diag_file "$tmp/pprof.err" 20
    tap_not_ok "eu-stacktrace -f pprof writes a gzip file: $problem"
  fi
else
  tap_not_ok "eu-stacktrace -f pprof writes a gzip file: not run ($problem)"
fi

# 3-5. What go tool pprof reads, against folded.
if [ -z "$problem" ]; then
  p=$(tool_problem go "$GO")
  [ -n "$p" ] && problem="$p (Debian package golang-go)"
fi
fg_python 3 3 "go tool pprof" "$FG/check-pprof.py" --folded "$tmp/folded" \
  --pprof "$tmp/cpu.pb.gz" --go "$GO" --home "$tmp/home" --program "$WORKLOADS/shlib"

# 6. The sanitizer build.
fg_asan "pprof" pprof "$tmp/cpu.pb.gz"
fg_end
