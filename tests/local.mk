include $(srcdir)/tests/unit/local.mk
include $(srcdir)/tests/workloads/local.mk
include $(srcdir)/tests/e2e/local.mk
include $(srcdir)/tests/containers/local.mk
include $(srcdir)/tests/fuzz/local.mk
include $(srcdir)/tests/live/local.mk
include $(srcdir)/tests/flamegraph/local.mk
include $(srcdir)/tests/sysprof/local.mk
include $(srcdir)/tests/debuginfod/local.mk
include $(srcdir)/tests/ns-helper/local.mk
include $(srcdir)/tests/arch/local.mk
include $(srcdir)/tests/corpus/local.mk

# The one-way house: every #include in src/ runs down the layers.
TESTS += tests/check-includes.sh
EXTRA_DIST += tests/check-includes.sh

# The TAP library that every shell test sources.
EXTRA_DIST += tests/tap.sh
# run_perf, for every test that runs perf: perf 6.1's aborts run once more.
EXTRA_DIST += tests/run-perf.sh

# Runs shellcheck on every shell script (tests/, bench/, tools/, .ci/run).
TESTS += tests/shellcheck.sh
EXTRA_DIST += tests/shellcheck.sh
