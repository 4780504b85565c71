#!/bin/sh
# The main job on the bundled demo: record it with perf (DWARF call graphs,
# the software cpu-clock event that works on every machine), unwind the
# samples with eu-stacktrace, and print the hottest call chains.
set -eu
builddir=${1:-.}
tool="$builddir/eu-stacktrace"
demo="$builddir/demo/eu-stacktrace-demo"
perf=${PERF:-perf}
data=$(mktemp -d "${TMPDIR:-/tmp}/eu-stacktrace-demo.XXXXXX")
trap 'rm -rf "$data"' EXIT

echo "== recording $demo for 2 s with: perf record -e cpu-clock -F 999 --call-graph dwarf"
"$perf" record -q -e cpu-clock -F 999 --call-graph dwarf -o "$data/perf.data" -- "$demo" 2
echo
echo "== unwinding with: eu-stacktrace -i perf.data -f folded --stats"
"$tool" -i "$data/perf.data" -f folded --stats -o "$data/folded"
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
echo "== one sample in full (eu-stacktrace -i perf.data | head):"
"$tool" -i "$data/perf.data" | awk 'NR > 1 && /^$/ { exit } { print }'
