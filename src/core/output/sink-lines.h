/* The write path of the sinks that write each sample as it comes (text,
 * JSON Lines): the sink's .format op makes the sample's bytes (in an
 * unwinding thread when it can: chain->formatted), and one write puts them
 * out.  A sink of this kind is its .new, which names its format op, and its
 * .format; the other ops are these.  */
#pragma once

#include <stdio.h>

#include "core/output/sink.h"

/* A sink writing to OUT the bytes FORMAT makes of each sample.  */
struct st_sink *st_line_sink_new (FILE *out,
                                  int (*format) (const struct st_callchain *chain,
                                                 struct st_strbuf *buf));
int st_line_sink_sample (struct st_sink *s, const struct st_callchain *chain);
int st_line_sink_finish (struct st_sink *s);
void st_line_sink_free (struct st_sink *s);

/* Defines the ops table VAR of a line sink: format NAME (-f NAME) whose
   samples FORMAT_FN formats; its .new is FORMAT_FN's line sink.  */
#define ST_DEFINE_LINE_SINK(var, name_, description_, format_fn)               \
  static struct st_sink *                                                     \
  format_fn##_sink_new (FILE *out, const struct st_sink_options *opts)        \
  {                                                                           \
    (void) opts;                                                              \
    return st_line_sink_new (out, format_fn);                                 \
  }                                                                           \
  const struct st_sink_ops var = {                                            \
    .name = name_,                                                            \
    .description = description_,                                              \
    .new = format_fn##_sink_new,                                              \
    .format = format_fn,                                                      \
    .sample = st_line_sink_sample,                                            \
    .finish = st_line_sink_finish,                                            \
    .free = st_line_sink_free,                                                \
  }
