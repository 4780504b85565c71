# The basic layer (see README in this folder): general utilities that
# depend on nothing else of ours.  Built into src/core/libcore.a.
src_core_libcore_a_SOURCES = \
	src/basic/array.c src/basic/array.h \
	src/basic/hashmap.c src/basic/hashmap.h \
	src/basic/string-arena.c src/basic/string-arena.h \
	src/basic/io.c src/basic/io.h \
	src/basic/log.c src/basic/log.h \
	src/basic/procfs.c src/basic/procfs.h \
	src/basic/fd-limit.c src/basic/fd-limit.h \
	src/basic/build-id.h \
	src/basic/elf-begin.c src/basic/elf-begin.h \
	src/basic/frozen-copy.c src/basic/frozen-copy.h \
	src/basic/subid.c src/basic/subid.h \
	src/basic/bsearch.h \
	src/basic/bytes.h \
	src/basic/clock.h \
	src/basic/cleanup.h \
	src/basic/signals.c src/basic/signals.h \
	src/basic/sigbus-guard.c src/basic/sigbus-guard.h \
	src/basic/strbuf.c src/basic/strbuf.h \
	src/basic/untrusted.c src/basic/untrusted.h \
	src/basic/why.c src/basic/why.h
EXTRA_DIST += src/basic/README
