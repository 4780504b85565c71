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
