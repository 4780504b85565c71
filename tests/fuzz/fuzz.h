/* What every fuzz target here shares (see README).
 *
 * A target defines LLVMFuzzerTestOneInput.  Built with clang's
 * -fsanitize=fuzzer (tests/fuzz/run-fuzzer.sh, which defines
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) libFuzzer's main drives it;
 * built by make check with ASan/UBSan but without libFuzzer, fuzz-replay.c's
 * main replays the files and directories it is given, so that each corpus
 * runs as a regression test on any compiler.
 *
 * FUZZ_VERBOSE=1 in the environment shows the tool's warnings and debug
 * messages, FUZZ_VERBOSE=error only what a malformed input is refused for.  */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* 0 quiet, 1 the input's error, 2 everything (FUZZ_VERBOSE).  */
extern int fuzz_verbose;

/* Once per process (each target calls it first, every time): sets the log
   level from FUZZ_VERBOSE and keeps every target off the network (a fuzzed
   build-id must never become a debuginfod query).  */
void fuzz_init (void);

/* DATA as a NUL-terminated string: a copy of exactly SIZE bytes plus the
   NUL, so that ASan sees a read past the input.  Never NULL (aborts).  */
char *fuzz_strndup (const uint8_t *data, size_t size);
