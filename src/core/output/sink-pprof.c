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
#include <zlib.h>

#include "basic/hashmap.h"
#include "core/output/sink.h"
#include "core/output/stack-tree.h"
#include "src/core/output/profile.pb-c.h"

struct mapping {
  uint32_t filename, build_id;  /* string indices */
  uint64_t bias;                /* load bias: address - file address */
  uint64_t lo, hi;              /* the lowest and highest address seen */
  bool may_be_program;          /* st_module_may_be_program */
  uint64_t program_samples;     /* whole stacks whose program it is */
};

struct location {
  uint32_t mapping;             /* id, or 0 */
  uint64_t address;
  uint32_t first_line, n_lines; /* in lines[]: function ids, innermost first */
  bool activation;
};

/* A sample's key starts with pid, tid, comm and container (string ids, 0
   for none), then its location ids; each has up to one label per fixed
   field but the pid and tid, which are always there.  */
#define KEY_FIXED 4
#define N_LABELS 4

/* A distinct sample: its key (pid, tid, comm, container, location ids) in keys[] and
   its two values.  len 0: an empty slot.  */
struct sample_slot {
  uint64_t hash;
  uint32_t key, len;            /* in keys[], in uint32_t */
  uint64_t count, period;
};

/* A growable array of N elements of SIZE bytes.  */
struct array {
  void *v;
  size_t n, cap;
};

struct st_sink {
  FILE *out;
  struct st_hashmap *string_ids;   /* string -> index + 1 */
  struct array strings;            /* char *; [0] is "" */
  struct st_hashmap *mapping_ids;  /* (filename, build_id, bias) -> id */
  struct array mappings;           /* struct mapping; id = index + 1 */
  /* The frames' module and build-id pointers are stable while a file is
     mapped: most frames find their mapping here without hashing two
     strings.  A pointer may be reused for another file later, so an entry
     is checked with strcmp, once per sample (during one sample every
     pointer is alive: the same pointer is the same string).  */
  struct {
    const char *module, *build_id;
    uint64_t bias;
    uint32_t id;
    uint64_t checked;              /* the sample it was last checked in */
  } mapping_cache[64];
  uint64_t n_samples;
  struct st_hashmap *function_ids; /* struct function_key -> id */
  struct array functions;          /* struct function_key; id = index + 1 */
  struct st_hashmap *location_ids; /* (mapping, activation, address) -> id */
  struct array locations;          /* struct location; id = index + 1 */
  uint32_t location_cache[1024];   /* by address: ids, checked against the key */
  struct array lines;              /* uint32_t function ids */
  /* The distinct samples, in an open-addressing table hashed a word at a
     time: one lookup per sample, a quarter of the work of st_hashmap's
     byte-wise hash on these keys.  */
  struct sample_slot *slots;
  size_t slots_cap, n_distinct;
  struct array keys;               /* uint32_t */
  const char *last_comm;           /* checked with strcmp, as mapping_cache */
  uint32_t last_comm_id;
  uint32_t *key;
  size_t key_cap;                  /* in uint32_t */
  uint64_t first_time, last_time, period;
  bool have_time;
  uint32_t s_samples, s_count, s_cpu, s_nanoseconds, s_pid, s_tid, s_comm, s_container;
};

