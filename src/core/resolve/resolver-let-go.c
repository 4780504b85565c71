/* Letting go of the files no process maps any more (resolver.h:
 * ST_RESOLVER_IDLE_KEPT): which files are idle, which of them go, and
 * the files parked for an owner whose results are written later.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "basic/array.h"
#include "basic/hashmap.h"
#include "core/resolve/resolver.h"
#include "core/resolve/resolver-private.h"

/* A file the resolver holds, and how: by how many of its answers and by
   by_build_id, and when last asked for.  */
struct held_file {
  struct st_elf_file *file;
  unsigned refs;
  uint64_t used;
  bool go;
};

static int
count_held (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  struct st_hashmap *held = arg;
  if (a->file == NULL)
    return 0;
  struct held_file *h = st_hashmap_get (held, &a->file, sizeof a->file);
  if (h == NULL)
    {
      h = calloc (1, sizeof *h);
      if (h == NULL)
        return -ENOMEM;
      h->file = a->file;
      if (st_hashmap_put (held, &a->file, sizeof a->file, h) < 0)
        {
          free (h);
          return -ENOMEM;
        }
    }
  h->refs++;
  if (a->used > h->used)
    h->used = a->used;
  return 0;
}

struct idle_files {
  const struct st_resolver *r;
  struct held_file **v;
  size_t n;
};

/* A file is idle when the resolver holds every reference to it: no
   process maps it (a mapping holds one).  The one just asked for is not.  */
static int
collect_idle (const void *key, size_t len, void *value, void *arg)
{
  struct held_file *h = value;
  struct idle_files *idle = arg;
  struct st_elf_file *f = h->file;
  if (f->build_id_size > 0
      && st_hashmap_get (idle->r->by_build_id, f->build_id, f->build_id_size) == f)
    h->refs++;
  if (f->refs == h->refs && h->used != idle->r->clock)
    idle->v[idle->n++] = h;
  return 0;
}

static int
compare_used (const void *x, const void *y)
{
  const struct held_file *a = *(struct held_file *const *) x, *b = *(struct held_file *const *) y;
  return a->used < b->used ? -1 : a->used > b->used;
}

static int
let_answer_go (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  struct st_resolver *r = arg;
  if (a->file == NULL)
    return 0;
  struct held_file *h = st_hashmap_get (r->held, &a->file, sizeof a->file);
  if (h == NULL || !h->go)
    return 0;
  /* Out of memory for a parked file's place, the answer keeps it.  */
  if (r->park && ST_GROW (r->parked, r->cap_parked, r->n_parked, 16) < 0)
    return 0;
  a->found_by = a->file->found_by;
  a->let_go = true;
  a->by_inode = false;
  if (r->park)
    r->parked[r->n_parked++] = (struct parked_file) { a->file, r->stamp };
  else
    st_elf_file_unref (a->file);
  a->file = NULL;
  r->files_held--;
  return 0;
}

void
st_resolver_park (struct st_resolver *r, uint64_t stamp)
{
  r->park = true;
  r->stamp = stamp;
}

void
st_resolver_release_parked (struct st_resolver *r, uint64_t done)
{
  size_t kept = 0;
  for (size_t i = 0; i < r->n_parked; i++)
    if (r->parked[i].stamp <= done)
      st_elf_file_unref (r->parked[i].file);
    else
      r->parked[kept++] = r->parked[i];
  r->n_parked = kept;
}

/* Lets go of the idle files beyond the ST_RESOLVER_IDLE_KEPT used last: the answers
   keep how each was found, and the file, its descriptor and its tables
   are closed and freed.  Out of memory, it lets go of nothing.  */
void
st_resolver_let_idle_files_go (struct st_resolver *r)
{
  struct st_hashmap *held = st_hashmap_new (free);
  struct idle_files idle = { .r = r, .v = calloc (r->files_held + 1, sizeof *idle.v) };
  if (held != NULL && idle.v != NULL && st_hashmap_foreach (r->answers, count_held, held) == 0)
    {
      st_hashmap_foreach (held, collect_idle, &idle);
      if (idle.n > ST_RESOLVER_IDLE_KEPT)
        {
          qsort (idle.v, idle.n, sizeof *idle.v, compare_used);
          for (size_t i = 0; i < idle.n - ST_RESOLVER_IDLE_KEPT; i++)
            {
              struct st_elf_file *f = idle.v[i]->file;
              idle.v[i]->go = true;
              if (f->build_id_size > 0
                  && st_hashmap_get (r->by_build_id, f->build_id, f->build_id_size) == f)
                st_hashmap_remove (r->by_build_id, f->build_id, f->build_id_size);
              r->let_go++;
            }
          r->held = held;
          st_hashmap_foreach (r->answers, let_answer_go, r);
          r->held = NULL;
        }
    }
  st_hashmap_free (held);
  free (idle.v);
  r->sweep_at = r->files_held + ST_RESOLVER_IDLE_KEPT;
}

uint64_t
st_resolver_let_go (const struct st_resolver *r)
{
  return r->let_go;
}
