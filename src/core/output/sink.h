/* Output sinks: where unwound samples go.  One file per format; each is a
 * small vtable so that new formats (Sysprof captures, flame graphs, pprof)
 * plug in without touching the unwinder.  */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "core/unwind/callchain.h"

struct st_sink;
struct st_strbuf;

/* What the command line says about output, for the sinks that care.  */
struct st_sink_options {
  const char *output_name;  /* the -o path, or NULL for standard output */
  /* -f svg */
  const char *title;        /* --title, or NULL for the default */
  unsigned width;           /* --width, in pixels */
  double min_width;         /* --minwidth: narrower frames are merged */
  bool reverse;             /* --reverse: an icicle of reversed stacks */
};

struct st_sink_ops {
  const char *name;
  const char *description;
  /* Readable only complete (a profile written at the end, a capture):
     given with -o, it replaces the file only when the run ends well.  */
  bool whole_file;
  /* Allocates the sink writing to OUT (owned by the caller).  */
  struct st_sink *(*new) (FILE *out, const struct st_sink_options *opts);
  /* Optional: formats one sample into OUT without touching the sink, so
     that unwinding threads can do it in parallel; the sample op then gets
     the bytes in chain->formatted.  Must be thread-safe.  */
  int (*format) (const struct st_callchain *chain, struct st_strbuf *out);
  /* One sample; returns 0 or -errno (a write error).  */
  int (*sample) (struct st_sink *sink, const struct st_callchain *chain);
  /* Optional: every other event (mmap, comm, fork, exit, ...), in input
     order with the samples, for formats that record processes.  */
  int (*event) (struct st_sink *sink, const struct st_event *event);
  /* End of the input: write what was aggregated; 0 or -errno.  */
  int (*finish) (struct st_sink *sink);
  void (*free) (struct st_sink *sink);
};

extern const struct st_sink_ops st_sink_text;
extern const struct st_sink_ops st_sink_folded;
extern const struct st_sink_ops st_sink_json;
extern const struct st_sink_ops st_sink_svg;
extern const struct st_sink_ops st_sink_pprof;
extern const struct st_sink_ops st_sink_sysprof;

/* Writes for sinks that keep the output's errno (ENOSPC, EPIPE) for the
   message, not a generic EIO.  N bytes to OUT: 0 or -errno.  */
int st_sink_write (FILE *out, const void *data, size_t n);
/* Flushes OUT: 0, or -errno of the write that failed (-EIO if stdio lost
   it).  Also reports an earlier error the stream kept.  */
int st_sink_flush (FILE *out);

/* The sink for a -f name, or NULL.  */
const struct st_sink_ops *st_sink_lookup (const char *name);
/* "text, folded, json, ...": for messages and --help.  */
const char *st_sink_names (void);

/* The name shown for a frame in folded stacks and summaries:
   the function, "[module-basename]" or "[unknown]".  */
const char *st_frame_display_name (const struct st_frame *f, char *buf, size_t size);
