#!/bin/sh
# The main job on the bundled demo: profile it live with eu-stacktrace
# (perf_event_open, DWARF unwinding as it runs) and print its hottest call
# chains, then one sample in full.
set -eu
builddir=${1:-.}
tool="$builddir/eu-stacktrace"
demo="$builddir/demo/eu-stacktrace-demo"
data=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-demo.XXXXXX")
trap 'rm -rf "$data"' EXIT

echo "== profiling the demo for 2 s: eu-stacktrace -f folded --stats --record demo.data -- $demo 2"
"$tool" -f folded --stats -o "$data/folded" --record "$data/demo.data" -- "$demo" 2
echo
echo "== hottest call chains (share of samples, outermost caller first):"
total=$(awk '{ n += $NF } END { print n }' "$data/folded")
sort -k2 -t' ' -nr "$data/folded" | head -n 8 | awk -v total="$total" '{
  count = $NF; $NF = ""; sub(/ $/, "");
  n = split($0, f, ";");
  chain = f[1];
  for (i = 2; i <= n; i++) chain = chain " > " f[i];
  printf "%5.1f%%  %s\n", 100 * count / total, chain
}'
echo
echo "== one sample in full, unwound again from the kept recording (eu-stacktrace -i demo.data):"
"$tool" -i "$data/demo.data" | awk 'NR > 1 && /^$/ { exit } { print }'
