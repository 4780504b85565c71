#include "config.h"

#include <stdlib.h>

#include "basic/strbuf.h"
#include "core/output/sink-lines.h"

/* This is the tool's hot output path: each sample is formatted into one
   buffer and written with one fwrite.  */
struct st_sink {
  FILE *out;
  struct st_strbuf buf;
  int (*format) (const struct st_callchain *chain, struct st_strbuf *buf);
};

struct st_sink *
st_line_sink_new (FILE *out, int (*format) (const struct st_callchain *chain,
                                            struct st_strbuf *buf))
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s != NULL)
    {
      s->out = out;
      s->format = format;
    }
  return s;
}

int
st_line_sink_sample (struct st_sink *s, const struct st_callchain *c)
{
  const char *text = c->formatted;
  size_t len = c->formatted_len;
  if (text == NULL)
    {
      st_strbuf_reset (&s->buf);
      int r = s->format (c, &s->buf);
      if (r < 0)
        return r;
      text = s->buf.data;
      len = s->buf.len;
    }
  return st_sink_write (s->out, text, len);
}

int
st_line_sink_finish (struct st_sink *s)
{
  return st_sink_flush (s->out);
}

void
st_line_sink_free (struct st_sink *s)
{
  st_strbuf_free (&s->buf);
  free (s);
}
