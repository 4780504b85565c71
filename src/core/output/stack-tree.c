#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/hashmap.h"
#include "core/output/sink.h"
#include "core/output/stack-tree.h"

struct st_stack_tree {
  bool reverse;
  struct st_stack_node *nodes;
  /* For each node, the child last taken from it: consecutive samples share
     most of their path, so most frames find their node with one strcmp.  */
  uint32_t *hint;
  size_t n, cap;
  uint32_t max_depth;
  /* (parent index, module id, inlined flag, name) -> node index + 1.  One
     lookup per frame: the same work as hashing a whole folded line once.
     Functions of the same name in two files (the _start of ld.so and the
     program's) are two nodes, which folded lines then merge.  */
  struct st_hashmap *children;
  struct st_hashmap *strings;  /* interned names and modules */
  /* Modules by id (0: none), and a cache from the frames' module pointers
     to ids: pointers are stable while a file is mapped, so most frames find
     their module without hashing its path.  A pointer may be reused for
     another file later, so an entry is checked with strcmp once per sample
     (during one sample every pointer is alive: same pointer, same path).  */
  struct st_hashmap *module_ids;  /* path -> id */
  const char **modules;
  bool *may_be_program;           /* st_module_may_be_program, by id */
  size_t n_modules, modules_cap;
  struct {
    const char *ptr;
    uint32_t id;
    uint64_t checked;  /* the sample it was last checked in */
  } module_cache[64];
  uint64_t n_samples;
  /* Process node -> struct vote: the program of its whole stacks.  */
  struct st_hashmap *votes;
  unsigned char *key;
  size_t key_cap;
};

