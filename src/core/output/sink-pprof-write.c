/* -f pprof's encoding: the profile that sink-pprof.c aggregated, as
 * protobuf-c's profile.proto messages, streamed through zlib.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "core/output/sink-pprof.h"
#include "core/output/sink.h"
#include "src/core/output/profile.pb-c.h"

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

int
st_pprof_write (struct st_sink *s)
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
