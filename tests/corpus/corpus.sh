#!/bin/sh
# The tire-kicking corpus (see corpus.py): real programs recorded with
# perf record --call-graph dwarf,16384, unwound by eu-stacktrace and by perf
# script, compared sample by sample; one TAP line and one table row per
# program.  A few minutes on 2 cores: in `make check-long'.
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${EU_STACKTRACE:=$TOP_BUILDDIR/eu-stacktrace}"
: "${PERF:=perf}"
: "${PYTHON3:=python3}"
unset DEBUGINFOD_URLS
# A cargo from rustup lives in the user's home.
PATH=$PATH:${CARGO_HOME:-$HOME/.cargo}/bin
export PATH
exec "$PYTHON3" "$TOP_SRCDIR/tests/corpus/corpus.py" --eu-stacktrace "$EU_STACKTRACE" \
  --perf "$PERF" "$@"
