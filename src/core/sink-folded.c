/* -f folded: collapsed stacks, "comm;outer;...;inner COUNT", one line per
 * distinct stack: the input of flamegraph.pl, inferno and speedscope.
 * Memory follows the number of distinct stacks, not of samples.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/hashmap.h"
#include "core/sink.h"

struct st_sink {
  FILE *out;
  struct st_hashmap *stacks;  /* folded line -> uint64_t count */
  char *buf;
  size_t cap;
};

static struct st_sink *
folded_new (FILE *out, const struct st_sink_options *opts)
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->out = out;
  s->stacks = st_hashmap_new (free);
  s->cap = 4096;
  s->buf = malloc (s->cap);
  if (s->stacks == NULL || s->buf == NULL)
    {
      st_hashmap_free (s->stacks);
      free (s->buf);
      free (s);
      return NULL;
    }
  return s;
}

/* Appends STR, replacing the separators a folded line cannot contain.  */
static int
append (struct st_sink *s, size_t *len, const char *str, const char *suffix)
{
  size_t n = strlen (str) + strlen (suffix) + 2;
  if (*len + n > s->cap)
    {
      size_t cap = s->cap;
      while (*len + n > cap)
        cap *= 2;
      char *p = realloc (s->buf, cap);
      if (p == NULL)
        return -ENOMEM;
      s->buf = p;
      s->cap = cap;
    }
  if (*len > 0)
    s->buf[(*len)++] = ';';
  for (const char *c = str; *c; c++)
    s->buf[(*len)++] = (*c == ';' || *c == '\n') ? ':' : (*c == ' ' ? '_' : *c);
  for (const char *c = suffix; *c; c++)
    s->buf[(*len)++] = *c;
  return 0;
}

static int
folded_sample (struct st_sink *s, const struct st_callchain *c)
{
  size_t len = 0;
  char name[256];
  if (append (s, &len, c->comm ? c->comm : "[unknown]", "") < 0)
    return -ENOMEM;
  for (size_t i = c->n_frames; i-- > 0;)
    {
      const struct st_frame *f = &c->frames[i];
      if (append (s, &len, st_frame_display_name (f, name, sizeof name),
                  f->inlined ? "_[i]" : "") < 0)
        return -ENOMEM;
    }
  uint64_t *count = st_hashmap_get (s->stacks, s->buf, len);
  if (count == NULL)
    {
      count = calloc (1, sizeof *count);
      if (count == NULL || st_hashmap_put (s->stacks, s->buf, len, count) < 0)
        {
          free (count);
          return -ENOMEM;
        }
    }
  (*count)++;
  return 0;
}

struct line {
  const char *text;
  size_t len;
  uint64_t count;
};

struct collect {
  struct line *lines;
  size_t n;
};

static int
collect_line (const void *key, size_t len, void *value, void *arg)
{
  struct collect *c = arg;
  c->lines[c->n++] = (struct line) { key, len, *(uint64_t *) value };
  return 0;
}

static int
compare_lines (const void *pa, const void *pb)
{
  const struct line *a = pa, *b = pb;
  size_t n = a->len < b->len ? a->len : b->len;
  int r = memcmp (a->text, b->text, n);
  return r != 0 ? r : (a->len > b->len) - (a->len < b->len);
}

static int
folded_finish (struct st_sink *s)
{
  size_t n = st_hashmap_size (s->stacks);
  struct collect c = { calloc (n ? n : 1, sizeof *c.lines), 0 };
  if (c.lines == NULL)
    return -ENOMEM;
  st_hashmap_foreach (s->stacks, collect_line, &c);
  /* Sorted output: the same input always gives the same file.  */
  qsort (c.lines, c.n, sizeof *c.lines, compare_lines);
  for (size_t i = 0; i < c.n; i++)
    fprintf (s->out, "%.*s %" PRIu64 "\n", (int) c.lines[i].len, c.lines[i].text,
             c.lines[i].count);
  free (c.lines);
  return fflush (s->out) == 0 && !ferror (s->out) ? 0 : -EIO;
}

static void
folded_free (struct st_sink *s)
{
  st_hashmap_free (s->stacks);
  free (s->buf);
  free (s);
}

const struct st_sink_ops st_sink_folded = {
  .name = "folded",
  .description = "collapsed stacks for flame graphs",
  .new = folded_new,
  .sample = folded_sample,
  .finish = folded_finish,
  .free = folded_free,
};
