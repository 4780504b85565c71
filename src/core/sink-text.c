/* -f text: one block per sample, in the shape of `perf script`, so that
 * people and tools used to perf's output read it without surprise.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "core/sink.h"

struct st_sink {
  FILE *out;
};

static struct st_sink *
text_new (FILE *out)
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s != NULL)
    s->out = out;
  return s;
}

static int
text_sample (struct st_sink *s, const struct st_callchain *c)
{
  const struct st_sample *smp = c->sample;
  FILE *out = s->out;
  fprintf (out, "%s %d/%d %" PRIu64 ".%09" PRIu64 " cpu %" PRIu32 ":\n",
           c->comm ? c->comm : "[unknown]", smp->pid, smp->tid,
           smp->time / 1000000000, smp->time % 1000000000, smp->cpu);
  for (size_t i = 0; i < c->n_frames; i++)
    {
      const struct st_frame *f = &c->frames[i];
      fprintf (out, "\t%16" PRIx64 " ", f->pc);
      if (f->symbol == NULL)
        fputs ("[unknown]", out);
      else if (f->inlined)
        fprintf (out, "%s (inlined)", f->symbol);
      else
        fprintf (out, "%s+0x%" PRIx64, f->symbol, f->offset);
      fprintf (out, " (%s)\n", f->module ? f->module : "[unknown]");
    }
  if (c->stop != ST_STOP_END)
    {
      fprintf (out, "\t%16s (unwind stopped: %s", "", st_stop_reason_name (c->stop));
      if (c->stop_detail != NULL && c->stop == ST_STOP_UNWIND_ERROR)
        fprintf (out, ": %s", c->stop_detail);
      fputs (")\n", out);
    }
  fputc ('\n', out);
  return ferror (out) ? -EIO : 0;
}

static int
text_finish (struct st_sink *s)
{
  return fflush (s->out) == 0 ? 0 : -errno;
}

static void
text_free (struct st_sink *s)
{
  free (s);
}

const struct st_sink_ops st_sink_text = {
  .name = "text",
  .description = "one block per sample, like perf script",
  .new = text_new,
  .sample = text_sample,
  .finish = text_finish,
  .free = text_free,
};