static void *
array_push (struct array *a, size_t size)
{
  if (a->n == a->cap)
    {
      size_t cap = a->cap ? 2 * a->cap : 64;
      void *v = realloc (a->v, cap * size);
      if (v == NULL)
        return NULL;
      a->v = v;
      a->cap = cap;
    }
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

/* A function is its shown name and its name in the file (string indices):
   overloads that demangle to one name without parameter lists stay apart,
   as pprof keeps them.  */
struct function_key {
  uint32_t name, system_name;
};

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

/* protobuf-c writes the message into this buffer, which deflates it to the
   output as it comes: the encoded profile is never whole in memory.  */
struct gzip_buffer {
  ProtobufCBuffer base;
  z_stream z;
  FILE *out;
  int error;
  unsigned char chunk[1 << 16];
};

static void
gzip_run (struct gzip_buffer *b, int flush)
{
  int r;
  do
    {
      b->z.next_out = b->chunk;
      b->z.avail_out = sizeof b->chunk;
      r = deflate (&b->z, flush);
      if (r == Z_STREAM_ERROR)
        {
          b->error = -EIO;
          return;
        }
      size_t n = sizeof b->chunk - b->z.avail_out;
      if (n > 0 && (b->error = st_sink_write (b->out, b->chunk, n)) < 0)
        return;
    }
  while (b->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
}

static void
gzip_append (ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
  struct gzip_buffer *b = (struct gzip_buffer *) buffer;
  if (b->error != 0)
    return;
  b->z.next_in = (unsigned char *) data;
  b->z.avail_in = len;
  gzip_run (b, Z_NO_FLUSH);
}

struct sample_list {
  Perftools__Profiles__Sample *samples, **ptrs;
  Perftools__Profiles__Label *labels, **label_ptrs;
  uint64_t *location_ids;
  int64_t *values;
  size_t n, n_ids;
  const struct st_sink *s;
};

static void
fill_sample (struct sample_list *l, const struct sample_slot *v)
{
  const struct st_sink *s = l->s;
  const uint32_t *k = (const uint32_t *) s->keys.v + v->key;
  size_t n_locs = v->len - KEY_FIXED;
  Perftools__Profiles__Sample *smp = &l->samples[l->n];
  perftools__profiles__sample__init (smp);
  smp->n_location_id = n_locs;
  smp->location_id = l->location_ids + l->n_ids;
  for (size_t i = 0; i < n_locs; i++)
    smp->location_id[i] = k[KEY_FIXED + i];
  smp->n_value = 2;
  smp->value = l->values + 2 * l->n;
  smp->value[0] = v->count;
  smp->value[1] = v->period;
  Perftools__Profiles__Label *lb = l->labels + N_LABELS * l->n;
  for (int i = 0; i < N_LABELS; i++)
    {
      perftools__profiles__label__init (&lb[i]);
      l->label_ptrs[N_LABELS * l->n + i] = &lb[i];
    }
  lb[0].key = s->s_pid;
  lb[0].num = (int32_t) k[0];
  lb[1].key = s->s_tid;
  lb[1].num = (int32_t) k[1];
  /* Labels without a value are left out: they sit at the end.  */
  size_t n_label = 2;
  if (k[2] != 0)
    {
      lb[n_label].key = s->s_comm;
      lb[n_label++].str = k[2];
    }
  if (k[3] != 0)
    {
      lb[n_label].key = s->s_container;
      lb[n_label++].str = k[3];
    }
  smp->n_label = n_label;
  smp->label = l->label_ptrs + N_LABELS * l->n;
  l->ptrs[l->n++] = smp;
  l->n_ids += n_locs;
}

static int
pprof_finish (struct st_sink *s)
{
  size_t n_map = s->mappings.n, n_loc = s->locations.n, n_fn = s->functions.n;
  struct sample_list sl = { .s = s };
  size_t n_smp = s->n_distinct, n_ids = s->keys.n - KEY_FIXED * s->n_distinct;

  Perftools__Profiles__Mapping *maps = calloc (n_map + 1, sizeof *maps);
  Perftools__Profiles__Mapping **map_ptrs = calloc (n_map + 1, sizeof *map_ptrs);
  Perftools__Profiles__Location *locs = calloc (n_loc + 1, sizeof *locs);
  Perftools__Profiles__Location **loc_ptrs = calloc (n_loc + 1, sizeof *loc_ptrs);
  Perftools__Profiles__Line *lines = calloc (s->lines.n + 1, sizeof *lines);
  Perftools__Profiles__Line **line_ptrs = calloc (s->lines.n + 1, sizeof *line_ptrs);
  Perftools__Profiles__Function *fns = calloc (n_fn + 1, sizeof *fns);
  Perftools__Profiles__Function **fn_ptrs = calloc (n_fn + 1, sizeof *fn_ptrs);
  sl.samples = calloc (n_smp + 1, sizeof *sl.samples);
  sl.ptrs = calloc (n_smp + 1, sizeof *sl.ptrs);
  sl.labels = calloc (N_LABELS * n_smp + 1, sizeof *sl.labels);
  sl.label_ptrs = calloc (N_LABELS * n_smp + 1, sizeof *sl.label_ptrs);
  sl.location_ids = calloc (n_ids + 1, sizeof *sl.location_ids);
  sl.values = calloc (2 * n_smp + 1, sizeof *sl.values);
  struct gzip_buffer *gz = calloc (1, sizeof *gz);
  int r = 0;
  if (maps == NULL || map_ptrs == NULL || locs == NULL || loc_ptrs == NULL || lines == NULL
      || line_ptrs == NULL || fns == NULL || fn_ptrs == NULL || sl.samples == NULL
      || sl.ptrs == NULL || sl.labels == NULL || sl.label_ptrs == NULL
      || sl.location_ids == NULL || sl.values == NULL || gz == NULL)
    {
      r = -ENOMEM;
      goto out;
    }

  /* mapping[0] is the main binary, by convention.  */
  size_t main_mapping = 0, k = 0;
  for (size_t i = 1; i < n_map; i++)
    if (((const struct mapping *) s->mappings.v)[i].program_samples
        > ((const struct mapping *) s->mappings.v)[main_mapping].program_samples)
      main_mapping = i;
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n_map; i++)
      {
        if ((i == main_mapping) != (pass == 0))
          continue;
        const struct mapping *m = (const struct mapping *) s->mappings.v + i;
        Perftools__Profiles__Mapping *pm = &maps[k];
        perftools__profiles__mapping__init (pm);
        pm->id = i + 1;
        pm->memory_start = m->lo & ~(uint64_t) 0xfff;
        pm->memory_limit = (m->hi | 0xfff) + 1;
        pm->file_offset = m->bias != 0 && pm->memory_start >= m->bias
                          ? pm->memory_start - m->bias : 0;
        pm->filename = m->filename;
        pm->build_id = m->build_id;
        pm->has_functions = true;
        pm->has_inline_frames = true;
        map_ptrs[k++] = pm;
      }

  for (size_t i = 0; i < s->lines.n; i++)
    {
      perftools__profiles__line__init (&lines[i]);
      lines[i].function_id = ((const uint32_t *) s->lines.v)[i];
      line_ptrs[i] = &lines[i];
    }
  for (size_t i = 0; i < n_loc; i++)
    {
      const struct location *l = (const struct location *) s->locations.v + i;
      perftools__profiles__location__init (&locs[i]);
      locs[i].id = i + 1;
      locs[i].mapping_id = l->mapping;
      locs[i].address = l->address;
      locs[i].n_line = l->n_lines;
      locs[i].line = line_ptrs + l->first_line;
      loc_ptrs[i] = &locs[i];
    }
  for (size_t i = 0; i < n_fn; i++)
    {
      perftools__profiles__function__init (&fns[i]);
      fns[i].id = i + 1;
      const struct function_key *key = (const struct function_key *) s->functions.v + i;
      fns[i].name = key->name;
      fns[i].system_name = key->system_name;
      fn_ptrs[i] = &fns[i];
    }
  for (size_t i = 0; i < s->slots_cap; i++)
    if (s->slots[i].len != 0)
      fill_sample (&sl, &s->slots[i]);

  Perftools__Profiles__ValueType types[2], period_type;
  Perftools__Profiles__ValueType *type_ptrs[2] = { &types[0], &types[1] };
  perftools__profiles__value_type__init (&types[0]);
  perftools__profiles__value_type__init (&types[1]);
  perftools__profiles__value_type__init (&period_type);
  types[0].type = s->s_samples;
  types[0].unit = s->s_count;
  types[1].type = period_type.type = s->s_cpu;
  types[1].unit = period_type.unit = s->s_nanoseconds;

  Perftools__Profiles__Profile profile;
  perftools__profiles__profile__init (&profile);
  profile.n_sample_type = 2;
  profile.sample_type = type_ptrs;
  profile.n_sample = n_smp;
  profile.sample = sl.ptrs;
  profile.n_mapping = n_map;
  profile.mapping = map_ptrs;
  profile.n_location = n_loc;
  profile.location = loc_ptrs;
  profile.n_function = n_fn;
  profile.function = fn_ptrs;
  profile.n_string_table = s->strings.n;
  profile.string_table = s->strings.v;
  profile.period_type = &period_type;
  profile.period = s->period;
  profile.duration_nanos = s->last_time - s->first_time;

  gz->base.append = gzip_append;
  gz->out = s->out;
  /* windowBits 15 + 16: a gzip header and trailer, as pprof expects; the
     fastest level, as Go's runtime/pprof writes them (level 6 would make
     files a third smaller for four times the time).  */
  if (deflateInit2 (&gz->z, Z_BEST_SPEED, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    {
      r = -ENOMEM;
      goto out;
    }
  perftools__profiles__profile__pack_to_buffer (&profile, &gz->base);
  if (gz->error == 0)
    gzip_run (gz, Z_FINISH);
  deflateEnd (&gz->z);
  r = gz->error;
  if (r == 0)
    r = st_sink_flush (s->out);

out:
  free (maps);
  free (map_ptrs);
  free (locs);
  free (loc_ptrs);
  free (lines);
  free (line_ptrs);
  free (fns);
  free (fn_ptrs);
  free (sl.samples);
  free (sl.ptrs);
  free (sl.labels);
  free (sl.label_ptrs);
  free (sl.location_ids);
  free (sl.values);
  free (gz);
  return r;
}

const struct st_sink_ops st_sink_pprof = {
  .name = "pprof",
  .description = "gzip-compressed pprof profile (profile.proto)",
  .whole_file = true,
  .new = pprof_new,
  .sample = pprof_sample,
  .finish = pprof_finish,
  .free = pprof_free,
};
