# End-to-end tests: each records a workload of tests/workloads/ with
# `perf record --call-graph dwarf`, and compares eu-stacktrace's unwinding of
# the file with perf script's (compare-perf-script.py), then runs the
# sanitizer build on the same file.  They need perf and python3 and must run
# where perf can record (root, or perf_event_paranoid <= 1).
E2E_TESTS = \
	tests/e2e/deep.sh \
	tests/e2e/shlib.sh \
	tests/e2e/threads.sh \
	tests/e2e/perf-threads.sh \
	tests/e2e/perf-dir.sh \
	tests/e2e/ld-so-dwarf.sh \
	tests/e2e/fd-limit.sh \
	tests/e2e/forkexec.sh \
	tests/e2e/manyproc.sh \
	tests/e2e/jobs.sh \
	tests/e2e/bad-input.sh \
	tests/e2e/output-errors.sh \
	tests/e2e/jit.sh \
	tests/e2e/inflate-bounds.sh \
	tests/e2e/debug-file-owner.sh \
	tests/e2e/libdw-opens.sh \
	tests/e2e/go.sh \
	tests/e2e/demangle.sh \
	tests/e2e/golden.sh \
	tests/e2e/epilogue.sh \
	tests/e2e/unwinder-equal.sh \
	tests/e2e/unwinder-debug-frame.sh \
	tests/e2e/unwinder-rbx.sh

TESTS += $(E2E_TESTS)
EXTRA_DIST += \
	$(E2E_TESTS) \
	tests/e2e/e2e-lib.sh \
	tests/e2e/debug-frame/spin.c \
	tests/e2e/debug-frame/nocfi.c \
	tests/e2e/rbx/main.c \
	tests/e2e/rbx/rbx-rip.s \
	tests/e2e/rbx/rbx-rbp.s \
	tests/e2e/rbx/rbx-unread.s \
	tests/e2e/compare-perf-script.py \
	tests/e2e/compare-names.py \
	tests/e2e/filter-pipe-samples.py \
	tests/e2e/corrupt-perf-data.py \
	tests/e2e/perf-dir-variant.py \
	tests/e2e/check-names.py \
	tests/e2e/epilogue.c \
	tests/e2e/dwarf-alt/inl.c \
	tests/e2e/epilogue-gdb.py \
	tests/e2e/epilogue-check.py \
	tests/workloads/jit-hot.js \
	tests/workloads/gowork/main.go \
	tests/workloads/gowork/go.mod

# Golden outputs (tests/golden/README): committed recordings of a program
# that maps only itself, and their outputs byte for byte.
EXTRA_DIST += \
	tests/golden/README \
	tests/golden/golden-prog.c \
	tests/golden/golden-prog \
	tests/golden/golden.data \
	tests/golden/golden.syscap \
	tests/golden/expected/data.text \
	tests/golden/expected/data.folded \
	tests/golden/expected/data.json \
	tests/golden/expected/data.svg \
	tests/golden/expected/data.pprof \
	tests/golden/expected/data.sysprof

# Preloaded by ld-so-dwarf.sh: counts the sections libelf decompresses.
check_PROGRAMS += tests/e2e/libcount-inflate.so
tests_e2e_libcount_inflate_so_SOURCES = tests/e2e/count-inflate.c
tests_e2e_libcount_inflate_so_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) -fPIC
tests_e2e_libcount_inflate_so_LDFLAGS = -shared
