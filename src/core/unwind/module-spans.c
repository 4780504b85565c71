#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/bsearch.h"
#include "basic/hashmap.h"
#include "core/unwind/module-spans.h"

struct span {
  uint64_t low, high;
};

/* One file's ranges, sorted by LOW, none overlapping another.  */
struct file_spans {
  struct span *v;
  size_t n, cap;
};

struct st_module_spans {
  struct st_hashmap *files;   /* file pointer -> file_spans */
};

static void
file_spans_free (void *value)
{
  struct file_spans *f = value;
  if (f == NULL)
    return;
  free (f->v);
  free (f);
}

struct st_module_spans *
st_module_spans_new (void)
{
  struct st_module_spans *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->files = st_hashmap_new (file_spans_free);
  if (s->files == NULL)
    {
      free (s);
      return NULL;
    }
  return s;
}

void
st_module_spans_free (struct st_module_spans *s)
{
  if (s == NULL)
    return;
  st_hashmap_free (s->files);
  free (s);
}

/* How many of F's ranges start below X.  */
static size_t
count_below (const struct file_spans *f, uint64_t x)
{
  return x == 0 ? 0 : ST_BSEARCH_UPPER (f->v, f->n, low, x - 1);
}

bool
st_module_spans_conflict (const struct st_module_spans *s, const void *file, uint64_t low,
                          uint64_t high)
{
  const struct file_spans *f = st_hashmap_get_u64 (s->files, (uintptr_t) file);
  if (f == NULL)
    return false;
  /* The ranges do not overlap: of those starting below HIGH only the last
     can reach past LOW.  When that one is [LOW, HIGH) itself, the one
     before it ends at or below LOW.  */
  size_t i = count_below (f, high);
  if (i == 0)
    return false;
  const struct span *last = &f->v[i - 1];
  return last->high > low && last->low != low;
}

bool
st_module_spans_first (const struct st_module_spans *s, const void *file, uint64_t *low)
{
  const struct file_spans *f = st_hashmap_get_u64 (s->files, (uintptr_t) file);
  if (f == NULL || f->n == 0)
    return false;
  *low = f->v[0].low;
  return true;
}

int
st_module_spans_add (struct st_module_spans *s, const void *file, uint64_t low, uint64_t high)
{
  struct file_spans *f = st_hashmap_get_u64 (s->files, (uintptr_t) file);
  if (f == NULL)
    {
      f = calloc (1, sizeof *f);
      if (f == NULL)
        return -ENOMEM;
      if (st_hashmap_put_u64 (s->files, (uintptr_t) file, f) < 0)
        {
          free (f);
          return -ENOMEM;
        }
    }
  if (f->n == f->cap)
    {
      size_t cap = f->cap ? 2 * f->cap : 4;
      struct span *v = realloc (f->v, cap * sizeof *v);
      if (v == NULL)
        return -ENOMEM;
      f->v = v;
      f->cap = cap;
    }
  /* Mappings are reported in address order: almost always an append.  */
  size_t i = count_below (f, low);
  if (i < f->n && f->v[i].low == low)
    return 0;   /* already there */
  memmove (f->v + i + 1, f->v + i, (f->n - i) * sizeof *f->v);
  f->v[i] = (struct span) { low, high };
  f->n++;
  return 0;
}
