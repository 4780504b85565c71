# Flame graphs and pprof profiles (-f svg, -f pprof) of a real recording,
# checked against the folded output of the same file; the SVG in headless
# Chromium, the profile with go tool pprof.  They need perf, python3,
# chromium and golang-go (tools/install-deps.sh installs them), and never
# skip.  The browser test leaves its screenshots in the build tree.
FLAMEGRAPH_TESTS = \
	tests/flamegraph/svg.sh \
	tests/flamegraph/pprof.sh

TESTS += $(FLAMEGRAPH_TESTS)

# The stack tree that -f folded and -f svg share, and -f svg on synthetic
# call chains: a million samples, hostile names (cmocka).
FLAMEGRAPH_UNIT_TESTS = \
	tests/flamegraph/test-stack-tree \
	tests/flamegraph/test-sink-svg
check_PROGRAMS += $(FLAMEGRAPH_UNIT_TESTS)
TESTS += $(FLAMEGRAPH_UNIT_TESTS)
tests_flamegraph_test_stack_tree_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBDW_CFLAGS)
tests_flamegraph_test_stack_tree_LDADD = src/core/libcore.a $(CMOCKA_LIBS) $(core_libs)
tests_flamegraph_test_sink_svg_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBDW_CFLAGS)
tests_flamegraph_test_sink_svg_LDADD = src/core/libcore.a $(CMOCKA_LIBS) $(core_libs)
EXTRA_DIST += \
	$(FLAMEGRAPH_TESTS) \
	tests/flamegraph/fg-lib.sh \
	tests/flamegraph/folded.py \
	tests/flamegraph/check-svg.py \
	tests/flamegraph/check-pprof.py \
	tests/flamegraph/browser.py
CLEANFILES += \
	tests/flamegraph/flame.svg \
	tests/flamegraph/flame.png \
	tests/flamegraph/flame-zoom.png \
	tests/flamegraph/flame-search.png
