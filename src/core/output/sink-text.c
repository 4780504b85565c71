/* -f text: one block per sample, in the shape of `perf script`, so that
 * people and tools used to perf's output read it without surprise.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/output/sink-lines.h"
#include "basic/strbuf.h"

/* Text is this tool's hot output path: each sample is formatted by hand
   into one buffer and written with one fwrite, without printf's parsing
   (printf was the largest single cost of the whole run).  */
static int
text_format (const struct st_callchain *c, struct st_strbuf *b)
{
  const struct st_sample *smp = c->sample;
  /* COMM PID/TID SECONDS.NANOSECONDS cpu CPU:  */
  st_strbuf_put_str (b, c->comm ? c->comm : "[unknown]");
  st_strbuf_put_char (b, ' ');
  st_strbuf_put_signed (b, smp->pid);
  st_strbuf_put_char (b, '/');
  st_strbuf_put_signed (b, smp->tid);
  st_strbuf_put_char (b, ' ');
  st_strbuf_put_dec (b, smp->time / 1000000000, 0);
  st_strbuf_put_char (b, '.');
  st_strbuf_put_dec (b, smp->time % 1000000000, 9);
  st_strbuf_put_str (b, " cpu ");
  st_strbuf_put_dec (b, smp->cpu, 0);
  if (c->container != NULL)
    {
      /* Host processes' lines stay as perf script writes them.  */
      st_strbuf_put_str (b, " container ");
      st_strbuf_put_str (b, c->container->kind);
      st_strbuf_put_char (b, ':');
      st_strbuf_put_str (b, c->container->name);
      st_strbuf_put_str (b, " id ");
      st_strbuf_put_str (b, c->container->id);
    }
  st_strbuf_put_str (b, ":\n");
  /* One line per frame: PC SYMBOL+0xOFFSET (MODULE)  */
  for (size_t i = 0; i < c->n_frames; i++)
    {
      const struct st_frame *f = &c->frames[i];
      st_strbuf_put_char (b, '\t');
      st_strbuf_put_hex (b, f->pc, 16);
      st_strbuf_put_char (b, ' ');
      if (f->symbol == NULL)
        st_strbuf_put_str (b, "[unknown]");
      else
        {
          st_strbuf_put_str (b, f->symbol);
          if (f->inlined)
            st_strbuf_put_str (b, " (inlined)");
          else
            {
              st_strbuf_put_str (b, "+0x");
              st_strbuf_put_hex (b, f->offset, 0);
            }
        }
      st_strbuf_put_str (b, " (");
      st_strbuf_put_str (b, f->module ? f->module : "[unknown]");
      st_strbuf_put_str (b, ")\n");
    }
  if (c->stop != ST_STOP_END)
    {
      st_strbuf_put_str (b, "\t                 (unwind stopped: ");
      st_strbuf_put_str (b, st_stop_reason_name (c->stop));
      if (c->stop_detail != NULL && c->stop == ST_STOP_UNWIND_ERROR)
        {
          st_strbuf_put_str (b, ": ");
          st_strbuf_put_str (b, c->stop_detail);
        }
      st_strbuf_put_str (b, ")\n");
    }
  st_strbuf_put_char (b, '\n');
  return st_strbuf_failed (b) ? -ENOMEM : 0;
}

ST_DEFINE_LINE_SINK (st_sink_text, "text", "one block per sample, like perf script", text_format);
