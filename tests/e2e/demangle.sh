#!/bin/sh
# C++ and Rust names, as perf shows them, in every output format.
#
# Records an -O2 C++ program (tests/workloads/cxx.cc: templates, lambdas,
# std:: containers, exceptions) and a Rust program (tests/workloads/
# rustwork.rs, built here with rustc, once with legacy and once with v0
# symbol mangling) with perf record --call-graph dwarf, and checks with
# compare-names.py that in at least 99.5% of the samples perf unwound
# completely, every frame name of -f json, text, folded, svg and pprof equals
# perf script's (demangled, with perf's "@@GLIBC_2.34" versions);
# --no-demangle's names (json, text, folded) equal perf script
# --no-demangle's, and so do JSON's raw_symbol and pprof's system_name (read
# with go tool pprof -raw); --demangle=full's (json, text, folded) equal perf
# script -v's (parameter lists); and go tool pprof -top shows demangled
# names.
#
# Environment as e2e-lib.sh, and RUSTC (default: rustc in PATH; Debian 12's
# rustc 1.63 from tools/install-deps.sh does) and GO (default: go).
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"

: "${RUSTC:=rustc}"
: "${GO:=go}"
NAMES="$TOP_SRCDIR/tests/e2e/compare-names.py"
PER_WORKLOAD=17
WORKLOADS_LIST="cxx rust-legacy rust-v0"
tap_plan $((3 * PER_WORKLOAD + 1))
e2e_setup
mkdir "$tmp/go"

# fail_rest N WHY: N "not ok" lines.
fail_rest ()
{
  i=0
  while [ $i -lt "$1" ]; do
    i=$((i + 1))
    tap_not_ok "$2"
  done
}

# build_rust MANGLING OUT: rustwork.rs built with plain rustc.  Today's
# rustc (1.90 and later) links with its own lld, which puts the read-only and
# executable segments in one file page; the system linker gives the layout
# that the rest of the e2e tests use.  Debian's rustc 1.63 links with the
# system linker anyway and does not know the option.
build_rust ()
{
  flags="-C opt-level=2 -C force-frame-pointers=no -g"
  [ "$1" = v0 ] && flags="$flags -C symbol-mangling-version=v0"
  # shellcheck disable=SC2086
  "$RUSTC" $flags -C linker-features=-lld -o "$2" "$TOP_SRCDIR/tests/workloads/rustwork.rs" \
    > "$tmp/rustc.out" 2>&1 \
  || "$RUSTC" $flags -o "$2" "$TOP_SRCDIR/tests/workloads/rustwork.rs" > "$tmp/rustc.out" 2>&1
}

# expected_names NAME: names go tool pprof -top must show for workload NAME.
expected_names ()
{
  case $1 in
    cxx) echo "work::recursion<7>::run|work::leaf|work::sort_them<long>|work::(anonymous namespace)::inner_chain" ;;
    *) echo "rustwork::work::leaf|rustwork::work::inner_chain|rustwork::main" ;;
  esac
}

