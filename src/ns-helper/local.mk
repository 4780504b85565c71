# The namespace helper: the only privileged code (see README in this folder).
# libnshelper.a is its ELF build-id reader alone, for the unit test.
noinst_LIBRARIES += src/ns-helper/libnshelper.a
src_ns_helper_libnshelper_a_SOURCES = \
	src/ns-helper/elf-build-id.c src/ns-helper/elf-build-id.h \
	src/basic/io.c src/basic/io.h

# One concern per file; protocol.c is shared with the client in the core.
# Of src/basic it links only the files that need nothing else: io.c (whole
# preads) and why.c (the failure convention).
ns_helper_sources = \
	src/ns-helper/main.c \
	src/basic/io.c src/basic/io.h \
	src/basic/why.c src/basic/why.h \
	src/ns-helper/auth.c src/ns-helper/auth.h \
	src/ns-helper/broker.c src/ns-helper/broker.h \
	src/ns-helper/broker-job.c src/ns-helper/broker-job.h \
	src/ns-helper/check.c src/ns-helper/check.h \
	src/ns-helper/debuginfo.c src/ns-helper/debuginfo.h \
	src/ns-helper/die.h \
	src/ns-helper/elf-build-id.c src/ns-helper/elf-build-id.h \
	src/ns-helper/landlock.c src/ns-helper/landlock.h \
	src/ns-helper/open-ways.c src/ns-helper/open-ways.h \
	src/ns-helper/opener.c src/ns-helper/opener.h \
	src/ns-helper/parser.c src/ns-helper/parser.h \
	src/ns-helper/pin.c src/ns-helper/pin.h \
	src/ns-helper/pool.c src/ns-helper/pool.h \
	src/ns-helper/protocol.c src/ns-helper/protocol.h \
	src/ns-helper/protocol-decode.c \
	src/ns-helper/sandbox.c src/ns-helper/sandbox.h \
	src/ns-helper/slots.c src/ns-helper/slots.h
# Links neither libelf nor libdw: it parses no more ELF than the build-id.
ns_helper_cflags = $(AM_CFLAGS) $(JSON_C_CFLAGS) $(LIBCAP_CFLAGS) $(LIBSECCOMP_CFLAGS) \
	-fstack-protector-strong
ns_helper_ldflags = -Wl,-z,relro -Wl,-z,now
ns_helper_ldadd = $(JSON_C_LIBS) $(LIBCAP_LIBS) $(LIBSECCOMP_LIBS)

libexec_PROGRAMS += eu-stacktrace-ns-helper
eu_stacktrace_ns_helper_SOURCES = $(ns_helper_sources)
eu_stacktrace_ns_helper_CFLAGS = $(ns_helper_cflags)
eu_stacktrace_ns_helper_LDFLAGS = $(ns_helper_ldflags)
eu_stacktrace_ns_helper_LDADD = $(ns_helper_ldadd)

# The system service: systemd listens on the socket and starts one helper
# per connection.  The service unit names the helper's installed path.
ns_helper_units = \
	src/ns-helper/eu-stacktrace-ns-helper.socket \
	src/ns-helper/eu-stacktrace-ns-helper@.service
if INSTALL_SYSTEMD_UNITS
systemdsystemunit_DATA = $(ns_helper_units)
endif
# Built by `make all' either way, so that the tests can check them.
noinst_DATA = src/ns-helper/eu-stacktrace-ns-helper@.service
src/ns-helper/eu-stacktrace-ns-helper@.service: \
		$(srcdir)/src/ns-helper/eu-stacktrace-ns-helper@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) src/ns-helper && \
	sed -e 's|@libexecdir[@]|$(libexecdir)|g' \
		$(srcdir)/src/ns-helper/eu-stacktrace-ns-helper@.service.in > $@.tmp && \
	mv $@.tmp $@
CLEANFILES += src/ns-helper/eu-stacktrace-ns-helper@.service
EXTRA_DIST += \
	src/ns-helper/README \
	src/ns-helper/eu-stacktrace-ns-helper.socket \
	src/ns-helper/eu-stacktrace-ns-helper@.service.in
