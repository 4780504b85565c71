# Fuzzing the perf.data reader (tests/fuzz/fuzz-perf-source.c).
#
# make check builds the fuzz target without libFuzzer, with ASan and UBSan
# like tests/eu-stacktrace-asan, and replays the corpus: the seed recordings
# and every input that once crashed or hung (crash-*.data, timeout-*.data).
# tests/fuzz/run-fuzzer.sh builds the real libFuzzer binary with clang and
# runs it; copy what it finds into tests/fuzz/corpus/ and list it below.
check_PROGRAMS += tests/fuzz/fuzz-perf-source-replay
tests_fuzz_fuzz_perf_source_replay_SOURCES = tests/fuzz/fuzz-perf-source.c
tests_fuzz_fuzz_perf_source_replay_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(JSON_C_CFLAGS) \
	$(ASAN_FLAGS_C)
tests_fuzz_fuzz_perf_source_replay_LDFLAGS = $(ASAN_FLAGS_LD)
tests_fuzz_fuzz_perf_source_replay_LDADD = src/core/libcore-asan.a $(core_libs)

FUZZ_CORPUS = \
	tests/fuzz/corpus/crash-feature-table-offset-overflow.data \
	tests/fuzz/corpus/crash-folded-no-samples.data \
	tests/fuzz/corpus/seed-file-cpu-time.data \
	tests/fuzz/corpus/seed-file-demo.data \
	tests/fuzz/corpus/seed-file-forkexec.data \
	tests/fuzz/corpus/seed-file-threads.data \
	tests/fuzz/corpus/seed-file-two-events.data \
	tests/fuzz/corpus/seed-pipe-buildid-mmap.data \
	tests/fuzz/corpus/seed-pipe-demo.data

TESTS += tests/fuzz/replay-corpus.sh
EXTRA_DIST += \
	tests/fuzz/replay-corpus.sh \
	tests/fuzz/run-fuzzer.sh \
	$(FUZZ_CORPUS)

# tests/fuzz/run-fuzzer.sh asks the build tree how the core is made, so that
# its clang build of the libFuzzer target follows src/core/local.mk.
fuzz-core-vars: $(nodist_src_core_libcore_a_SOURCES)
	@echo "sources: $(src_core_libcore_a_SOURCES)"
	@echo "built_sources: $(nodist_src_core_libcore_a_SOURCES)"
	@echo "cflags: $(src_core_libcore_a_CFLAGS)"
	@echo "libs: $(core_libs)"
.PHONY: fuzz-core-vars
