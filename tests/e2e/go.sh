#!/bin/sh
# Go programs without a symbol table: `go build -ldflags=-s`, as Debian
# builds every Go program, keeps only .gopclntab.  The same program is
# built with and without -s (the same code at the same addresses), the
# stripped one recorded with perf record --call-graph dwarf, and the names
# eu-stacktrace gives its frames compared with the unstripped binary's
# symbol table (nm -S, the oracle): >= 95% the same.  Both builds' unwinds
# must end at Go's outermost frames (runtime.goexit, runtime.mstart,
# runtime.systemstack...), never with a garbage frame past them.  Needs go
# (golang-go) and perf; run as root or with perf_event_paranoid <= 1.
. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/e2e/e2e-lib.sh"
CHECK="$TOP_SRCDIR/tests/e2e/check-names.py"
GO=${GO:-go}

tap_plan 11
e2e_setup
problem=$(tool_problem go "$GO")
[ -z "$problem" ] && problem=$(tool_problem perf "$PERF")

# 1. Two builds of one program (a private module cache and build cache:
# nothing from the network, nothing left in the user's home).
if [ -z "$problem" ] && cp -r "$TOP_SRCDIR/tests/workloads/gowork" "$tmp/src" \
     && (cd "$tmp/src" && export HOME="$tmp/home" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" \
           GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0 \
         && "$GO" build -trimpath -o "$tmp/gowork-full" . \
         && "$GO" build -trimpath -ldflags=-s -o "$tmp/gowork-stripped" .) \
        > "$tmp/build.out" 2>&1 \
     && ! readelf -S "$tmp/gowork-stripped" | grep -q ' \.symtab ' \
     && readelf -S "$tmp/gowork-stripped" | grep -q ' \.gopclntab '; then
  tap_ok "go build with and without -ldflags=-s: the stripped one has .gopclntab and no .symtab"
else
  [ -z "$problem" ] && problem="go build failed"
  tap_diag_file "$tmp/build.out"
  tap_not_ok "go build with and without -ldflags=-s: $problem"
fi

# run NAME: records $tmp/gowork-NAME, unwinds it (plain and sanitizer
# builds) and checks its names against the full build's symbol table.
# The program burns 1.5 s of CPU time, not of wall time: about 1,500
# samples (over 8,000 Go frames) however loaded the machine is.
run ()
{
  bin="$tmp/gowork-$1"
  if [ -z "$problem" ] \
       && run_perf record -e cpu-clock -F 999 --call-graph dwarf -o "$tmp/$1.data" \
            -- "$bin" 1500 > "$tmp/$1.rec" 2>&1 \
       && "$EU_STACKTRACE" -i "$tmp/$1.data" -f json -o "$tmp/$1.jsonl" 2> "$tmp/$1.err"; then
    tap_ok "$1: recorded and unwound"
    nm -S "$tmp/gowork-full" > "$tmp/nm.txt"
    "$PYTHON3" "$CHECK" go --ours "$tmp/$1.jsonl" --name "$1" --tap-start $((tap_n + 1)) \
      --module "$bin" --oracle-nm "$tmp/nm.txt" > "$tmp/$1.check" 2>&1
    cat "$tmp/$1.check"
    _failed=0
    grep -q '^not ok' "$tmp/$1.check" && _failed=1
    [ "$(grep -c '^ok' "$tmp/$1.check")" = 3 ] || _failed=1
    tap_counted 3 "$_failed"
    if ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1 \
         "$EU_STACKTRACE_ASAN" -i "$tmp/$1.data" -f json -o "$tmp/$1.asan" 2> "$tmp/$1.asan.err" \
         && ! grep -q -e 'Sanitizer' -e 'runtime error:' "$tmp/$1.asan.err" \
         && cmp -s "$tmp/$1.jsonl" "$tmp/$1.asan"; then
      tap_ok "$1: the sanitizer build runs clean, with the same output"
    else
      tap_diag_file "$tmp/$1.asan.err"
      tap_not_ok "$1: the sanitizer build runs clean, with the same output"
    fi
  else
    tap_diag_file "$tmp/$1.rec"
    tap_diag_file "$tmp/$1.err"
    for i in 1 2 3 4 5; do tap_not_ok "$1: recorded and unwound: ${problem:-failed}"; done
  fi
}
run stripped
run full
tap_done
