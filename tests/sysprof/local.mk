# Sysprof captures in and out (source-sysprof.c, sink-sysprof.c).  Every
# capture is read back with Debian's libsysprof-capture-4 reader
# (sysprof-check); recordings come from `perf record --call-graph dwarf` of
# the workloads, and the oracle is -f json of the same recording.  They need
# perf, python3 and the right to record (root, or perf_event_paranoid <= 1).
SYSPROF_TESTS = \
	tests/sysprof/roundtrip-shlib.sh \
	tests/sysprof/roundtrip-threads.sh \
	tests/sysprof/roundtrip-forkexec.sh \
	tests/sysprof/bad-streams.sh \
	tests/sysprof/proc-maps.sh \
	tests/sysprof/interrupt.sh \
	tests/sysprof/live.sh \
	tests/sysprof/callgraph.sh \
	tests/sysprof/gui.sh

check_PROGRAMS += \
	tests/sysprof/sysprof-check \
	tests/sysprof/sysprof-callgraph \
	tests/sysprof/shellfork \
	tests/sysprof/test-source-sysprof \
	tests/sysprof/test-sink-sysprof
tests_sysprof_sysprof_check_SOURCES = tests/sysprof/sysprof-check.c
tests_sysprof_sysprof_check_CFLAGS = $(AM_CFLAGS) $(SYSPROF_CAPTURE_CFLAGS)
tests_sysprof_sysprof_check_LDADD = $(SYSPROF_CAPTURE_LIBS)
# Sysprof's call tree, built by libsysprof-4 as the GUI builds it.
tests_sysprof_sysprof_callgraph_SOURCES = tests/sysprof/sysprof-callgraph.c
tests_sysprof_sysprof_callgraph_CFLAGS = $(AM_CFLAGS) $(SYSPROF_CFLAGS)
tests_sysprof_sysprof_callgraph_LDADD = $(SYSPROF_LIBS)
# The workload of callgraph.sh, built as the workloads are (-O2 -g).
tests_sysprof_shellfork_SOURCES = tests/sysprof/shellfork.c
tests_sysprof_shellfork_CFLAGS = $(WORKLOAD_CFLAGS)
tests_sysprof_test_source_sysprof_CFLAGS = $(unit_cflags)
tests_sysprof_test_source_sysprof_LDADD = $(unit_ldadd)
tests_sysprof_test_sink_sysprof_CFLAGS = $(unit_cflags) $(SYSPROF_CAPTURE_CFLAGS)
tests_sysprof_test_sink_sysprof_LDADD = $(unit_ldadd)

TESTS += \
	tests/sysprof/test-source-sysprof \
	tests/sysprof/test-sink-sysprof \
	$(SYSPROF_TESTS)
EXTRA_DIST += \
	$(SYSPROF_TESTS) \
	tests/sysprof/sysprof-lib.sh \
	tests/sysprof/sysprof-tool.py \
	tests/sysprof/callgraph-compare.py \
	tests/sysprof/gui-compare.py \
	tests/sysprof/gui-drive.sh \
	tests/sysprof/gui-details.py

# gui.sh keeps its screenshots and what it read from the GUI for a person to
# look at; make clean (and distcheck's distclean) removes them.
clean-local: clean-sysprof-gui-output
clean-sysprof-gui-output:
	-rm -rf tests/sysprof/gui-output
.PHONY: clean-sysprof-gui-output
