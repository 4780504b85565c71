/* The process table of -f sysprof (see sysprof-procs.h).  */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "core/output/sysprof-procs.h"

struct st_sysprof_procs {
  struct st_hashmap *by_pid;
};

static void
proc_free (void *v)
{
  struct st_sysprof_proc *p = v;
  if (p == NULL)
    return;
  st_sysprof_proc_clear_maps (p);
  free (p->maps);
  free (p->name);
  free (p);
}

int
st_sysprof_procs_new (struct st_sysprof_procs **out)
{
  assert (out != NULL);
  _cleanup_free_ struct st_sysprof_procs *procs = calloc (1, sizeof *procs);
  if (procs == NULL)
    return -ENOMEM;
  procs->by_pid = st_hashmap_new (proc_free);
  if (procs->by_pid == NULL)
    return -ENOMEM;
  *out = ST_TAKE_PTR (procs);
  return 0;
}

void
st_sysprof_procs_free (struct st_sysprof_procs *procs)
{
  if (procs == NULL)
    return;
  st_hashmap_free (procs->by_pid);
  free (procs);
}

struct st_sysprof_proc *
st_sysprof_procs_get (struct st_sysprof_procs *procs, pid_t pid, bool create, int *err)
{
  struct st_sysprof_proc *p = st_hashmap_get_u64 (procs->by_pid, (uint32_t) pid);
  if (p != NULL || !create)
    return p;
  p = calloc (1, sizeof *p);
  if (p == NULL || st_hashmap_put_u64 (procs->by_pid, (uint32_t) pid, p) < 0)
    {
      free (p);
      if (err != NULL)
        *err = -ENOMEM;
      return NULL;
    }
  p->pid = pid;
  return p;
}

void
st_sysprof_procs_remove (struct st_sysprof_procs *procs, pid_t pid)
{
  st_hashmap_remove_u64 (procs->by_pid, (uint32_t) pid);
}

int
st_sysprof_proc_set_name (struct st_sysprof_proc *p, const char *name, int64_t time)
{
  char *copy = strdup (name);
  if (copy == NULL)
    return -ENOMEM;
  free (p->name);
  p->name = copy;
  p->name_time = time;
  return 0;
}

static int
append_map (struct st_sysprof_proc *p, const struct st_sysprof_proc_map *m)
{
  if (ST_GROW (p->maps, p->cap_maps, p->n_maps, 16) < 0)
    return -ENOMEM;
  struct st_sysprof_proc_map *n = &p->maps[p->n_maps];
  *n = *m;
  n->filename = strdup (m->filename);
  if (n->filename == NULL)
    return -ENOMEM;
  p->n_maps++;
  return 0;
}

int
st_sysprof_proc_add_map (struct st_sysprof_proc *p, uint64_t start, uint64_t end,
                         uint64_t pgoff, const char *filename, int64_t time, bool written)
{
  /* A mapping over others replaces them (mmap MAP_FIXED, a reload).  */
  size_t kept = 0;
  bool same = false;
  for (size_t i = 0; i < p->n_maps; i++)
    {
      struct st_sysprof_proc_map *m = &p->maps[i];
      if (m->start == start && m->end == end && m->pgoff == pgoff
          && strcmp (m->filename, filename) == 0)
        {
          m->written |= written;
          same = true;
        }
      else if (m->start < end && start < m->end)
        {
          free (m->filename);
          continue;
        }
      p->maps[kept++] = *m;
    }
  p->n_maps = kept;
  if (same)
    return 0;
  struct st_sysprof_proc_map m = {
    .start = start, .end = end, .pgoff = pgoff, .time = time, .written = written,
    .filename = (char *) filename,
  };
  return append_map (p, &m);
}

void
st_sysprof_proc_clear_maps (struct st_sysprof_proc *p)
{
  for (size_t i = 0; i < p->n_maps; i++)
    free (p->maps[i].filename);
  p->n_maps = 0;
}

void
st_sysprof_proc_drop_unwritten (struct st_sysprof_proc *p)
{
  size_t kept = 0;
  for (size_t i = 0; i < p->n_maps; i++)
    if (p->maps[i].written)
      p->maps[kept++] = p->maps[i];
    else
      free (p->maps[i].filename);
  p->n_maps = kept;
}

int
st_sysprof_procs_fork (struct st_sysprof_procs *procs, pid_t parent, pid_t child, int64_t time)
{
  int r = 0;
  struct st_sysprof_proc *c = st_sysprof_procs_get (procs, child, true, &r);
  if (c == NULL)
    return r;
  /* A pid seen again after a fork is a new process.  */
  st_sysprof_proc_clear_maps (c);
  free (c->name);
  c->name = NULL;
  c->named = false;
  c->forked = true;
  const struct st_sysprof_proc *p = st_sysprof_procs_get (procs, parent, false, NULL);
  if (p == NULL)
    return 0;
  if (p->name != NULL && (r = st_sysprof_proc_set_name (c, p->name, time)) < 0)
    return r;
  for (size_t i = 0; i < p->n_maps; i++)
    {
      struct st_sysprof_proc_map m = p->maps[i];
      m.time = time;
      m.written = false;
      if ((r = append_map (c, &m)) < 0)
        return r;
    }
  return 0;
}

struct foreach_ctx {
  int (*fn) (struct st_sysprof_proc *p, void *arg);
  void *arg;
};

static int
foreach_one (const void *key, size_t len, void *value, void *arg)
{
  struct foreach_ctx *ctx = arg;
  return ctx->fn (value, ctx->arg);
}

int
st_sysprof_procs_foreach (struct st_sysprof_procs *procs,
                          int (*fn) (struct st_sysprof_proc *p, void *arg), void *arg)
{
  struct foreach_ctx ctx = { fn, arg };
  return st_hashmap_foreach (procs->by_pid, foreach_one, &ctx);
}
