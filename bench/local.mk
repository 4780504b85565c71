# Benchmarks, side by side with perf script.  They are not part of
# `make check`: they take minutes, need perf_event access, and measure
# rather than pass or fail.  Run them with `make bench`; see bench/README.
EXTRA_DIST += \
	bench/README \
	bench/bench-perf-script.sh \
	bench/perf-data-split.py \
	bench/bench-lib.sh \
	bench/workload.c \
	bench/bench-live.sh \
	bench/bench-flamegraph.sh \
	bench/bench-sysprof.sh \
	bench/bench-debuginfod.sh \
	bench/bench-ns-helper.sh \
	bench/bench-many-processes.sh \
	bench/bench-arch.sh \
	bench/bench-startup.sh \
	bench/bench-jobs.sh \
	bench/bench-jit-live.sh

.PHONY: bench
bench: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-perf-script.sh

# -f svg and -f pprof against -f folded: cost and size (bench/README).
.PHONY: bench-flamegraph
bench-flamegraph: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-flamegraph.sh

# The Sysprof stream path against the perf.data path (bench/README).
.PHONY: bench-sysprof
bench-sysprof: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-sysprof.sh

# A program whose only CFI is in its separate debug file: eu-stacktrace
# without and with debuginfod, and perf script (bench/README).
.PHONY: bench-debuginfod
bench-debuginfod: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-debuginfod.sh

# The namespace helper: the round trip of one fd request, each way, and its
# share of an unwinding run on a namespace workload (root; bench/README).
.PHONY: bench-ns-helper
bench-ns-helper: all tests/ns-helper/nsprog tests/ns-helper/libnswork.so \
		tests/ns-helper/enter-root tests/ns-helper/nsh-client bench/ipc-floor
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PYTHON3='$(PYTHON3)' \
	TOP_SRCDIR='$(abs_top_srcdir)' TOP_BUILDDIR='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/bench/bench-ns-helper.sh

# Many short processes against one long one, and against BASELINE (an older
# eu-stacktrace, when given) with an output identity check (bench/README).
.PHONY: bench-many-processes
bench-many-processes: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' BASELINE='$(BASELINE)' \
	$(SHELL) $(top_srcdir)/bench/bench-many-processes.sh

# Unwinding speed per architecture on the recordings of tests/arch, side by
# side with x86_64 (bench/README).
.PHONY: bench-arch
bench-arch: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PYTHON3='$(PYTHON3)' \
	TOP_SRCDIR='$(abs_top_srcdir)' TOP_BUILDDIR='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/bench/bench-arch.sh

# Start-up time to the command's first instruction, and peak RSS at -j 1 on
# a recording and on one four times longer (bench/README).
.PHONY: bench-startup
bench-startup: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-startup.sh

# -j 2 against -j 1 on several processes at once and on one (bench/README).
.PHONY: bench-jobs
bench-jobs: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-jobs.sh

# The anchor of bench-ns-helper's round trips: the helper's three processes
# and messages without its work (bench/ipc-floor.c).
EXTRA_PROGRAMS += bench/ipc-floor
bench_ipc_floor_SOURCES = bench/ipc-floor.c src/ns-helper/protocol.c src/ns-helper/protocol.h \
	src/ns-helper/protocol-decode.c src/basic/why.c src/basic/why.h
bench_ipc_floor_CFLAGS = $(AM_CFLAGS) $(JSON_C_CFLAGS)
bench_ipc_floor_LDADD = $(JSON_C_LIBS)
CLEANFILES += bench/ipc-floor

# How many of a live run's JIT samples are named, with cores kept busy, and
# against EU_BASELINE (an older eu-stacktrace, when given; bench/README).
.PHONY: bench-jit-live
bench-jit-live: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' EU_BASELINE='$(EU_BASELINE)' \
	PYTHON3='$(PYTHON3)' $(SHELL) $(top_srcdir)/bench/bench-jit-live.sh
