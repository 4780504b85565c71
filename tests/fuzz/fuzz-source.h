/* The input side of eu-stacktrace's run() (src/core/main.c) for the
 * targets that fuzz a whole recording: fuzz-perf-source.c and
 * fuzz-sysprof-source.c.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads DATA as eu-stacktrace reads a recording: written to a memfd (a
   mapped, seekable file) or, when AS_PIPE, to a pipe (the streaming path,
   records copied out of a buffer) when one can hold it; opened with
   st_input_open on /proc/self/fd/N; the source st_source_detect finds;
   its run feeding st_session_handle_event (one job, no threads); the output
   written by SINK (text, folded, json, sysprof...) to /dev/null.  */
void fuzz_source_run (const uint8_t *data, size_t size, bool as_pipe, const char *sink);
/* The same for a file of the caller's, at PATH (a perf.data directory's
   header file, whose data.N files lie beside it).  */
void fuzz_source_run_file (const char *path, const char *sink);
