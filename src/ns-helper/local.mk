# The namespace helper: the only privileged code (see README in this folder).
# Today: the ELF build-id reader it will use to check every fd it returns,
# without linking libelf.
noinst_LIBRARIES += src/ns-helper/libnshelper.a
src_ns_helper_libnshelper_a_SOURCES = \
	src/ns-helper/elf-build-id.c src/ns-helper/elf-build-id.h
EXTRA_DIST += src/ns-helper/README
