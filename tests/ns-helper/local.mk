# The namespace helper (src/ns-helper/) against real mount namespaces, made
# with `unshare -m' as root and `unshare -U -m -r' as a user created for the
# test, with programs sampled live.  They run as root, as CI does.
NS_HELPER_TESTS = \
	tests/ns-helper/ways.sh \
	tests/ns-helper/debuginfo.sh \
	tests/ns-helper/chroot-debuginfo.sh \
	tests/ns-helper/user.sh \
	tests/ns-helper/service.sh \
	tests/ns-helper/attacks.sh \
	tests/ns-helper/authz.sh \
	tests/ns-helper/fuzz.sh \
	tests/ns-helper/sandbox.sh \
	tests/ns-helper/restart.sh \
	tests/ns-helper/review.sh \
	tests/ns-helper/pool.sh \
	tests/ns-helper/pool-fork.sh \
	tests/ns-helper/hung.sh \
	tests/ns-helper/unread.sh \
	tests/ns-helper/batch.sh \
	tests/ns-helper/prefetch.sh \
	tests/ns-helper/pidreuse.sh \
	tests/ns-helper/tworoots.sh \
	tests/ns-helper/nonreg.sh
TESTS += $(NS_HELPER_TESTS)
EXTRA_DIST += \
	$(NS_HELPER_TESTS) \
	tests/ns-helper/ns-lib.sh \
	tests/ns-helper/ns-run.sh \
	tests/ns-helper/nsh.py \
	tests/ns-helper/attacks.py \
	tests/ns-helper/authz.py \
	tests/ns-helper/review.py \
	tests/ns-helper/unread.py \
	tests/ns-helper/batch.py \
	tests/ns-helper/pidreuse.py \
	tests/ns-helper/tworoots.py \
	tests/ns-helper/nonreg.py \
	tests/ns-helper/fuzz.py

# The program that runs inside the namespaces, and its library.  Its own
# functions are not exported, so that once stripped only its debuginfo
# names them; it finds its library in /app/lib, as a flatpak app would.
check_PROGRAMS += \
	tests/ns-helper/libnswork.so \
	tests/ns-helper/nsprog \
	tests/ns-helper/enter-root \
	tests/ns-helper/nsh-client \
	tests/ns-helper/eu-stacktrace-ns-helper-test
tests_ns_helper_libnswork_so_SOURCES = tests/ns-helper/nswork.c tests/ns-helper/nswork.h
tests_ns_helper_libnswork_so_CFLAGS = $(WORKLOAD_CFLAGS) -fPIC
tests_ns_helper_libnswork_so_LDFLAGS = -shared -Wl,-soname,libnswork.so
tests_ns_helper_nsprog_SOURCES = tests/ns-helper/nsprog.c tests/ns-helper/nswork.h
tests_ns_helper_nsprog_CFLAGS = $(WORKLOAD_CFLAGS)
tests_ns_helper_nsprog_LDADD = tests/ns-helper/libnswork.so
tests_ns_helper_nsprog_LDFLAGS = -Wl,-rpath,/app/lib

# pivot_root into a namespace's tmpfs (ns-run.sh).
tests_ns_helper_enter_root_SOURCES = tests/ns-helper/enter-root.c

# A client in C, with the project's protocol code: for an unprivileged user,
# and for timing round trips (bench/bench-ns-helper.sh).
tests_ns_helper_nsh_client_SOURCES = tests/ns-helper/nsh-client.c \
	src/ns-helper/protocol.c src/ns-helper/protocol.h src/ns-helper/protocol-decode.c \
	src/ns-helper/elf-build-id.c src/ns-helper/elf-build-id.h \
	src/basic/io.c src/basic/io.h src/basic/why.c src/basic/why.h
tests_ns_helper_nsh_client_CFLAGS = $(AM_CFLAGS) $(JSON_C_CFLAGS)
tests_ns_helper_nsh_client_LDADD = $(JSON_C_LIBS)

# The helper with a debug request that makes a forbidden system call, so
# that a test sees seccomp kill it.  Never installed.
tests_ns_helper_eu_stacktrace_ns_helper_test_SOURCES = $(ns_helper_sources)
tests_ns_helper_eu_stacktrace_ns_helper_test_CPPFLAGS = $(AM_CPPFLAGS) -DST_NSH_TEST_HOOKS
tests_ns_helper_eu_stacktrace_ns_helper_test_CFLAGS = $(ns_helper_cflags)
tests_ns_helper_eu_stacktrace_ns_helper_test_LDFLAGS = $(ns_helper_ldflags)
tests_ns_helper_eu_stacktrace_ns_helper_test_LDADD = $(ns_helper_ldadd)