struct st_stack_tree *
st_stack_tree_new (bool reverse)
{
  struct st_stack_tree *t = calloc (1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->reverse = reverse;
  t->cap = 256;
  t->nodes = calloc (t->cap, sizeof *t->nodes);
  t->hint = malloc (t->cap * sizeof *t->hint);
  t->children = st_hashmap_new (NULL);
  t->strings = st_hashmap_new (free);
  t->module_ids = st_hashmap_new (NULL);
  t->votes = st_hashmap_new (free);
  t->modules_cap = 16;
  t->modules = calloc (t->modules_cap, sizeof *t->modules);
  t->may_be_program = calloc (t->modules_cap, sizeof *t->may_be_program);
  t->n_modules = 1;
  t->key_cap = 256;
  t->key = malloc (t->key_cap);
  if (t->nodes == NULL || t->hint == NULL || t->children == NULL || t->strings == NULL || t->module_ids == NULL
      || t->votes == NULL || t->modules == NULL || t->may_be_program == NULL
      || t->key == NULL)
    {
      st_stack_tree_free (t);
      return NULL;
    }
  t->nodes[0] = (struct st_stack_node) {
    .name = "",
    .parent = ST_STACK_NONE,
    .first_child = ST_STACK_NONE,
    .next_sibling = ST_STACK_NONE,
    .kind = ST_KIND_LABEL,
  };
  t->hint[0] = ST_STACK_NONE;
  t->n = 1;
  return t;
}

void
st_stack_tree_free (struct st_stack_tree *t)
{
  if (t == NULL)
    return;
  st_hashmap_free (t->children);
  st_hashmap_free (t->strings);
  st_hashmap_free (t->module_ids);
  st_hashmap_free (t->votes);
  free (t->modules);
  free (t->may_be_program);
  free (t->nodes);
  free (t->hint);
  free (t->key);
  free (t);
}

static const char *
intern (struct st_stack_tree *t, const char *s)
{
  return st_hashmap_intern (t->strings, s);
}

/* The id of the file MODULE (0 for NULL), or UINT32_MAX without memory.  */
static uint32_t
module_id (struct st_stack_tree *t, const char *module)
{
  if (module == NULL)
    return 0;
  size_t slot = ((uintptr_t) module >> 4) % (sizeof t->module_cache / sizeof t->module_cache[0]);
  if (t->module_cache[slot].ptr == module
      && (t->module_cache[slot].checked == t->n_samples
          || strcmp (t->modules[t->module_cache[slot].id], module) == 0))
    {
      t->module_cache[slot].checked = t->n_samples;
      return t->module_cache[slot].id;
    }
  size_t len = strlen (module);
  uintptr_t id = (uintptr_t) st_hashmap_get (t->module_ids, module, len);
  if (id == 0)
    {
      if (t->n_modules == t->modules_cap)
        {
          const char **m = realloc (t->modules, 2 * t->modules_cap * sizeof *m);
          if (m == NULL)
            return UINT32_MAX;
          t->modules = m;
          bool *p = realloc (t->may_be_program, 2 * t->modules_cap * sizeof *p);
          if (p == NULL)
            return UINT32_MAX;
          t->may_be_program = p;
          t->modules_cap *= 2;
        }
      const char *copy = intern (t, module);
      if (copy == NULL)
        return UINT32_MAX;
      id = t->n_modules++;
      t->modules[id] = copy;
      t->may_be_program[id] = st_module_may_be_program (copy);
      if (st_hashmap_put (t->module_ids, module, len, (void *) id) < 0)
        return UINT32_MAX;
    }
  t->module_cache[slot].ptr = module;
  t->module_cache[slot].id = id;
  t->module_cache[slot].checked = t->n_samples;
  return id;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash != NULL ? slash + 1 : path;
}

static bool
starts_with (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

/* glibc (its current and its pre-2.34 split names), musl and the dynamic
   linker: "the C library" in a flame graph.  */
static bool
is_libc (const char *module)
{
  static const char *const prefixes[] = {
    "libc.so", "libc-2.", "libm.so", "libm-2.", "libpthread.so", "libpthread-2.",
    "libdl.so", "libdl-2.", "librt.so", "librt-2.", "ld-linux", "ld-2.", "ld-musl",
    "ld64.so", "libc.musl",
  };
  const char *base = base_name (module);
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (starts_with (base, prefixes[i]))
      return true;
  return false;
}

/* "[vdso]", "[kernel.kallsyms]", "[vsyscall]", kernel modules, vmlinux.  */
static bool
is_kernel (const char *module)
{
  return module[0] == '[' || starts_with (module, "/lib/modules/")
         || starts_with (base_name (module), "vmlinux");
}

/* "libfoo.so", "libfoo.so.1.2", "_json.cpython-311-x86_64-linux-gnu.so".  */
static bool
is_shared_object (const char *module)
{
  for (const char *p = strstr (base_name (module), ".so"); p != NULL; p = strstr (p + 1, ".so"))
    if (p[3] == '\0' || p[3] == '.')
      return true;
  return false;
}

bool
st_module_may_be_program (const char *module)
{
  return !is_libc (module) && !is_kernel (module) && !is_shared_object (module);
}

enum st_frame_kind
st_frame_kind_of (const struct st_frame *f, const char *program)
{
  if (f->module == NULL)
    {
      /* Only labels (like "[podman:NAME]") have a name but no file.  */
      size_t len = f->symbol != NULL ? strlen (f->symbol) : 0;
      if (len >= 2 && f->symbol[0] == '[' && f->symbol[len - 1] == ']')
        return ST_KIND_LABEL;
      return ST_KIND_UNRESOLVED;
    }
  if (is_kernel (f->module))
    return ST_KIND_KERNEL;
  if (f->symbol == NULL)
    return ST_KIND_UNRESOLVED;
  if (is_libc (f->module))
    return ST_KIND_LIBC;
  if (program != NULL && strcmp (f->module, program) == 0)
    return ST_KIND_PROGRAM;
  return ST_KIND_LIBRARY;
}

/* The program of the call chain C (interned), or NULL: the outermost file
   that may be a program, when the unwind reached the outermost frame (it
   starts in the program: _start, or the thread function above the C
   library's start_thread); else the file named like the comm ("python3"
   for python3.11; any file that begins with a comm of the kernel's 15-byte
   limit); else that outermost file, as a guess (*SURE false).  NULL and
   *SURE false without memory, too.  */
static const char *
program_of (struct st_stack_tree *t, const struct st_callchain *c, bool *sure)
{
  const char *outermost = NULL;
  size_t comm_len = c->comm != NULL ? strlen (c->comm) : 0;
  *sure = true;
  for (size_t i = c->n_frames; i-- > 0;)
    {
      uint32_t id = module_id (t, c->frames[i].module);
      if (id == 0 || id == UINT32_MAX || !t->may_be_program[id])
        continue;
      const char *m = t->modules[id];
      if (c->stop == ST_STOP_END)
        return m;
      const char *base = base_name (m);
      if (comm_len > 0 && strncmp (base, c->comm, comm_len) == 0
          && (base[comm_len] == '\0' || base[comm_len] == '.' || base[comm_len] == '-'
              || comm_len >= 15))
        return m;
      if (outermost == NULL)
        outermost = m;
    }
  *sure = false;
  return outermost;
}

/* The program a process's whole stacks show most often, by the
   Boyer-Moore majority vote: one comparison per sample, and right whenever
   one program has more than half of the votes (a shell script that execs
   the program it wraps, under the same comm).  */
struct vote {
  const char *program;  /* interned */
  uint64_t count;
};

static const char *
voted_program (const struct st_stack_tree *t, uint32_t comm)
{
  const struct vote *v = st_hashmap_get (t->votes, &comm, sizeof comm);
  return v != NULL ? v->program : NULL;
}

static int
vote (struct st_stack_tree *t, uint32_t comm, const struct st_callchain *c, uint64_t count)
{
  bool sure;
  const char *program = program_of (t, c, &sure);
  if (program == NULL || !sure)
    return 0;
  struct vote *v = st_hashmap_get (t->votes, &comm, sizeof comm);
  if (v == NULL)
    {
      v = calloc (1, sizeof *v);
      if (v == NULL || st_hashmap_put (t->votes, &comm, sizeof comm, v) < 0)
        {
          free (v);
          return -ENOMEM;
        }
    }
  if (v->program == program)
    v->count += count;
  else if (v->count <= count)
    {
      v->program = program;
      v->count = count - v->count;
    }
  else
    v->count -= count;
  return 0;
}

/* What a new node needs to know about the stack it is on, found only when
   a node is created: most samples create none.  */
struct context {
  const struct st_callchain *chain;
  uint32_t comm;                /* the process's node */
  const char *program;
  bool program_known, guessed;
};

static int
child (struct st_stack_tree *t, uint32_t parent, const char *name, const struct st_frame *f,
       struct context *ctx, uint64_t count, uint32_t *out)
{
  bool inlined = f != NULL && f->inlined;
  uint32_t module = module_id (t, f != NULL ? f->module : NULL);
  if (module == UINT32_MAX)
    return -ENOMEM;
  uint32_t hint = t->hint[parent];
  if (hint != ST_STACK_NONE && t->nodes[hint].inlined == inlined
      && t->nodes[hint].module == t->modules[module] && strcmp (t->nodes[hint].name, name) == 0)
    {
      *out = hint;
      t->nodes[hint].total += count;
      return 0;
    }
  size_t len = strlen (name);
  size_t key_len = sizeof parent + sizeof module + 1 + len;
  if (key_len > t->key_cap)
    {
      size_t cap = t->key_cap;
      while (cap < key_len)
        cap *= 2;
      unsigned char *key = realloc (t->key, cap);
      if (key == NULL)
        return -ENOMEM;
      t->key = key;
      t->key_cap = cap;
    }
  memcpy (t->key, &parent, sizeof parent);
  memcpy (t->key + sizeof parent, &module, sizeof module);
  t->key[sizeof parent + sizeof module] = inlined;
  memcpy (t->key + sizeof parent + sizeof module + 1, name, len);

  uintptr_t found = (uintptr_t) st_hashmap_get (t->children, t->key, key_len);
  if (found != 0)
    {
      *out = found - 1;
      t->nodes[*out].total += count;
      t->hint[parent] = *out;
      return 0;
    }

  if (t->n == t->cap)
    {
      if (t->cap >= ST_STACK_NONE / 2)
        return -ENOMEM;
      struct st_stack_node *nodes = realloc (t->nodes, 2 * t->cap * sizeof *nodes);
      if (nodes == NULL)
        return -ENOMEM;
      t->nodes = nodes;
      uint32_t *hints = realloc (t->hint, 2 * t->cap * sizeof *hints);
      if (hints == NULL)
        return -ENOMEM;
      t->hint = hints;
      t->cap *= 2;
    }
  enum st_frame_kind kind = ST_KIND_LABEL;
  if (f != NULL)
    {
      if (!ctx->program_known)
        {
          /* A stack cut short (a deep recursion that outgrew the stack
             copy) may hold no frame of the program: then the program of
             its process's whole stacks is the better answer, settled when
             all are in (st_stack_tree_finish).  */
          bool sure;
          ctx->program = program_of (t, ctx->chain, &sure);
          ctx->guessed = !sure;
          if (!sure && voted_program (t, ctx->comm) != NULL)
            ctx->program = voted_program (t, ctx->comm);
          ctx->program_known = true;
        }
      kind = st_frame_kind_of (f, ctx->program);
    }
  uint32_t i = t->n;
  struct st_stack_node *node = &t->nodes[i];
  *node = (struct st_stack_node) {
    .name = intern (t, name),
    .module = t->modules[module],
    .total = count,
    .parent = parent,
    .first_child = ST_STACK_NONE,
    .next_sibling = t->nodes[parent].first_child,
    .depth = t->nodes[parent].depth + 1,
    .kind = kind,
    .guessed = f != NULL && ctx->guessed,
    .inlined = inlined,
  };
  if (node->name == NULL || st_hashmap_put (t->children, t->key, key_len, (void *) (uintptr_t) (i + 1)) < 0)
    return -ENOMEM;
  t->nodes[parent].first_child = i;
  t->hint[parent] = i;
  t->hint[i] = ST_STACK_NONE;
  t->n++;
  if (node->depth > t->max_depth)
    t->max_depth = node->depth;
  *out = i;
  return 0;
}

int
st_stack_tree_add (struct st_stack_tree *t, const struct st_callchain *c, uint64_t count)
{
  struct context ctx = { .chain = c };
  char buf[256];
  uint32_t node = 0;
  t->n_samples++;
  t->nodes[0].total += count;
  int r = 0;
  /* Containers group above their processes: "[podman:NAME];comm;...".  */
  if (c->container != NULL && c->container->root_frame != NULL)
    r = child (t, node, c->container->root_frame, NULL, &ctx, count, &node);
  if (r == 0)
    r = child (t, node, c->comm != NULL ? c->comm : "[unknown]", NULL, &ctx, count, &node);
  ctx.comm = node;
  /* Cheap: a whole stack's program is among its outermost frames.  */
  if (r == 0 && c->stop == ST_STOP_END)
    r = vote (t, node, c, count);
  for (size_t k = 0; r == 0 && k < c->n_frames; k++)
    {
      const struct st_frame *f = &c->frames[t->reverse ? k : c->n_frames - 1 - k];
      r = child (t, node, st_frame_display_name (f, buf, sizeof buf), f, &ctx, count, &node);
    }
  if (r < 0)
    return r;
  t->nodes[node].self += count;
  return 0;
}

struct sort_entry {
  const char *name, *module;
  bool inlined;
  uint32_t index;
};

static int
compare_entries (const void *pa, const void *pb)
{
  const struct sort_entry *a = pa, *b = pb;
  int r = strcmp (a->name, b->name);
  if (r == 0)
    r = (int) a->inlined - (int) b->inlined;
  if (r == 0 && a->module != b->module)
    r = a->module == NULL ? -1 : b->module == NULL ? 1 : strcmp (a->module, b->module);
  return r;
}

/* Each process's node gets its program, and the kinds guessed from stacks
   cut short are settled against it.  */
static int
settle_kinds (struct st_stack_tree *t)
{
  uint32_t *comm = malloc (t->n * sizeof *comm);
  if (comm == NULL)
    return -ENOMEM;
  comm[0] = 0;
  for (size_t i = 1; i < t->n; i++)
    {
      struct st_stack_node *n = &t->nodes[i];
      comm[i] = n->depth == 1 ? i : comm[n->parent];
      const char *program = voted_program (t, comm[i]);
      if (n->depth == 1)
        n->module = program;
      else if (n->guessed && program != NULL
               && (n->kind == ST_KIND_PROGRAM || n->kind == ST_KIND_LIBRARY))
        n->kind = n->module == program ? ST_KIND_PROGRAM : ST_KIND_LIBRARY;
    }
  free (comm);
  return 0;
}

int
st_stack_tree_finish (struct st_stack_tree *t)
{
  int r = settle_kinds (t);
  if (r < 0)
    return r;
  struct sort_entry *entries = NULL;
  size_t cap = 0;
  for (size_t p = 0; p < t->n; p++)
    {
      size_t n = 0;
      for (uint32_t c = t->nodes[p].first_child; c != ST_STACK_NONE; c = t->nodes[c].next_sibling)
        {
          if (n == cap)
            {
              size_t new_cap = cap ? 2 * cap : 64;
              struct sort_entry *e = realloc (entries, new_cap * sizeof *e);
              if (e == NULL)
                {
                  free (entries);
                  return -ENOMEM;
                }
              entries = e;
              cap = new_cap;
            }
          entries[n++] = (struct sort_entry) { t->nodes[c].name, t->nodes[c].module,
                                               t->nodes[c].inlined, c };
        }
      if (n < 2)
        continue;
      qsort (entries, n, sizeof *entries, compare_entries);
      t->nodes[p].first_child = entries[0].index;
      for (size_t k = 0; k < n; k++)
        t->nodes[entries[k].index].next_sibling = k + 1 < n ? entries[k + 1].index : ST_STACK_NONE;
    }
  free (entries);
  return 0;
}

size_t
st_stack_tree_size (const struct st_stack_tree *t)
{
  return t->n;
}

const struct st_stack_node *
st_stack_tree_node (const struct st_stack_tree *t, uint32_t i)
{
  assert (i < t->n);
  return &t->nodes[i];
}

uint32_t
st_stack_tree_max_depth (const struct st_stack_tree *t)
{
  return t->max_depth;
}

uint32_t
st_stack_tree_next (const struct st_stack_tree *t, uint32_t i)
{
  assert (i < t->n);
  if (t->nodes[i].first_child != ST_STACK_NONE)
    return t->nodes[i].first_child;
  for (; i != ST_STACK_NONE; i = t->nodes[i].parent)
    if (t->nodes[i].next_sibling != ST_STACK_NONE)
      return t->nodes[i].next_sibling;
  return ST_STACK_NONE;
}
