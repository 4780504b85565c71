/* perf.data headers: the file header, the attributes section and the
 * feature sections (build-ids, arch) of file mode, read before the first
 * record; pipe mode carries the same facts in records (source-perf.c).  */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "basic/bytes.h"
#include "basic/cleanup.h"
#include "basic/log.h"
#include "core/input/perf-reader.h"
#include "core/input/source-perf.h"

/* Records one attribute and the sample ids that select it.  */
int
st_perf_add_attr (struct st_perf_source *src, const uint8_t *attr, size_t attr_len,
                  const uint64_t *ids, size_t n_ids, uint64_t offset)
{
  struct perf_event_attr a;
  memset (&a, 0, sizeof a);
  if (attr_len < PERF_ATTR_SIZE_VER0)
    return st_why_at (src->err, EBADMSG, offset,
                      "event attribute of %zu bytes is smaller than the "
                      "oldest perf_event_attr (%d bytes)",
                      attr_len, PERF_ATTR_SIZE_VER0);
  memcpy (&a, attr, attr_len < sizeof a ? attr_len : sizeof a);
  if (src->n_attrs >= MAX_ATTRS)
    return st_why_at (src->err, EBADMSG, offset, "more than %d event attributes", MAX_ATTRS);
  struct attr_info *attrs = realloc (src->attrs, (src->n_attrs + 1) * sizeof *attrs);
  if (attrs == NULL)
    return -ENOMEM;
  src->attrs = attrs;
  struct attr_info *info = &attrs[src->n_attrs++];
  info->sample_type = a.sample_type;
  info->read_format = a.read_format;
  info->sample_regs_user = a.sample_regs_user;
  info->branch_sample_type = a.branch_sample_type;
  info->sample_id_all = a.sample_id_all;
  if (a.build_id)
    src->mmap_build_ids = true;
  for (size_t i = 0; i < n_ids; i++)
    {
      int r = st_hashmap_put_u64 (src->attr_by_id, ids[i], (void *) (uintptr_t) src->n_attrs);
      if (r < 0)
        return r;
    }
  return 0;
}

/* A perf string (u32 length, then the characters) of the LEN bytes at
   DATA into OUT, cut to SIZE - 1 characters; OUT is left as it was when
   DATA is too short.  Returns the characters copied.  */
static size_t
copy_perf_string (const uint8_t *data, size_t len, char *out, size_t size)
{
  if (len < 4)
    return 0;
  size_t n = st_get_u32 (data);
  if (n > len - 4)
    n = len - 4;
  if (n >= size)
    n = size - 1;
  memcpy (out, data + 4, n);
  out[n] = '\0';
  return n;
}

/* HEADER_CPUDESC and HEADER_CLOCK_DATA (and HEADER_SAMPLE_TIME, which
   with the file's time gives the wall clock when no CLOCK_DATA was
   recorded: perf writes it only with -k).  */
bool
st_perf_parse_recording_feature (struct st_perf_source *src, unsigned feature,
                                 const uint8_t *data, size_t len)
{
  struct st_recording_event *rec = &src->recording;
  switch (feature)
    {
    case PERF_HEADER_CPUDESC:
      copy_perf_string (data, len, rec->cpu_model, sizeof rec->cpu_model);
      return true;
    case PERF_HEADER_CLOCK_DATA:
      if (len >= 24 && st_get_u32 (data) >= 1)
        {
          rec->wall_ns = st_get_u64 (data + 8);
          rec->wall_at = st_get_u64 (data + 16);
        }
      return true;
    case PERF_HEADER_SAMPLE_TIME:
      if (len >= 16)
        {
          src->first_sample_time = st_get_u64 (data);
          src->last_sample_time = st_get_u64 (data + 8);
        }
      return true;
    default:
      return false;
    }
}

void
st_perf_set_arch (struct st_perf_source *src, const uint8_t *data, size_t len)
{
  if (len < 4)
    return;
  size_t n = copy_perf_string (data, len, src->arch, sizeof src->arch);
  src->arch[strnlen (src->arch, n)] = '\0';
}

