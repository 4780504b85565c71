# Workloads that the end-to-end tests (tests/e2e/) record with perf.  They
# are built -O2 -g, without frame pointers, so that unwinding has to follow
# the DWARF CFI of optimized code.  (A CFLAGS given to configure comes after
# these flags and wins.)
WORKLOAD_CFLAGS = $(AM_CFLAGS) -O2 -g

check_PROGRAMS += \
	tests/workloads/deep \
	tests/workloads/libwork.so \
	tests/workloads/shlib \
	tests/workloads/threads \
	tests/workloads/forkexec \
	tests/workloads/manyproc \
	tests/workloads/names

tests_workloads_deep_SOURCES = tests/workloads/deep.c
tests_workloads_deep_CFLAGS = $(WORKLOAD_CFLAGS)

# The shared library of the shlib workload.  No libtool: a plain -shared
# link, with a soname so that shlib's DT_NEEDED is "libwork.so" (found by
# its rpath) rather than the relative path it was linked with.
tests_workloads_libwork_so_SOURCES = tests/workloads/libwork.c tests/workloads/libwork.h
tests_workloads_libwork_so_CFLAGS = $(WORKLOAD_CFLAGS) -fPIC
tests_workloads_libwork_so_LDFLAGS = -shared -Wl,-soname,libwork.so

tests_workloads_shlib_SOURCES = tests/workloads/shlib.c tests/workloads/libwork.h
tests_workloads_shlib_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_shlib_LDADD = tests/workloads/libwork.so
tests_workloads_shlib_LDFLAGS = -Wl,-rpath,$(abs_top_builddir)/tests/workloads

tests_workloads_threads_SOURCES = tests/workloads/threads.c
tests_workloads_threads_CFLAGS = $(WORKLOAD_CFLAGS) -pthread
tests_workloads_threads_LDFLAGS = -pthread

# forkexec runs the deep workload (its default: the "deep" next to itself).
tests_workloads_forkexec_SOURCES = tests/workloads/forkexec.c
tests_workloads_forkexec_CFLAGS = $(WORKLOAD_CFLAGS)

# manyproc runs the deep workload many times, one short process each.
tests_workloads_manyproc_SOURCES = tests/workloads/manyproc.c
tests_workloads_manyproc_CFLAGS = $(WORKLOAD_CFLAGS)

# names makes records any user can make, by the million (user-names.sh).
tests_workloads_names_SOURCES = tests/workloads/names.c
tests_workloads_names_CFLAGS = $(WORKLOAD_CFLAGS)

# cxx: C++ names (templates, lambdas, std:: containers, exceptions) for
# tests/e2e/demangle.sh.  (Its Rust sibling, rustwork.rs, is built by the
# test with rustc.)
check_PROGRAMS += tests/workloads/cxx
tests_workloads_cxx_SOURCES = tests/workloads/cxx.cc
tests_workloads_cxx_CXXFLAGS = -O2 -g -Wall -Wextra
EXTRA_DIST += tests/workloads/rustwork.rs

# dlopen loads plugin.so after it has run for a while (tests/live/).
check_PROGRAMS += tests/workloads/dlopen tests/workloads/plugin.so
tests_workloads_dlopen_SOURCES = tests/workloads/dlopen.c
tests_workloads_dlopen_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_dlopen_LDADD = -ldl
tests_workloads_plugin_so_SOURCES = tests/workloads/plugin.c
tests_workloads_plugin_so_CFLAGS = $(WORKLOAD_CFLAGS) -fPIC
tests_workloads_plugin_so_LDFLAGS = -shared -Wl,-soname,plugin.so
# The same without CFI: libdwfl opens its Dwarf to unwind it
# (tests/e2e/inflate-bounds.sh).
check_PROGRAMS += tests/workloads/plugin-nocfi.so
tests_workloads_plugin_nocfi_so_SOURCES = tests/workloads/plugin.c
tests_workloads_plugin_nocfi_so_CFLAGS = $(WORKLOAD_CFLAGS) -fPIC -fno-asynchronous-unwind-tables \
	-fno-unwind-tables
tests_workloads_plugin_nocfi_so_LDFLAGS = -shared -Wl,-soname,plugin-nocfi.so

# Many short programs run one after the other: samples while ld.so loads
# them (tests/e2e/unwinder-equal.sh).
EXTRA_DIST += tests/workloads/exec-loop.sh
