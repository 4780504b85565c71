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
echo "== hottest call chains (share of samples; outermost caller first, recursion folded):"
awk '{
  count = $NF; $NF = ""; sub(/ $/, "");
  n = split($0, f, ";");
  chain = ""; prev = ""; rec = 0;
  for (i = 2; i <= n; i++) {
    if (f[i] == prev) { rec = 1; continue }
    if (rec) { chain = chain " (recursive)"; rec = 0 }
    chain = chain (chain == "" ? "" : " > ") f[i]; prev = f[i]
  }
  if (rec) chain = chain " (recursive)";
  sub(/^_start > __libc_start_main[^ ]* > __libc_start_call_main > /, "", chain);
  sum[chain] += count; total += count
} END {
  for (c in sum) printf "%d\t%5.1f%%  %s\n", sum[c], 100 * sum[c] / total, c
}' "$data/folded" | sort -nr | head -n 8 | cut -f2-
echo
echo "== one sample in full, unwound again from the kept recording (eu-stacktrace -i demo.data):"
# Written to a file first: the tool reports a closed pipe (EPIPE) as an
# error, and awk stops reading after the first sample.
"$tool" -i "$data/demo.data" -o "$data/all.txt" && awk 'NR > 1 && /^$/ { exit } { print }' "$data/all.txt"
