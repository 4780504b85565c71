/* The output file: -o PATH or standard output, and its errors, which name
 * it (the path, or "standard output") and keep the errno.
 *
 * A whole-file format (folded, svg, pprof, sysprof: a profile that is only
 * readable complete) given with -o PATH is written to a temporary file in
 * PATH's directory and renamed over PATH when the run ends well: a failed
 * run (a full disk, sampling refused) leaves a good profile that was at
 * PATH before untouched, and no reader ever opens a half-written one.  The
 * file keeps the mode and owner of the one it replaces.  PATH is written in
 * place when it is not a regular file (/dev/null, a FIFO), a symbolic link,
 * a file with other hard links, or when no file can be created next to it.
 * Streaming formats (text, json) are always written in place, as they go:
 * `tail -f' follows them, and every record in them is whole.  */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct st_output {
  FILE *file;
  const char *name;   /* for messages: PATH, or "standard output" */
  const char *path;   /* -o PATH; NULL: standard output */
  char *tmp_path;     /* written here, renamed to PATH; NULL: in place */
};

/* Opens PATH (NULL or "-": standard output), through a temporary file when
   REPLACE_WHOLE.  0, or -errno after saying why.  */
int st_output_open (struct st_output *out, const char *path, bool replace_whole);

/* Flushes and closes.  KEEP: the output is good, the temporary file takes
   PATH's place; else it is removed and PATH stays as it was.  0, or -errno
   after saying why (QUIET: say nothing, an error was told already).  */
int st_output_close (struct st_output *out, bool keep, bool quiet);
