/* -f pprof: a gzip-compressed profile.proto, the format that `go tool
 * pprof`, Parca, Pyroscope and Google Cloud Profiler read.
 *
 * Samples are aggregated as they arrive: one Location per distinct address
 * (with the inlined functions at it as its Lines, under --inline), one
 * Mapping per loaded file, one Function per name, and one Sample per
 * distinct (pid, tid, comm, stack) with two values: the number of samples
 * and the sum of their periods.  Memory follows the distinct stacks, not
 * the samples.  The encoding is protobuf-c's, streamed through zlib.
 *
 * Functions are named as in -f folded (st_frame_display_name), so that
 * both outputs agree, and their system_name is the name in the symbol
 * table (mangled; the same name for a C function); frames carry no source
 * lines, so functions have none.  A sink sees frames, not mappings: a Mapping covers the pages of
 * its file that samples hit, and its file offset assumes, as the GNU and
 * LLVM linkers lay out code, that code's file offset equals its address in
 * the file.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "basic/hashmap.h"
#include "core/output/sink-pprof.h"
#include "core/output/sink.h"
#include "core/output/stack-tree.h"

static void *
array_push (struct array *a, size_t size)
{
  if (st_grow (&a->v, &a->cap, a->n, size, 64) < 0)
    return NULL;
  return (char *) a->v + a->n++ * size;
}

/* The index of STR in the string table, added when new; 0 (the empty
   string) for NULL; UINT32_MAX without memory.  */
static uint32_t
string_id (struct st_sink *s, const char *str)
{
  if (str == NULL)
    return 0;
  size_t len = strlen (str);
  uintptr_t id = (uintptr_t) st_hashmap_get (s->string_ids, str, len);
  if (id != 0)
    return id - 1;
  char *copy = strdup (str);
  char **slot = copy != NULL ? array_push (&s->strings, sizeof *slot) : NULL;
  if (slot == NULL)
    {
      free (copy);
      return UINT32_MAX;
    }
  *slot = copy;
  id = s->strings.n;
  if (st_hashmap_put (s->string_ids, str, len, (void *) id) < 0)
    return UINT32_MAX;
  return id - 1;
}

static void
pprof_free (struct st_sink *s)
{
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->strings.n; i++)
    free (((char **) s->strings.v)[i]);
  free (s->strings.v);
  free (s->mappings.v);
  free (s->functions.v);
  free (s->locations.v);
  free (s->lines.v);
  free (s->key);
  st_hashmap_free (s->string_ids);
  st_hashmap_free (s->mapping_ids);
  st_hashmap_free (s->function_ids);
  st_hashmap_free (s->location_ids);
  free (s->slots);
  free (s->keys.v);
  free (s);
}

static struct st_sink *
pprof_new (FILE *out, const struct st_sink_options *opts)
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->out = out;
  s->string_ids = st_hashmap_new (NULL);
  s->mapping_ids = st_hashmap_new (NULL);
  s->function_ids = st_hashmap_new (NULL);
  s->location_ids = st_hashmap_new (NULL);
  s->slots_cap = 1024;
  s->slots = calloc (s->slots_cap, sizeof *s->slots);
  s->key_cap = 256;
  s->key = malloc (s->key_cap * sizeof *s->key);
  if (s->string_ids == NULL || s->mapping_ids == NULL || s->function_ids == NULL
      || s->location_ids == NULL || s->slots == NULL || s->key == NULL
      || string_id (s, "") != 0)
    goto fail;
  s->s_samples = string_id (s, "samples");
  s->s_count = string_id (s, "count");
  s->s_cpu = string_id (s, "cpu");
  s->s_nanoseconds = string_id (s, "nanoseconds");
  s->s_pid = string_id (s, "pid");
  s->s_tid = string_id (s, "tid");
  s->s_comm = string_id (s, "comm");
  s->s_container = string_id (s, "container");
  if (s->s_comm == UINT32_MAX || s->s_container == UINT32_MAX || s->s_samples == UINT32_MAX || s->s_count == UINT32_MAX
      || s->s_cpu == UINT32_MAX || s->s_nanoseconds == UINT32_MAX || s->s_pid == UINT32_MAX
      || s->s_tid == UINT32_MAX)
    goto fail;
  return s;
fail:
  pprof_free (s);
  return NULL;
}

/* The id of the mapping of F's file at BIAS, added when new.  */
static uint32_t
mapping_id_slow (struct st_sink *s, const struct st_frame *f, uint64_t bias)
{
  struct {
    uint32_t filename, build_id;
    uint64_t bias;
  } key = { string_id (s, f->module), string_id (s, f->build_id), bias };
  if (key.filename == UINT32_MAX || key.build_id == UINT32_MAX)
    return UINT32_MAX;
  uintptr_t id = (uintptr_t) st_hashmap_get (s->mapping_ids, &key, sizeof key);
  if (id == 0)
    {
      struct mapping *m = array_push (&s->mappings, sizeof *m);
      if (m == NULL)
        return UINT32_MAX;
      *m = (struct mapping) { key.filename, key.build_id, key.bias, f->pc, f->pc,
                              st_module_may_be_program (f->module), 0 };
      id = s->mappings.n;
      if (st_hashmap_put (s->mapping_ids, &key, sizeof key, (void *) id) < 0)
        return UINT32_MAX;
    }
  return id;
}

