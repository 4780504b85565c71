# Cross-architecture unwinding (issue 14): workloads cross-compiled for each
# architecture, run under qemu-user, stopped by gdb-multiarch, written as
# perf.data samples and unwound here; gdb's backtrace is the oracle.  Needs
# the cross compilers, qemu-user-static and gdb-multiarch
# (tools/install-deps.sh).  15-45 s per architecture on a loaded 2-core
# machine; sysroot.sh ~30 s.
ARCH_TESTS = \
	tests/arch/x86_64.sh \
	tests/arch/i386.sh \
	tests/arch/aarch64.sh \
	tests/arch/arm.sh \
	tests/arch/arm-exidx.sh \
	tests/arch/ppc64le.sh \
	tests/arch/s390x.sh \
	tests/arch/riscv64.sh \
	tests/arch/sysroot.sh \
	tests/arch/perf-zstd.sh \
	tests/arch/perf-threads-zstd.sh \
	tests/arch/perf-fp.sh \
	tests/arch/foreign.sh \
	tests/arch/lbr.sh

TESTS += $(ARCH_TESTS)
EXTRA_DIST += \
	$(ARCH_TESTS) \
	tests/arch/arch.sh \
	tests/arch/arch-lib.sh \
	tests/arch/arch-check.py \
	tests/arch/perf-byteswap.py \
	tests/arch/lbr-check.py \
	tests/arch/perfparser-lbr/README \
	tests/arch/perfparser-lbr/LICENSE.GPLv3 \
	tests/arch/perfparser-lbr/perf.lbr.data.zlib \
	tests/arch/perfparser-lbr/perf.lbr.data.expected.txt.zlib \
	tests/arch/perfparser-lbr/vector_static_gcc_v9.1.0.zlib \
	tests/arch/harvest.py \
	tests/arch/archwork.c \
	tests/arch/archlib.c

# perf record -g: the deep workload with frame pointers, so that the
# kernel's frame-pointer walk gives a chain worth comparing.
check_PROGRAMS += tests/arch/deep-fp
tests_arch_deep_fp_SOURCES = tests/workloads/deep.c
tests_arch_deep_fp_CFLAGS = -O2 -g -fno-omit-frame-pointer
