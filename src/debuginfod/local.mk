# The debuginfod client (see README in this folder).  It is part of the
# unprivileged core: its sources go into src/core/libcore.a (and so into
# the sanitizer build of the core too), and libdebuginfod into core_libs.
src_core_libcore_a_SOURCES += \
	src/debuginfod/client.c \
	src/debuginfod/debuginfod.h \
	src/debuginfod/env.c \
	src/debuginfod/env.h
src_core_libcore_a_CFLAGS += $(LIBDEBUGINFOD_CFLAGS)
core_libs += $(LIBDEBUGINFOD_LIBS)
EXTRA_DIST += src/debuginfod/README
