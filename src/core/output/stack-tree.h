/* Call stacks aggregated into a tree, as samples arrive: what the folded and
 * the flame graph sinks share.  A path from the root is the comm, then the
 * frames' display names (st_frame_display_name) from the outermost to the
 * innermost frame, or from the innermost to the outermost for a reversed
 * tree; functions of the same name in different files are different nodes.
 * Each node counts the samples whose path goes through it (total)
 * and ends at it (self), so memory follows the distinct stacks, not the
 * samples.  Names and modules are copied: the tree outlives every sample.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/unwind/callchain.h"

/* What kind of code a frame is in, for the flame graph's colors.  */
enum st_frame_kind {
  ST_KIND_LABEL,       /* the root, comms, container labels: not code */
  ST_KIND_PROGRAM,     /* the sampled program's executable */
  ST_KIND_LIBRARY,     /* its other libraries */
  ST_KIND_LIBC,        /* the C library and the dynamic linker */
  ST_KIND_KERNEL,      /* the kernel and the vdso */
  ST_KIND_UNRESOLVED,  /* no symbol: "[module]" or "[unknown]" */
  ST_KIND_N
};

#define ST_STACK_NONE UINT32_MAX

struct st_stack_node {
  const char *name;      /* display name; "" for the root */
  const char *module;    /* its file, or NULL; for a process (depth 1), the
                            program of most of its whole stacks, once
                            st_stack_tree_finish ran */
  uint64_t total;        /* samples whose path goes through this node */
  uint64_t self;         /* samples whose path ends here */
  uint32_t parent;       /* ST_STACK_NONE for the root */
  uint32_t first_child;  /* ST_STACK_NONE when a leaf */
  uint32_t next_sibling; /* ST_STACK_NONE when the last child */
  uint32_t depth;        /* 0 for the root, 1 for the comms */
  uint8_t kind;          /* enum st_frame_kind */
  bool guessed;          /* kind from a stack that did not show its program */
  bool inlined;
};

struct st_stack_tree;

struct st_stack_tree *st_stack_tree_new (bool reverse);
void st_stack_tree_free (struct st_stack_tree *t);

/* Adds COUNT samples with the call chain C; 0 or -ENOMEM.  */
int st_stack_tree_add (struct st_stack_tree *t, const struct st_callchain *c, uint64_t count);

/* Call once all samples are in: settles the kinds guessed from stacks cut
   short, and sorts every node's children by name (bytes; inlined frames
   after the others, then by file), so that a walk visits them in the same
   order for the same input.  0 or -ENOMEM.  */
int st_stack_tree_finish (struct st_stack_tree *t);

/* The root is node 0; nodes are numbered from 0 to size - 1, and a node's
   parent always comes before it.  */
size_t st_stack_tree_size (const struct st_stack_tree *t);
const struct st_stack_node *st_stack_tree_node (const struct st_stack_tree *t, uint32_t i);
uint32_t st_stack_tree_max_depth (const struct st_stack_tree *t);

/* The next node of a depth-first walk from the root, parents before their
   children, or ST_STACK_NONE at the end.  */
uint32_t st_stack_tree_next (const struct st_stack_tree *t, uint32_t i);

/* The kind of frame F in a stack whose program is the file PROGRAM, or
   NULL when it is not known.  */
enum st_frame_kind st_frame_kind_of (const struct st_frame *f, const char *program);
/* Whether the file MODULE may be a program: not the C library, the dynamic
   linker, the kernel or the vdso, nor a shared object (NAME.so[.N]).  A
   process's program is the outermost such file of its whole stacks.  */
bool st_module_may_be_program (const char *module);
