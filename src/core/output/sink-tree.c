/* See sink-tree.h.  */
#include "config.h"

#include <stdlib.h>

#include "basic/cleanup.h"
#include "core/output/sink-tree.h"

void *
st_tree_sink_new (size_t size, FILE *out, bool reverse)
{
  _cleanup_free_ struct st_tree_sink *s = calloc (1, size);
  if (s == NULL)
    return NULL;
  s->out = out;
  s->stacks = st_stack_tree_new (reverse);
  return s->stacks != NULL ? ST_TAKE_PTR (s) : NULL;
}

/* A tree sink's struct st_sink starts with its struct st_tree_sink.  */
int
st_tree_sink_sample (struct st_sink *s, const struct st_callchain *chain)
{
  return st_stack_tree_add (((struct st_tree_sink *) s)->stacks, chain, 1);
}

void
st_tree_sink_free (struct st_sink *s)
{
  st_stack_tree_free (((struct st_tree_sink *) s)->stacks);
  free (s);
}
