# Live sampling of real programs (perf_event_open; root in CI).
TESTS += tests/live/live.sh
EXTRA_DIST += tests/live/live.sh tests/live/check-chains.py
