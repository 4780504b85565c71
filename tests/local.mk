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

# The TAP library that every shell test sources.
EXTRA_DIST += tests/tap.sh

# Runs shellcheck on every shell script (tests/, bench/, tools/, .ci/run).
TESTS += tests/shellcheck.sh
EXTRA_DIST += tests/shellcheck.sh
