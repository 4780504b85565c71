#!/bin/sh
# tests/live/fork-storm.sh for 10 s, in `make check' (the full minute runs
# in `make check-long').
: "${TOP_SRCDIR:?}"
FORK_STORM_SECONDS=10 exec "$TOP_SRCDIR/tests/live/fork-storm.sh"
