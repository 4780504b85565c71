# The debuginfod client (see README in this folder).  It is part of the
# unprivileged core: its sources go into src/core/libcore.a (and so into
# the sanitizer build of the core too).  libdebuginfod is not linked: lib.c
# opens it with dlopen when a client starts (its libcurl costs start-up time).
src_core_libcore_a_SOURCES += \
	src/debuginfod/client.c \
	src/debuginfod/debuginfod.h \
	src/debuginfod/env.c \
	src/debuginfod/env.h \
	src/debuginfod/lib.c \
	src/debuginfod/lib.h
src_core_libcore_a_CFLAGS += $(LIBDEBUGINFOD_CFLAGS)
EXTRA_DIST += src/debuginfod/README