static bool
same_string (const struct st_sink *s, uint32_t id, const char *str)
{
  return strcmp (((char *const *) s->strings.v)[id], str != NULL ? str : "") == 0;
}

/* The id of the mapping of F's file (0 when it has none), or UINT32_MAX
   without memory; the mapping grows to cover F's address.  */
static uint32_t
mapping_id (struct st_sink *s, const struct st_frame *f)
{
  if (f->module == NULL)
    return 0;
  uint64_t bias = f->has_elf_address ? f->pc - f->elf_address : 0;
  size_t slot = ((uintptr_t) f->module >> 4)
                % (sizeof s->mapping_cache / sizeof s->mapping_cache[0]);
  uint32_t id = s->mapping_cache[slot].id;
  if (id == 0 || s->mapping_cache[slot].module != f->module
      || s->mapping_cache[slot].build_id != f->build_id || s->mapping_cache[slot].bias != bias
      || (s->mapping_cache[slot].checked != s->n_samples
          && (!same_string (s, ((struct mapping *) s->mappings.v)[id - 1].filename, f->module)
              || !same_string (s, ((struct mapping *) s->mappings.v)[id - 1].build_id,
                               f->build_id))))
    {
      id = mapping_id_slow (s, f, bias);
      if (id == UINT32_MAX)
        return id;
      s->mapping_cache[slot].module = f->module;
      s->mapping_cache[slot].build_id = f->build_id;
      s->mapping_cache[slot].bias = bias;
      s->mapping_cache[slot].id = id;
    }
  s->mapping_cache[slot].checked = s->n_samples;
  struct mapping *m = (struct mapping *) s->mappings.v + (id - 1);
  if (f->pc < m->lo)
    m->lo = f->pc;
  if (f->pc > m->hi)
    m->hi = f->pc;
  return id;
}

static uint32_t
function_id (struct st_sink *s, const struct st_frame *f)
{
  char buf[256];
  struct function_key key;
  key.name = string_id (s, st_frame_display_name (f, buf, sizeof buf));
  if (key.name == UINT32_MAX)
    return UINT32_MAX;
  key.system_name = key.name;
  if (f->raw_symbol != NULL && f->symbol != NULL && strcmp (f->raw_symbol, f->symbol) != 0)
    key.system_name = string_id (s, f->raw_symbol);
  if (key.system_name == UINT32_MAX)
    return UINT32_MAX;
  uintptr_t id = (uintptr_t) st_hashmap_get (s->function_ids, &key, sizeof key);
  if (id != 0)
    return id;
  struct function_key *slot = array_push (&s->functions, sizeof *slot);
  if (slot == NULL)
    return UINT32_MAX;
  *slot = key;
  id = s->functions.n;
  return st_hashmap_put (s->function_ids, &key, sizeof key, (void *) id) < 0 ? UINT32_MAX : id;
}

/* The location of FRAMES[0..N): the functions inlined at one address, then
   the function they were inlined into (FRAMES[N - 1]).  */
static uint32_t
location_id (struct st_sink *s, const struct st_frame *frames, size_t n)
{
  const struct st_frame *f = &frames[n - 1];
  uint32_t mapping = mapping_id (s, f);
  if (mapping == UINT32_MAX)
    return UINT32_MAX;
  struct {
    uint32_t mapping, activation;
    uint64_t address;
  } key = { mapping, f->activation, f->pc };
  size_t slot = (f->pc * 0x9e3779b97f4a7c15ULL) >> 54;
  uintptr_t id = s->location_cache[slot];
  if (id != 0)
    {
      const struct location *l = (const struct location *) s->locations.v + (id - 1);
      if (l->address == f->pc && l->mapping == mapping && l->activation == f->activation)
        return id;
    }
  id = (uintptr_t) st_hashmap_get (s->location_ids, &key, sizeof key);
  if (id != 0)
    {
      s->location_cache[slot] = id;
      return id;
    }
  uint32_t first_line = s->lines.n;
  for (size_t i = 0; i < n; i++)
    {
      uint32_t fn = function_id (s, &frames[i]);
      uint32_t *line = fn != UINT32_MAX ? array_push (&s->lines, sizeof *line) : NULL;
      if (line == NULL)
        return UINT32_MAX;
      *line = fn;
    }
  struct location *loc = array_push (&s->locations, sizeof *loc);
  if (loc == NULL)
    return UINT32_MAX;
  *loc = (struct location) { mapping, f->pc, first_line, n, f->activation };
  id = s->locations.n;
  if (st_hashmap_put (s->location_ids, &key, sizeof key, (void *) id) < 0)
    return UINT32_MAX;
  s->location_cache[slot] = id;
  return id;
}

