/* -f folded: collapsed stacks, "comm;outer;...;inner COUNT", one line per
 * distinct stack: the input of flamegraph.pl, inferno and speedscope.
 * The stacks are aggregated in a tree (stack-tree.c, which the flame graph
 * shares): memory follows the number of distinct stacks, not of samples.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "core/output/sink-tree.h"

struct st_sink {
  struct st_tree_sink tree;
};

static struct st_sink *
folded_new (FILE *out, const struct st_sink_options *opts)
{
  (void) opts;
  return st_tree_sink_new (sizeof (struct st_sink), out, false);
}

struct line {
  char *text;
  size_t len;
  uint64_t count;
};

struct lines {
  struct line *v;
  size_t n, cap;
};

/* Appends NAME to the path in BUF at LEN, replacing the separators a folded
   line cannot contain; returns the new length, or SIZE_MAX without memory.
   Spaces stay, as in perf script's names ("operator new",
   "std::vector<long, std::allocator<long> >"): flame graph tools take the
   count after the line's last space.  */
static size_t
append (char **buf, size_t *cap, size_t len, const char *name, bool inlined)
{
  size_t need = len + strlen (name) + sizeof ";_[i]";
  if (need > *cap)
    {
      size_t new_cap = *cap;
      while (new_cap < need)
        new_cap *= 2;
      char *p = realloc (*buf, new_cap);
      if (p == NULL)
        return SIZE_MAX;
      *buf = p;
      *cap = new_cap;
    }
  char *b = *buf;
  if (len > 0)
    b[len++] = ';';
  for (const char *c = name; *c; c++)
    b[len++] = (*c == ';' || *c == '\n') ? ':' : *c;
  if (inlined)
    {
      memcpy (b + len, "_[i]", 4);
      len += 4;
    }
  return len;
}

static int
add_line (struct lines *lines, const char *text, size_t len, uint64_t count)
{
  if (ST_GROW (lines->v, lines->cap, lines->n, 256) < 0)
    return -ENOMEM;
  char *copy = malloc (len ? len : 1);
  if (copy == NULL)
    return -ENOMEM;
  memcpy (copy, text, len);
  lines->v[lines->n++] = (struct line) { copy, len, count };
  return 0;
}

/* Every path that samples end at, as a folded line.  */
static int
collect_lines (const struct st_stack_tree *t, struct lines *lines)
{
  size_t cap = 4096;
  char *buf = malloc (cap);
  /* The length of the path down to each depth.  */
  size_t *len_at = calloc (st_stack_tree_max_depth (t) + 1, sizeof *len_at);
  int r = buf != NULL && len_at != NULL ? 0 : -ENOMEM;
  for (uint32_t i = st_stack_tree_next (t, 0); r == 0 && i != ST_STACK_NONE;
       i = st_stack_tree_next (t, i))
    {
      const struct st_stack_node *n = st_stack_tree_node (t, i);
      size_t len = append (&buf, &cap, len_at[n->depth - 1], n->name, n->inlined);
      if (len == SIZE_MAX)
        r = -ENOMEM;
      else
        {
          len_at[n->depth] = len;
          if (n->self > 0)
            r = add_line (lines, buf, len, n->self);
        }
    }
  free (buf);
  free (len_at);
  return r;
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
  struct lines lines = { 0 };
  int r = collect_lines (s->tree.stacks, &lines);
  if (r == 0)
    {
      /* Sorted output: the same input always gives the same file.  Names
         that differ only in what the escaping replaced make one line.  */
      if (lines.n > 0)
        qsort (lines.v, lines.n, sizeof *lines.v, compare_lines);
      for (size_t i = 0; i < lines.n;)
        {
          size_t j = i + 1;
          uint64_t count = lines.v[i].count;
          for (; j < lines.n && compare_lines (&lines.v[i], &lines.v[j]) == 0; j++)
            count += lines.v[j].count;
          fprintf (s->tree.out, "%.*s %" PRIu64 "\n", (int) lines.v[i].len, lines.v[i].text, count);
          i = j;
        }
    }
  for (size_t i = 0; i < lines.n; i++)
    free (lines.v[i].text);
  free (lines.v);
  if (r < 0)
    return r;
  return st_sink_flush (s->tree.out);
}

ST_DEFINE_TREE_SINK (st_sink_folded, "folded", "collapsed stacks for flame graphs", folded_new,
                     folded_finish);