/* File mode: the attributes section.  */
static int
read_file_attrs (struct st_perf_source *src, const struct perf_file_header *fh)
{
  if (fh->attr_size < PERF_ATTR_SIZE_VER0 + sizeof (struct perf_file_section))
    return st_why_at (src->err, EBADMSG, offsetof (struct perf_file_header, attr_size),
                      "attr_size %" PRIu64 " is too small", fh->attr_size);
  if (fh->attr_size > 65536)
    return st_why_at (src->err, EBADMSG, offsetof (struct perf_file_header, attr_size),
                      "attr_size %" PRIu64 " is too large", fh->attr_size);
  if (fh->attrs.size % fh->attr_size != 0)
    return st_why_at (src->err, EBADMSG, offsetof (struct perf_file_header, attrs),
                      "attrs section of %" PRIu64 " bytes is not a multiple of "
                      "attr_size %" PRIu64, fh->attrs.size, fh->attr_size);
  uint64_t n = fh->attrs.size / fh->attr_size;
  if (n == 0 || n > MAX_ATTRS)
    return st_why_at (src->err, EBADMSG, fh->attrs.offset, "%" PRIu64 " event attributes", n);
  _cleanup_free_ uint8_t *entry = malloc (fh->attr_size);
  if (entry == NULL)
    return -ENOMEM;
  for (uint64_t i = 0; i < n; i++)
    {
      uint64_t off = fh->attrs.offset + i * fh->attr_size;
      ssize_t got = st_input_pread (src->in, entry, fh->attr_size, off);
      if (got < 0)
        return got;
      if ((uint64_t) got < fh->attr_size)
        return st_why_at (src->err, EBADMSG, off, "truncated event attribute");
      size_t attr_len = fh->attr_size - sizeof (struct perf_file_section);
      struct perf_file_section ids;
      memcpy (&ids, entry + attr_len, sizeof ids);
      if (src->swapped)
        {
          ids.offset = bswap_64 (ids.offset);
          ids.size = bswap_64 (ids.size);
          st_perf_swap_attr (entry, attr_len);
        }
      if (ids.size % 8 != 0 || ids.size > src->data_end || ids.offset > st_input_size (src->in)
          || ids.size > st_input_size (src->in) - ids.offset)
        return st_why_at (src->err, EBADMSG, off + attr_len,
                          "event ids section (offset %" PRIu64 ", %" PRIu64
                          " bytes) lies outside the file", ids.offset, ids.size);
      _cleanup_free_ uint64_t *id_values = malloc (ids.size ? ids.size : 1);
      if (id_values == NULL)
        return -ENOMEM;
      got = st_input_pread (src->in, id_values, ids.size, ids.offset);
      if (got < 0)
        return got;
      if ((uint64_t) got < ids.size)
        return st_why_at (src->err, EBADMSG, ids.offset, "truncated event ids");
      if (src->swapped)
        for (uint64_t k = 0; k < ids.size / 8; k++)
          id_values[k] = bswap_64 (id_values[k]);
      int r = st_perf_add_attr (src, entry, attr_len, id_values, ids.size / 8, off);
      if (r < 0)
        return r;
    }
  return 0;
}