for w in $WORKLOADS_LIST; do
  dir="$tmp/$w"
  mkdir "$dir"
  # 1. Build (Rust) and record.
  case $w in
    cxx) prog="$WORKLOADS/cxx"; problem=$(tool_problem cxx "$prog") ;;
    rust-*)
      prog="$dir/rustwork"
      problem=$(tool_problem rustc "$RUSTC")
      [ -z "$problem" ] && echo "# $w: $("$RUSTC" --version 2>&1) ($(command -v "$RUSTC"))"
      if [ -z "$problem" ] && ! build_rust "${w#rust-}" "$prog"; then
        tap_diag_file "$tmp/rustc.out" 20
        problem="$RUSTC could not build rustwork.rs"
      fi ;;
  esac
  p=$(tools_problem "perf:$PERF" "python3:$PYTHON3" "go:$GO" "eu-stacktrace:$EU_STACKTRACE")
  [ -n "$p" ] && problem="$problem${problem:+; }$p"
  if [ -z "$problem" ]; then
    if run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$dir/perf.data" -- "$prog" 1500 \
         > "$dir/record.out" 2> "$dir/record.err" && [ -s "$dir/perf.data" ]; then
      tap_ok "$w: built and recorded with perf record --call-graph dwarf"
    else
      tap_diag_file "$dir/record.err" 20
      problem="perf record failed"
      tap_not_ok "$w: built and recorded: $problem"
    fi
  else
    tap_not_ok "$w: built and recorded: $problem"
  fi
  if [ -n "$problem" ]; then
    fail_rest $((PER_WORKLOAD - 1)) "$w: not run ($problem)"
    continue
  fi

  # 2. The oracles: perf script demangled, raw, and with parameter lists.
  if run_perf script -i "$dir/perf.data" -F "$PERF_FIELDS" --no-inline --ns \
       > "$dir/perf.txt" 2> "$dir/perf.err" \
     && run_perf script -i "$dir/perf.data" -F "$PERF_FIELDS" --no-inline --ns --no-demangle \
       > "$dir/perf-raw.txt" 2>> "$dir/perf.err" \
     && run_perf script -v -i "$dir/perf.data" -F "$PERF_FIELDS" --no-inline --ns \
       > "$dir/perf-full.txt" 2>> "$dir/perf.err"; then
    tap_ok "$w: perf script, --no-demangle and -v unwind the recording"
  else
    tap_diag_file "$dir/perf.err" 20
    tap_not_ok "$w: perf script, --no-demangle and -v unwind the recording"
    fail_rest $((PER_WORKLOAD - 2)) "$w: not run (perf script failed)"
    continue
  fi

  # 3. Ours, in every format.
  failed_runs=""
  run_ours ()
  {
    out=$1
    shift
    # shellcheck disable=SC2015  # the block runs when the run fails or writes nothing, as meant
    timeout 300 "$EU_STACKTRACE" -i "$dir/perf.data" -o "$dir/$out" "$@" \
      > /dev/null 2> "$dir/$out.err" && [ -s "$dir/$out" ] || {
      failed_runs="$failed_runs $out"
      tap_diag_file "$dir/$out.err" 10
    }
  }
  run_ours ours.json -f json
  run_ours ours.txt -f text
  run_ours ours.folded -f folded
  run_ours ours.svg -f svg --minwidth 0
  run_ours ours.pb.gz -f pprof
  run_ours raw.json -f json --no-demangle
  run_ours raw.txt -f text --no-demangle
  run_ours raw.folded -f folded --no-demangle
  run_ours full.json -f json --demangle=full
  run_ours full.txt -f text --demangle=full
  run_ours full.folded -f folded --demangle=full
  if [ -z "$failed_runs" ]; then
    tap_ok "$w: eu-stacktrace writes json, text, folded, svg, pprof; json, text, folded with \
--no-demangle and --demangle=full"
  else
    tap_not_ok "$w: eu-stacktrace failed for:$failed_runs"
    fail_rest $((PER_WORKLOAD - 3)) "$w: not compared (eu-stacktrace failed)"
    continue
  fi

  # 4..16. The names.
  compare ()
  {
    "$PYTHON3" "$NAMES" --name "$w" --tap-start $((tap_n + 1)) "$@" \
      > "$dir/compare.out" 2> "$dir/compare.err"
    cat "$dir/compare.out"
    tap_diag_file "$dir/compare.err" 20
    got=$(grep -c '^\(not \)\{0,1\}ok ' "$dir/compare.out")
    _failed=0
    grep -q '^not ok ' "$dir/compare.out" && _failed=1
    tap_counted "$got" "$_failed"
  }
  before=$tap_n
  compare --perf-script "$dir/perf.txt" --json "$dir/ours.json" --text "$dir/ours.txt" \
    --folded "$dir/ours.folded" --svg "$dir/ours.svg" --pprof "$dir/ours.pb.gz" \
    --go "$GO" --home "$tmp/go"
  compare --perf-script "$dir/perf-raw.txt" --json "$dir/raw.json" --text "$dir/raw.txt" \
    --folded "$dir/raw.folded" --what " (--no-demangle)"
  compare --perf-script "$dir/perf.txt" --raw-perf-script "$dir/perf-raw.txt" \
    --raw-of "$dir/ours.json"
  compare --perf-script "$dir/perf.txt" --raw-perf-script "$dir/perf-raw.txt" \
    --pprof-raw "$dir/ours.pb.gz" --go "$GO" --home "$tmp/go"
  compare --perf-script "$dir/perf-full.txt" --json "$dir/full.json" --text "$dir/full.txt" \
    --folded "$dir/full.folded" --what " (--demangle=full, perf script -v)"
  while [ $((tap_n - before)) -lt 13 ]; do
    tap_not_ok "$w: a name comparison did not complete"
  done

  # 17. go tool pprof -top: demangled names, none mangled.
  HOME="$tmp/go" PPROF_TMPDIR="$tmp/go" GOCACHE="$tmp/go/cache" GOTOOLCHAIN=local \
    PPROF_BINARY_PATH=/nonexistent \
    "$GO" tool pprof -top -sample_index=samples -nodecount=1000000 "$dir/ours.pb.gz" \
    > "$dir/top.txt" 2> "$dir/top.err"
  want=$(expected_names "$w")
  missing=$(echo "$want" | tr '|' '\n' | while read -r name; do
              grep -qF -- " $name" "$dir/top.txt" || echo "$name"; done)
  mangled=$(grep -E ' (_Z|_R)[A-Za-z0-9_]+$' "$dir/top.txt" | head -3)
  if [ -s "$dir/top.txt" ] && [ -z "$missing" ] && [ -z "$mangled" ]; then
    tap_ok "$w: go tool pprof -top shows demangled names"
  else
    tap_diag_file "$dir/top.err" 10
    tap_diag_file "$dir/top.txt" 20
    tap_not_ok "$w: go tool pprof -top shows demangled names (missing: $missing; mangled: $mangled)"
  fi
done

# Last.  The sanitizer build on the C++ recording: no report, and the same
# JSON (demangled names and raw_symbol) as the plain build.
dir="$tmp/cxx"
p=$(tool_problem eu-stacktrace-asan "$EU_STACKTRACE_ASAN")
if [ -n "$p" ] || [ ! -s "$dir/perf.data" ] || [ ! -s "$dir/ours.json" ]; then
  tap_not_ok "cxx: the sanitizer build runs clean: not run (${p:-no recording})"
else
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    timeout 600 "$EU_STACKTRACE_ASAN" -i "$dir/perf.data" -f json -o "$dir/asan.json" \
    > /dev/null 2> "$dir/asan.err"
  rc=$?
  if [ "$rc" -eq 0 ] && ! grep -q -e 'Sanitizer' -e 'runtime error:' "$dir/asan.err" \
     && LC_ALL=C sort "$dir/ours.json" > "$dir/ours.sorted" \
     && LC_ALL=C sort "$dir/asan.json" > "$dir/asan.sorted" \
     && cmp -s "$dir/ours.sorted" "$dir/asan.sorted"; then
    tap_ok "cxx: the sanitizer build runs clean and writes the same JSON"
  else
    tap_diag_file "$dir/asan.err" 40
    tap_not_ok "cxx: the sanitizer build runs clean and writes the same JSON (status $rc)"
  fi
fi

tap_done
