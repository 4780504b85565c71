# debuginfod: a real debuginfod server (Debian's), started by the test on
# a free port with a folder of its own, serves the debuginfo and the
# executables that the recordings lack; broken servers are python stand-ins.
# Needs perf, debuginfod, binutils and python3; never skips.
TESTS += tests/debuginfod/debuginfod.sh
EXTRA_DIST += \
	tests/debuginfod/debuginfod.sh \
	tests/debuginfod/rates.py \
	tests/debuginfod/module-frames.py \
	tests/debuginfod/fake-server.py \
	tests/debuginfod/on-tty.py

# The program whose only CFI will be .debug_frame: gcc writes it there
# instead of .eh_frame with these flags.  The test splits off the debug file
# and strips the rest.
check_PROGRAMS += tests/debuginfod/nocfi
tests_debuginfod_nocfi_SOURCES = tests/debuginfod/nocfi.c
tests_debuginfod_nocfi_CFLAGS = $(WORKLOAD_CFLAGS) -fno-asynchronous-unwind-tables \
	-fno-unwind-tables