static uint64_t
hash_key (const uint32_t *k, size_t n)
{
  uint64_t h = n * 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < n; i++)
    {
      h = (h ^ k[i]) * 0xff51afd7ed558ccdULL;
      h ^= h >> 29;
    }
  return h;
}

static int
grow_slots (struct st_sink *s)
{
  size_t cap = 2 * s->slots_cap;
  struct sample_slot *slots = calloc (cap, sizeof *slots);
  if (slots == NULL)
    return -ENOMEM;
  for (size_t i = 0; i < s->slots_cap; i++)
    if (s->slots[i].len != 0)
      {
        size_t j = s->slots[i].hash & (cap - 1);
        while (slots[j].len != 0)
          j = (j + 1) & (cap - 1);
        slots[j] = s->slots[i];
      }
  free (s->slots);
  s->slots = slots;
  s->slots_cap = cap;
  return 0;
}

/* The slot of the sample KEY[0..LEN), added when new; NULL without memory.  */
static struct sample_slot *
sample_slot (struct st_sink *s, const uint32_t *key, size_t len)
{
  if (2 * (s->n_distinct + 1) > s->slots_cap && grow_slots (s) < 0)
    return NULL;
  uint64_t h = hash_key (key, len);
  size_t mask = s->slots_cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask)
    {
      struct sample_slot *e = &s->slots[i];
      if (e->len == 0)
        {
          if (s->keys.n + len > UINT32_MAX)
            return NULL;
          uint32_t at = s->keys.n;
          for (size_t k = 0; k < len; k++)
            {
              uint32_t *w = array_push (&s->keys, sizeof *w);
              if (w == NULL)
                return NULL;
              *w = key[k];
            }
          *e = (struct sample_slot) { .hash = h, .key = at, .len = len };
          s->n_distinct++;
          return e;
        }
      if (e->hash == h && e->len == len
          && memcmp ((const uint32_t *) s->keys.v + e->key, key, len * sizeof *key) == 0)
        return e;
    }
}

static int
pprof_sample (struct st_sink *s, const struct st_callchain *c)
{
  const struct st_sample *smp = c->sample;
  s->n_samples++;
  if (KEY_FIXED + c->n_frames > s->key_cap)
    {
      size_t cap = s->key_cap;
      while (cap < KEY_FIXED + c->n_frames)
        cap *= 2;
      uint32_t *key = realloc (s->key, cap * sizeof *key);
      if (key == NULL)
        return -ENOMEM;
      s->key = key;
      s->key_cap = cap;
    }
  size_t len = 0;
  s->key[len++] = smp->pid;
  s->key[len++] = smp->tid;
  if (c->comm != s->last_comm || !same_string (s, s->last_comm_id, c->comm))
    {
      s->last_comm_id = string_id (s, c->comm);
      if (s->last_comm_id == UINT32_MAX)
        return -ENOMEM;
      s->last_comm = c->comm;
    }
  s->key[len++] = s->last_comm_id;
  /* 0: the host; else "KIND:NAME", for pprof's container label.  */
  uint32_t container = 0;
  if (c->container != NULL && c->container->kind != NULL && c->container->name != NULL)
    {
      char label[512];
      snprintf (label, sizeof label, "%s:%s", c->container->kind, c->container->name);
      container = string_id (s, label);
      if (container == UINT32_MAX)
        return -ENOMEM;
    }
  s->key[len++] = container;
  for (size_t i = 0; i < c->n_frames;)
    {
      size_t j = i;
      while (j + 1 < c->n_frames && c->frames[j].inlined)
        j++;
      uint32_t id = location_id (s, &c->frames[i], j - i + 1);
      if (id == UINT32_MAX)
        return -ENOMEM;
      s->key[len++] = id;
      i = j + 1;
    }
  /* The program of most whole stacks becomes mapping[0]: the outermost
     file of each that may be a program.  */
  for (size_t k = len; c->stop == ST_STOP_END && k-- > KEY_FIXED;)
    {
      uint32_t m = ((const struct location *) s->locations.v)[s->key[k] - 1].mapping;
      struct mapping *map = m != 0 ? (struct mapping *) s->mappings.v + (m - 1) : NULL;
      if (map != NULL && map->may_be_program)
        {
          map->program_samples++;
          break;
        }
    }

  struct sample_slot *v = sample_slot (s, s->key, len);
  if (v == NULL)
    return -ENOMEM;
  v->count++;
  v->period += smp->period;
  if (s->period == 0)
    s->period = smp->period;
  if (!s->have_time || smp->time < s->first_time)
    s->first_time = smp->time;
  if (!s->have_time || smp->time > s->last_time)
    s->last_time = smp->time;
  s->have_time = true;
  return 0;
}

const struct st_sink_ops st_sink_pprof = {
  .name = "pprof",
  .description = "gzip-compressed pprof profile (profile.proto)",
  .whole_file = true,
  .new = pprof_new,
  .sample = pprof_sample,
  .finish = st_pprof_write,
  .free = pprof_free,
};
