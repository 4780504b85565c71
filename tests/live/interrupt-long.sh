#!/bin/sh
# make check-long: tests/live/interrupt.sh at the issue's size: the
# sanitizer build samples the whole machine for 5 s, then 212 interrupted
# runs (every mode, format and way of signalling, twice over).
INTERRUPT_ROUNDS=2 INTERRUPT_ALL_SECONDS=5
export INTERRUPT_ROUNDS INTERRUPT_ALL_SECONDS
exec sh "${TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/live/interrupt.sh"
