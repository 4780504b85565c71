# Benchmarks, side by side with perf script.  They are not part of
# `make check`: they take minutes, need perf_event access, and measure
# rather than pass or fail.  Run them with `make bench`; see bench/README.
EXTRA_DIST += \
	bench/README \
	bench/bench-perf-script.sh \
	bench/workload.c \
	bench/bench-live.sh

.PHONY: bench
bench: all
	EU_STACKTRACE='$(abs_top_builddir)/eu-stacktrace' PERF='$(PERF)' \
	PYTHON3='$(PYTHON3)' CC='$(CC)' \
	$(SHELL) $(top_srcdir)/bench/bench-perf-script.sh
