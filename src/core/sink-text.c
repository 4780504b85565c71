/* -f text: one block per sample, in the shape of `perf script`, so that
 * people and tools used to perf's output read it without surprise.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sink.h"

/* Text is this tool's hot output path: each sample is formatted by hand
   into one buffer and written with one fwrite, without printf's parsing
   (printf was the largest single cost of the whole run).  */
struct st_sink {
  FILE *out;
  char *buf;
  size_t len, cap;
};

static struct st_sink *
text_new (FILE *out, const struct st_sink_options *opts)
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->out = out;
  s->cap = 1 << 16;
  s->buf = malloc (s->cap);
  if (s->buf == NULL)
    {
      free (s);
      return NULL;
    }
  return s;
}

static bool
reserve (struct st_sink *s, size_t n)
{
  if (s->len + n <= s->cap)
    return true;
  size_t cap = s->cap;
  while (s->len + n > cap)
    cap *= 2;
  char *p = realloc (s->buf, cap);
  if (p == NULL)
    return false;
  s->buf = p;
  s->cap = cap;
  return true;
}

static void
put_str (struct st_sink *s, const char *str)
{
  size_t n = strlen (str);
  if (reserve (s, n))
    {
      memcpy (s->buf + s->len, str, n);
      s->len += n;
    }
}

static void
put_char (struct st_sink *s, char c)
{
  if (reserve (s, 1))
    s->buf[s->len++] = c;
}

/* V in hex, right-aligned in WIDTH columns (0: no padding).  */
static void
put_hex (struct st_sink *s, uint64_t v, int width)
{
  static const char digits[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  do
    {
      tmp[n++] = digits[v & 15];
      v >>= 4;
    }
  while (v != 0);
  if (!reserve (s, (width > n ? width : n)))
    return;
  for (int i = n; i < width; i++)
    s->buf[s->len++] = ' ';
  while (n > 0)
    s->buf[s->len++] = tmp[--n];
}

/* V in decimal, zero-padded to WIDTH digits.  */
static void
put_dec (struct st_sink *s, uint64_t v, int width)
{
  char tmp[24];
  int n = 0;
  do
    {
      tmp[n++] = '0' + v % 10;
      v /= 10;
    }
  while (v != 0);
  while (n < width)
    tmp[n++] = '0';
  if (!reserve (s, n))
    return;
  while (n > 0)
    s->buf[s->len++] = tmp[--n];
}

static void
put_signed (struct st_sink *s, int64_t v)
{
  if (v < 0)
    {
      put_char (s, '-');
      put_dec (s, -(uint64_t) v, 0);
    }
  else
    put_dec (s, v, 0);
}

static int
text_sample (struct st_sink *s, const struct st_callchain *c)
{
  const struct st_sample *smp = c->sample;
  s->len = 0;
  /* COMM PID/TID SECONDS.NANOSECONDS cpu CPU:  */
  put_str (s, c->comm ? c->comm : "[unknown]");
  put_char (s, ' ');
  put_signed (s, smp->pid);
  put_char (s, '/');
  put_signed (s, smp->tid);
  put_char (s, ' ');
  put_dec (s, smp->time / 1000000000, 0);
  put_char (s, '.');
  put_dec (s, smp->time % 1000000000, 9);
  put_str (s, " cpu ");
  put_dec (s, smp->cpu, 0);
  put_str (s, ":\n");
  /* One line per frame: PC SYMBOL+0xOFFSET (MODULE)  */
  for (size_t i = 0; i < c->n_frames; i++)
    {
      const struct st_frame *f = &c->frames[i];
      put_char (s, '\t');
      put_hex (s, f->pc, 16);
      put_char (s, ' ');
      if (f->symbol == NULL)
        put_str (s, "[unknown]");
      else
        {
          put_str (s, f->symbol);
          if (f->inlined)
            put_str (s, " (inlined)");
          else
            {
              put_str (s, "+0x");
              put_hex (s, f->offset, 0);
            }
        }
      put_str (s, " (");
      put_str (s, f->module ? f->module : "[unknown]");
      put_str (s, ")\n");
    }
  if (c->stop != ST_STOP_END)
    {
      put_str (s, "\t                 (unwind stopped: ");
      put_str (s, st_stop_reason_name (c->stop));
      if (c->stop_detail != NULL && c->stop == ST_STOP_UNWIND_ERROR)
        {
          put_str (s, ": ");
          put_str (s, c->stop_detail);
        }
      put_str (s, ")\n");
    }
  put_char (s, '\n');
  if (fwrite_unlocked (s->buf, 1, s->len, s->out) != s->len)
    return -EIO;
  return 0;
}

static int
text_finish (struct st_sink *s)
{
  return fflush (s->out) == 0 ? 0 : -errno;
}

static void
text_free (struct st_sink *s)
{
  free (s->buf);
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
