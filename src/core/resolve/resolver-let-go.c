/* Letting go of the files no process maps any more (resolver.h:
 * ST_RESOLVER_IDLE_KEPT): which files are idle, which of them go, and
 * the files parked for an owner whose results are written later; and
 * forgetting the oldest answers "no file" (ST_RESOLVER_MISSING_KEPT).  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static struct held_file *
held_of (struct st_hashmap *held, struct st_elf_file *f)
{
  struct held_file *h = st_hashmap_get (held, &f, sizeof f);
  if (h != NULL)
    return h;
  h = calloc (1, sizeof *h);
  if (h == NULL)
    return NULL;
  h->file = f;
  if (st_hashmap_put (held, &f, sizeof f, h) < 0)
    {
      free (h);
      return NULL;
    }
  return h;
}

static int
count_answer_refs (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  if (a->file == NULL)
    return 0;
  struct held_file *h = held_of (arg, a->file);
  if (h == NULL)
    return -ENOMEM;
  h->refs++;
  if (a->used > h->used)
    h->used = a->used;
  return 0;
}

/* by_build_id's reference; a file only it holds (its answer was dropped,
   its file rewritten in place) has never been used: it goes first.  */
static int
count_build_id_ref (const void *key, size_t len, void *value, void *arg)
{
  struct held_file *h = held_of (arg, value);
  if (h == NULL)
    return -ENOMEM;
  h->refs++;
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
  if (h->file->refs == h->refs && h->used != idle->r->clock)
    idle->v[idle->n++] = h;
  return 0;
}

static int
compare_used (const void *x, const void *y)
{
  const struct held_file *a = *(struct held_file *const *) x, *b = *(struct held_file *const *) y;
  return a->used < b->used ? -1 : a->used > b->used;
}

struct going {
  struct st_resolver *r;
  struct st_hashmap *held;
  struct answer_key_copy {
    char *key;
    size_t len;
  } *keys;
  size_t n;
};

/* Notes the answers of the files that go, and what --stats says of them;
   they are removed after the walk.  */
static int
note_going_answer (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  struct going *g = arg;
  if (a->file == NULL)
    return 0;
  struct held_file *h = st_hashmap_get (g->held, &a->file, sizeof a->file);
  if (h == NULL || !h->go)
    return 0;
  char *copy = malloc (len);
  if (copy == NULL)
    return -ENOMEM;
  g->keys[g->n++] = (struct answer_key_copy) { memcpy (copy, key, len), len };
  g->r->let_go_found[a->file->found_by]++;
  if (a->by_name)
    g->r->let_go_by_name++;
  return 0;
}

/* The file F's last reference went (elf-file.h: gone): freed, or kept
   while the owner's results before the stamp may still name it.  */
static void
file_gone (struct st_elf_file *f, void *arg)
{
  struct st_resolver *r = arg;
  if (!r->park)
    st_elf_file_free (f);
  else if (ST_GROW (r->parked, r->cap_parked, r->n_parked, 16) == 0)
    r->parked[r->n_parked++] = (struct parked_file) { f, r->stamp };
  /* else out of memory: the file is kept for the run rather than freed
     under a sample that may still name it.  */
}

void
st_resolver_own_file (struct st_resolver *r, struct st_elf_file *f)
{
  f->gone = file_gone;
  f->gone_arg = r;
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
      st_elf_file_free (r->parked[i].file);
    else
      r->parked[kept++] = r->parked[i];
  r->n_parked = kept;
}

/* Lets go of the idle files beyond the ST_RESOLVER_IDLE_KEPT used last:
   their answers are forgotten (counted for --stats), and the file, its
   descriptor and its tables are closed and freed.  Out of memory, it lets
   go of nothing.  */
void
st_resolver_let_idle_files_go (struct st_resolver *r)
{
  struct st_hashmap *held = st_hashmap_new (free);
  size_t n_answers = st_hashmap_size (r->answers), n_ids = st_hashmap_size (r->by_build_id);
  struct idle_files idle = { .r = r, .v = calloc (n_answers + n_ids + 1, sizeof *idle.v) };
  struct going g = { .r = r, .held = held, .keys = calloc (n_answers + 1, sizeof *g.keys) };
  if (held != NULL && idle.v != NULL && g.keys != NULL
      && st_hashmap_foreach (r->answers, count_answer_refs, held) == 0
      && st_hashmap_foreach (r->by_build_id, count_build_id_ref, held) == 0)
    {
      st_hashmap_foreach (held, collect_idle, &idle);
      if (idle.n > ST_RESOLVER_IDLE_KEPT)
        {
          qsort (idle.v, idle.n, sizeof *idle.v, compare_used);
          for (size_t i = 0; i < idle.n - ST_RESOLVER_IDLE_KEPT; i++)
            idle.v[i]->go = true;
          if (st_hashmap_foreach (r->answers, note_going_answer, &g) == 0)
            {
              /* by_build_id's references first: the answers', removed
                 last, keep each file alive until then (a file only
                 by_build_id held goes here).  */
              for (size_t i = 0; i < idle.n - ST_RESOLVER_IDLE_KEPT; i++)
                {
                  r->let_go++;
                  st_resolver_drop_build_id_ref (r, idle.v[i]->file);
                }
              for (size_t i = 0; i < g.n; i++)
                {
                  st_hashmap_remove (r->answers, g.keys[i].key, g.keys[i].len);   /* unrefs */
                  r->files_held--;
                }
            }
        }
    }
  for (size_t i = 0; i < g.n; i++)
    free (g.keys[i].key);
  free (g.keys);
  st_hashmap_free (held);
  free (idle.v);
  r->sweep_at = r->files_held + ST_RESOLVER_IDLE_KEPT;
}

/* For st_hashmap_evict_oldest: only the answers "no file" may go.  */
static bool
missing_age (const void *value, uint64_t *used)
{
  const struct answer *a = value;
  *used = a->used;
  return a->file == NULL;
}

/* Forgets the answers "no file" beyond the ST_RESOLVER_MISSING_KEPT asked
   for last.  Out of memory, it forgets nothing.  */
void
st_resolver_forget_old_missing (struct st_resolver *r)
{
  size_t missing = 0;
  size_t gone = st_hashmap_evict_oldest (r->answers, ST_RESOLVER_MISSING_KEPT, missing_age,
                                         &missing);
  r->missing_held = missing - gone;
  r->missing_forgotten += gone;
  r->missing_sweep_at = r->missing_held + ST_RESOLVER_MISSING_KEPT;
}

uint64_t
st_resolver_missing_forgotten (const struct st_resolver *r)
{
  return r->missing_forgotten;
}

uint64_t
st_resolver_let_go (const struct st_resolver *r)
{
  return r->let_go;
}

void
st_resolver_let_go_found (const struct st_resolver *r, unsigned found[ST_FOUND_N],
                          unsigned *by_name)
{
  for (int i = 0; i < ST_FOUND_N; i++)
    found[i] += r->let_go_found[i];
  *by_name += r->let_go_by_name;
}