/* File mode: the feature sections after the data (build-ids, arch).  */
static int
read_file_features (struct st_perf_source *src, const struct perf_file_header *fh)
{
  uint64_t table = fh->data.offset + fh->data.size;
  uint64_t file_size = st_input_size (src->in);
  unsigned idx = 0;
  for (unsigned bit = 0; bit < PERF_HEADER_FEATURE_BITS; bit++)
    {
      if (!(fh->features[bit / 64] & (1ULL << (bit % 64))))
        continue;
      uint64_t at = table + idx++ * sizeof (struct perf_file_section);
      if (bit != PERF_HEADER_BUILD_ID && bit != PERF_HEADER_ARCH && bit != PERF_HEADER_CPUDESC
          && bit != PERF_HEADER_SAMPLE_TIME && bit != PERF_HEADER_CLOCK_DATA
          && bit != PERF_HEADER_DIR_FORMAT)
        continue;
      struct perf_file_section sec;
      if (st_input_pread (src->in, &sec, sizeof sec, at) != sizeof sec)
        {
          /* A recording cut short has no feature table: warn, go on.  */
          st_warning ("%s: feature table missing at byte %" PRIu64 " (file cut short?)",
                      st_input_name (src->in), at);
          return 0;
        }
      if (src->swapped)
        {
          sec.offset = bswap_64 (sec.offset);
          sec.size = bswap_64 (sec.size);
        }
      if (sec.offset > file_size || sec.size > file_size - sec.offset || sec.size > (1u << 30))
        return st_why_at (src->err, EBADMSG, at,
                          "feature %u section (offset %" PRIu64 ", %" PRIu64
                          " bytes) lies outside the file", bit, sec.offset, sec.size);
      _cleanup_free_ uint8_t *data = malloc (sec.size ? sec.size : 1);
      if (data == NULL)
        return -ENOMEM;
      if (st_input_pread (src->in, data, sec.size, sec.offset) != (ssize_t) sec.size)
        return st_why_at (src->err, EBADMSG, sec.offset, "truncated feature %u", bit);
      if (src->swapped)
        st_perf_swap_feature (bit, data, sec.size);
      int r = 0;
      if (bit == PERF_HEADER_ARCH)
        st_perf_set_arch (src, data, sec.size);
      else if (bit == PERF_HEADER_DIR_FORMAT)
        {
          if (sec.size < 8)
            return st_why_at (src->err, EBADMSG, sec.offset,
                              "HEADER_DIR_FORMAT of %" PRIu64 " bytes", sec.size);
          memcpy (&src->dir_version, data, 8);
          if (src->dir_version == 0)
            return st_why_at (src->err, EBADMSG, sec.offset,
                              "HEADER_DIR_FORMAT says version 0");
        }
      else if (st_perf_parse_recording_feature (src, bit, data, sec.size))
        ;
      else
        for (uint64_t pos = 0; pos + sizeof (struct perf_event_header) <= sec.size;)
          {
            const struct perf_event_header hdr = st_perf_record_header (data + pos), *h = &hdr;
            if (h->size < sizeof (struct perf_build_id_entry) || h->size > sec.size - pos)
              {
                r = st_why_at (src->err, EBADMSG, sec.offset + pos,
                               "build-id entry of %u bytes", h->size);
                break;
              }
            struct feature_record *q = malloc (sizeof *q + h->size);
            struct feature_record **v = realloc (src->build_ids,
                                                (src->n_build_ids + 1) * sizeof *v);
            if (q == NULL || v == NULL)
              {
                free (q);
                if (v)
                  src->build_ids = v;
                r = -ENOMEM;
                break;
              }
            src->build_ids = v;
            q->offset = sec.offset + pos;
            q->size = h->size;
            memcpy (q->data, data + pos, h->size);
            src->build_ids[src->n_build_ids++] = q;
            pos += h->size;
          }
      if (r < 0)
        return r;
    }
  return 0;
}

ST_DEFINE_CLEANUP (perf_source_freep, struct st_perf_source, st_perf_source_free)

int
st_perf_source_open (struct st_input *in, struct st_perf_source **out,
                     struct st_why *err)
{
  _cleanup_ (perf_source_freep) struct st_perf_source *src = calloc (1, sizeof *src);
  if (src == NULL)
    return -ENOMEM;
  src->in = in;
  src->err = err;
  src->attr_by_id = st_hashmap_new (NULL);
  if (src->attr_by_id == NULL)
    return -ENOMEM;

