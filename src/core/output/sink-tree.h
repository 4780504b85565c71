/* What the sinks that aggregate stacks in a tree share (folded, svg): each
 * sample goes into the tree (stack-tree.h), and the whole file is written
 * from it at the finish.  Such a sink's struct st_sink starts with a
 * struct st_tree_sink; its own ops are .new and .finish.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/output/sink.h"
#include "core/output/stack-tree.h"

struct st_tree_sink {
  FILE *out;
  struct st_stack_tree *stacks;
};

/* SIZE zeroed bytes (the sink's struct st_sink) that start with a tree
   sink writing to OUT, its stacks reversed when REVERSE; NULL without
   memory.  */
void *st_tree_sink_new (size_t size, FILE *out, bool reverse);
int st_tree_sink_sample (struct st_sink *s, const struct st_callchain *chain);
void st_tree_sink_free (struct st_sink *s);

/* Defines the ops table VAR of a tree sink of format NAME.  */
#define ST_DEFINE_TREE_SINK(var, name_, description_, new_fn, finish_fn)       \
  const struct st_sink_ops var = {                                            \
    .name = name_,                                                            \
    .description = description_,                                              \
    .whole_file = true,                                                       \
    .new = new_fn,                                                            \
    .sample = st_tree_sink_sample,                                            \
    .finish = finish_fn,                                                      \
    .free = st_tree_sink_free,                                                \
  }
