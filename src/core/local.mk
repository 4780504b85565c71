# The unprivileged core: a library the tool and the tests link.
noinst_LIBRARIES += src/core/libcore.a
src_core_libcore_a_SOURCES = \
	src/core/callchain.h \
	src/core/elf-file.c src/core/elf-file.h \
	src/core/event.h \
	src/core/hashmap.c src/core/hashmap.h \
	src/core/input.c src/core/input.h \
	src/core/log.c src/core/log.h \
	src/core/ordered-queue.c src/core/ordered-queue.h \
	src/core/perf-format.h \
	src/core/process.c src/core/process.h \
	src/core/regs.c src/core/regs.h \
	src/core/resolver.c src/core/resolver.h \
	src/core/session.c src/core/session.h \
	src/core/sink.c src/core/sink.h \
	src/core/sink-folded.c \
	src/core/sink-json.c \
	src/core/sink-text.c \
	src/core/source.c src/core/source.h \
	src/core/source-perf.c src/core/source-perf.h \
	src/core/symbolize.c src/core/symbolize.h \
	src/core/symbols.c src/core/symbols.h \
	src/core/unwind.c src/core/unwind.h \
	src/core/unwinder.c src/core/unwinder.h
src_core_libcore_a_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(JSON_C_CFLAGS)

core_libs = $(LIBDW_LIBS) $(LIBELF_LIBS) $(JSON_C_LIBS)

bin_PROGRAMS += eu-stacktrace
eu_stacktrace_SOURCES = src/core/main.c
eu_stacktrace_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
eu_stacktrace_LDADD = src/core/libcore.a $(core_libs)

# The same tool built with AddressSanitizer and UBSan, run by the test suite.
check_PROGRAMS += tests/eu-stacktrace-asan
tests_eu_stacktrace_asan_SOURCES = src/core/main.c $(src_core_libcore_a_SOURCES)
tests_eu_stacktrace_asan_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(JSON_C_CFLAGS) \
	-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g -O1
tests_eu_stacktrace_asan_LDFLAGS = -fsanitize=address,undefined
tests_eu_stacktrace_asan_LDADD = $(core_libs)