  struct perf_file_header fh;
  memset (&fh, 0, sizeof fh);
  ssize_t n = st_input_read (in, &fh, sizeof (struct perf_pipe_file_header));
  int r = 0;
  if (n < 0)
    r = n;
  else if (n < (ssize_t) sizeof (struct perf_pipe_file_header))
    r = st_why_at (err, EBADMSG, 0, "too short for a perf.data header (%zd bytes)", n);
  else if (fh.magic != PERF_MAGIC2 && fh.magic != PERF_MAGIC2_SWAPPED)
    r = st_why_at (err, EBADMSG, 0, "not a perf.data file (bad magic)");
  if (r < 0)
    return r;
  /* Written by a machine of the other byte order (s390x, ppc64): every
     piece is swapped as it is read, as perf does (needs_swap).  */
  src->swapped = fh.magic == PERF_MAGIC2_SWAPPED;
  if (src->swapped)
    {
      fh.size = bswap_64 (fh.size);
      for (size_t i = 0; i < 2; i++)
        if ((src->swap_buf[i] = malloc (UINT16_MAX + 1)) == NULL)
          return -ENOMEM;
    }

  if (fh.size == sizeof (struct perf_pipe_file_header))
    {
      src->pipe_mode = true;
      src->data_end = UINT64_MAX;
      *out = ST_TAKE_PTR (src);
      return 0;
    }
  if (fh.size != sizeof fh)
    return st_why_at (err, EBADMSG, 8, "header size %" PRIu64 " is neither a file (%zu) "
                      "nor a pipe (%zu) header", fh.size, sizeof fh,
                      sizeof (struct perf_pipe_file_header));
  n = st_input_read (in, (uint8_t *) &fh + 16, sizeof fh - 16);
  if (n < 0)
    return n;
  if (n < (ssize_t) (sizeof fh - 16))
    return st_why_at (err, EBADMSG, 16 + n, "truncated perf.data header");
  if (src->swapped)
    {
      fh.size = bswap_64 (fh.size);   /* swapped back: the header swaps it again */
      st_perf_swap_file_header (&fh);
    }
  if (!st_input_seekable (in))
    return st_why_at (err, ENOTSUP, 0, "a perf.data in file mode must be read from a "
                      "regular file: use `perf record -o -` for pipes");
  uint64_t size = st_input_size (in);
  if (fh.data.offset < sizeof fh || fh.data.offset > size)
    return st_why_at (err, EBADMSG, offsetof (struct perf_file_header, data),
                      "data section offset %" PRIu64 " lies outside the %" PRIu64
                      "-byte file", fh.data.offset, size);
  if (fh.data.size > UINT64_MAX - fh.data.offset)
    return st_why_at (err, EBADMSG, offsetof (struct perf_file_header, data.size),
                      "data section size %" PRIu64 " at offset %" PRIu64
                      " runs past 2^64", fh.data.size, fh.data.offset);
  if (fh.data.size == 0)
    {
      /* perf writes the header last: a recording that was killed has none. */
      st_warning ("%s: the data section size is 0 (perf record did not finish?); "
                  "reading to the end of the file", st_input_name (in));
      src->data_end = size;
    }
  else
    src->data_end = fh.data.offset + fh.data.size;
  if (fh.attrs.offset > size || fh.attrs.size > size - fh.attrs.offset)
    return st_why_at (err, EBADMSG, offsetof (struct perf_file_header, attrs),
                      "attrs section lies outside the file");
  r = read_file_attrs (src, &fh);
  if (r < 0)
    return r;
  if (fh.data.size != 0)
    {
      r = read_file_features (src, &fh);
      if (r < 0)
        return r;
    }
  else if (fh.features[PERF_HEADER_DIR_FORMAT / 64] & (1ULL << (PERF_HEADER_DIR_FORMAT % 64)))
    {
      /* A perf record --threads that did not finish: the feature is set,
         its section (the version) was never written.  */
      st_warning ("%s: the header says its records are in data.N files too: reading them "
                  "as version 1 of the directory format", st_input_name (in));
      src->dir_version = 1;
    }
  if (src->dir_version != 0)
    {
      /* perf record --threads: the records are in the files beside.  */
      r = st_perf_dir_open (src);
      if (r < 0)
        return r;
    }
  r = st_input_seek (in, fh.data.offset);
  if (r < 0)
    return r;
  *out = ST_TAKE_PTR (src);
  return 0;
}
