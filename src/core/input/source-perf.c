/* The perf.data reader's loop: records read in turn from a file or a pipe
 * (or fed one by one by the live source), perf's own records handled
 * (rounds, pipe-mode attributes and features), the kernel's put in time
 * order and delivered as st_events.  Headers: perf-header.c; decoding one
 * record: perf-record.c.  */
#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "basic/array.h"
#include "basic/bytes.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/why.h"
#include "core/input/ordered-queue.h"
#include "core/input/perf-compressed.h"
#include "core/input/perf-format.h"
#include "core/input/perf-reader.h"
#include "core/input/source-perf.h"

bool
st_perf_source_probe (const uint8_t *magic, size_t len)
{
  if (len < 8)
    return false;
  uint64_t m = st_get_u64 (magic);
  return m == PERF_MAGIC2 || m == PERF_MAGIC2_SWAPPED;
}

bool
st_perf_source_is_pipe (const struct st_perf_source *src)
{
  return src->pipe_mode;
}

void
st_perf_source_free (struct st_perf_source *src)
{
  if (src == NULL)
    return;
  free (src->attrs);
  free (src->swap_buf[0]);
  free (src->swap_buf[1]);
  free (src->lbr_ips);
  st_perf_decompressor_free (src->zstd);
  st_perf_dir_free (src->dir);
  st_hashmap_free (src->attr_by_id);
  for (size_t c = 0; c < sizeof src->pool / sizeof src->pool[0]; c++)
    {
      for (size_t i = 0; i < src->pool[c].n; i++)
        free (src->pool[c].bufs[i]);
      free (src->pool[c].bufs);
    }
  for (size_t i = 0; i < src->n_build_ids; i++)
    free (src->build_ids[i]);
  free (src->build_ids);
  free (src);
}


static int
deliver (struct st_perf_source *src, const uint8_t *rec, uint32_t size, uint64_t offset,
         uint32_t file)
{
  struct st_event ev;
  src->record_file = file;
  int r = st_perf_parse_record (src, rec, size, offset, &ev);
  src->record_malformed = r == -EBADMSG;
  if (r != 0)
    return r > 0 ? 0 : r;
  return src->fn (&ev, src->fn_arg);
}

/* Pooled copies: at most this many bytes wait for reuse (a round holds
   about a quarter of each CPU's 2 MiB ring: 1 MiB on 2 CPUs).  Small, as
   what waits here is resident however little the run later needs:
   tests/live/fork-storm.sh allows 4 MB of growth after its first 10 s.  */
#define POOL_MAX_BYTES ((size_t) 2 << 20)

/* The size class of a copy of SIZE bytes (at most 65535): buffers of
   256 << class bytes.  */
static size_t
pool_class (uint32_t size)
{
  size_t c = 0;
  while (((size_t) 256 << c) < size)
    c++;
  return c;
}

/* A buffer for a copy of SIZE bytes, from the pool or new; free () frees
   it too (the queue does so for what it still holds at the end).  */
static uint8_t *
pool_get (struct st_perf_source *src, uint32_t size)
{
  size_t c = pool_class (size);
  if (src->pool[c].n == 0)
    return malloc ((size_t) 256 << c);
  src->pool_bytes -= (size_t) 256 << c;
  return src->pool[c].bufs[--src->pool[c].n];
}

static void
pool_put (struct st_perf_source *src, void *buf, uint32_t size)
{
  size_t c = pool_class (size);
  if (src->pool_bytes + ((size_t) 256 << c) > POOL_MAX_BYTES
      || ST_GROW (src->pool[c].bufs, src->pool[c].cap, src->pool[c].n, 64) < 0)
    {
      free (buf);
      return;
    }
  src->pool[c].bufs[src->pool[c].n++] = buf;
  src->pool_bytes += (size_t) 256 << c;
}

static int
release_queued (const struct st_queued_record *rec, void *arg)
{
  struct st_perf_source *src = arg;
  int r = deliver (src, rec->data, rec->size, rec->offset, rec->file);
  if (r == -EBADMSG && src->err != NULL)
    src->err->input = st_perf_dir_file_name (src, rec->file);
  if (rec->owned)
    pool_put (src, (void *) rec->data, rec->size);
  return r;
}

/* A kernel record: ordered by time when it has one, else delivered now.
   Records the input keeps are queued in place; others (decompressed,
   byte-swapped) are copied, since their buffer moves on.  */
static int
handle_kernel_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                      uint64_t offset)
{
  struct st_queued_record q = { .offset = offset, .data = rec, .size = size, .file = src->file };
  if (!st_perf_record_time (src, rec, size, &q.time))
    return deliver (src, rec, size, offset, src->file);
  if (!st_perf_records_stable (src) || src->decompressing || src->swapped)
    {
      uint8_t *copy = pool_get (src, size);
      if (copy == NULL)
        return -ENOMEM;
      memcpy (copy, rec, size);
      q.data = copy;
      q.owned = true;
    }
  int r = st_ordered_queue_push (src->queue, &q);
  if (r < 0 && q.owned)
    pool_put (src, (void *) q.data, size);
  else if (src->dir != NULL)
    st_perf_dir_queued (src, q.time);
  return r;
}

/* A record perf itself inserted (pipe-mode headers, rounds, build-ids).  */
static int handle_user_record (struct st_perf_source *src, const uint8_t *rec,
                               uint32_t size, uint64_t offset);

struct decompressed {
  struct st_perf_source *src;
  uint64_t offset;           /* of the compressed record, for messages */
};

/* A record of the other byte order, copied into this machine's order: the
   copy stands in for it until the next record of the same kind.  */
static const uint8_t *
normalize (struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  if (!src->swapped)
    return rec;
  uint8_t *copy = src->swap_buf[src->decompressing];
  memcpy (copy, rec, size);
  st_perf_swap_record (src, copy, size);
  return copy;
}

static int
handle_decompressed (const uint8_t *rec, uint32_t size, void *arg)
{
  struct decompressed *d = arg;
  rec = normalize (d->src, rec, size);
  uint32_t type;
  memcpy (&type, rec, sizeof type);
  return type >= PERF_RECORD_USER_TYPE_START ? handle_user_record (d->src, rec, size, d->offset)
                                             : handle_kernel_record (d->src, rec, size, d->offset);
}

/* perf record -z: the records inside, in the order they were written.  */
static int
handle_compressed (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                   uint64_t offset)
{
  if (src->zstd == NULL)
    {
      if (st_perf_decompressor_new (&src->zstd) < 0)
        return -ENOMEM;
      st_perf_decompressor_set_swapped (src->zstd, src->swapped);
    }
  struct decompressed d = { src, offset };
  struct st_why why = { 0 };
  src->decompressing = true;
  int r = st_perf_decompress (src->zstd, rec + 8, size - 8, handle_decompressed, &d, &why);
  src->decompressing = false;
  if (r == -EBADMSG && why.text[0])
    return st_why_at (src->err, EBADMSG, offset, "compressed record: %s", why.text);
  return r;
}

static int
handle_user_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                    uint64_t offset)
{
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
  ssize_t n;
  switch (h->type)
    {
    case PERF_RECORD_FINISHED_ROUND:
      {
        /* A directory's files are merged by time (perf-dir.c), and a
           round of one file says nothing of the others.  */
        if (src->dir != NULL)
          return 0;
        int r = st_ordered_queue_round (src->queue);
        uint64_t low = st_ordered_queue_min_offset (src->queue);
        if (src->in != NULL)
          st_input_release_before (src->in, low < offset ? low : offset);
        return r;
      }

    case PERF_RECORD_HEADER_ATTR:
      {
        if (size < 8 + 8)
          return st_why_at (src->err, EBADMSG, offset, "attribute record of %u bytes", size);
        uint32_t attr_size = st_get_u32 (rec + 8 + 4);  /* perf_event_attr.size */
        if (attr_size == 0)
          attr_size = PERF_ATTR_SIZE_VER0;
        if (attr_size > size - 8)
          return st_why_at (src->err, EBADMSG, offset,
                            "attribute of %u bytes in a %u-byte record",
                            attr_size, size);
        size_t n_ids = (size - 8 - attr_size) / 8;
        uint64_t ids[n_ids ? n_ids : 1];
        memcpy (ids, rec + 8 + attr_size, n_ids * 8);
        return st_perf_add_attr (src, rec + 8, attr_size, ids, n_ids, offset);
      }

    case PERF_RECORD_HEADER_BUILD_ID:
      {
        struct st_event ev;
        int r = st_perf_parse_build_id_entry (src, rec, size, offset, &ev);
        return r < 0 ? r : src->fn (&ev, src->fn_arg);
      }

    case PERF_RECORD_HEADER_FEATURE:
      if (size >= 16 && st_get_u64 (rec + 8) == PERF_HEADER_ARCH)
        st_perf_set_arch (src, rec + 16, size - 16);
      else if (size >= 16
               && st_perf_parse_recording_feature (src, st_get_u64 (rec + 8), rec + 16,
                                                   size - 16))
        {
          struct st_event ev = { .kind = ST_EVENT_RECORDING, .recording = src->recording };
          return src->fn (&ev, src->fn_arg);
        }
      return 0;

    case PERF_RECORD_HEADER_TRACING_DATA:
      /* The tracing data follows the record in the stream.  */
      if (size < 12)
        return st_why_at (src->err, EBADMSG, offset, "tracing data record of %u bytes", size);
      src->skipped_records++;
      n = st_input_skip (src->in, st_get_u32 (rec + 8));
      if (n < 0)
        return n;
      if ((uint64_t) n < st_get_u32 (rec + 8))
        return st_why_at (src->err, EBADMSG, st_input_offset (src->in),
                          "tracing data runs past the end of the input");
      return 0;

    case PERF_RECORD_AUXTRACE:
      {
        if (size < 16)
          return st_why_at (src->err, EBADMSG, offset, "auxtrace record of %u bytes", size);
        uint64_t aux = st_get_u64 (rec + 8);
        src->skipped_records++;
        n = st_input_skip (src->in, aux);
        if (n < 0)
          return n;
        if ((uint64_t) n < aux)
          return st_why_at (src->err, EBADMSG, st_input_offset (src->in),
                            "auxtrace data runs past the end of the input");
        return 0;
      }

    case PERF_RECORD_COMPRESSED:
      return handle_compressed (src, rec, size, offset);

    default:
      src->skipped_records++;
      return 0;
    }
}

/* Reads one record: 0 with *REC and *SIZE, 1 at a clean end of input, or
   an error.  */
static int
read_record (struct st_perf_source *src, const uint8_t **rec, uint32_t *size, uint64_t *offset)
{
  *offset = st_input_offset (src->in);
  if (!src->pipe_mode && *offset >= src->data_end)
    return 1;
  const uint8_t *p;
  ssize_t n = st_input_peek (src->in, sizeof (struct perf_event_header), &p);
  if (n < 0)
    return n;
  if (n == 0)
    {
      if (!src->pipe_mode && src->data_end != UINT64_MAX)
        return st_why_at (src->err, EBADMSG, *offset,
                          "the file ends before its data section does "
                          "(at byte %" PRIu64 ")", src->data_end);
      return 1;
    }
  if ((size_t) n < sizeof (struct perf_event_header))
    return st_why_at (src->err, EBADMSG, *offset,
                      "truncated record header (%zd of 8 bytes)", n);
  struct perf_event_header h;
  memcpy (&h, p, sizeof h);
  if (src->swapped)
    {
      h.type = bswap_32 (h.type);
      h.size = bswap_16 (h.size);
    }
  if (h.size < sizeof h)
    return st_why_at (src->err, EBADMSG, *offset,
                      "record of type %u has size %u, smaller than its header",
                      h.type, h.size);
  if (!src->pipe_mode && *offset + h.size > src->data_end)
    return st_why_at (src->err, EBADMSG, *offset,
                      "record of type %u and %u bytes runs past the end of "
                      "the data section (byte %" PRIu64 ")",
                      h.type, h.size, src->data_end);
  *size = h.size;
  return st_input_next_record (src->in, h.size, rec, "record", h.type, *offset, src->err);
}

/* Reads and handles the next record of SRC->in: 0, 1 at the end of its
   data, or an error.  */
static int
next_record (struct st_perf_source *src)
{
  const uint8_t *rec = NULL;
  uint32_t size = 0;
  uint64_t offset = 0;
  int r = read_record (src, &rec, &size, &offset);
  if (r != 0)
    return r;
  rec = normalize (src, rec, size);
  uint32_t type;
  memcpy (&type, rec, sizeof type);
  if (type >= PERF_RECORD_USER_TYPE_START)
    r = handle_user_record (src, rec, size, offset);
  else
    r = handle_kernel_record (src, rec, size, offset);
  if (src->in != NULL && st_ordered_queue_size (src->queue) == 0)
    st_input_release_before (src->in, offset + size);
  return r;
}

/* Delivers whatever is still queued when the reading ended with R (0, an
   error or an interruption): a fault never costs the samples read before
   it.  A malformed record found only now, when its time came, stops
   nothing either: the records queued behind it are later in time, not in
   the input; one of another CPU's ring, written before it in the same
   round, is before the fault in the input.  Only an error that is not the
   record's own (the output's, memory) ends the flush.  The first fault is
   the one reported.  */
static int
flush_to_the_end (struct st_perf_source *src, int r, struct st_why *err)
{
  struct st_why first;
  if (err != NULL)
    first = *err;
  for (;;)
    {
      src->record_malformed = false;
      int f = st_ordered_queue_flush_all (src->queue);
      if (f == 0)
        break;
      if (r == 0)
        {
          r = f;
          if (err != NULL)
            first = *err;
        }
      if (f != -EBADMSG || !src->record_malformed)
        break;
    }
  if (err != NULL)
    *err = first;
  return r;
}

int
st_perf_source_run (struct st_perf_source *src, st_event_fn fn, void *arg,
                    volatile sig_atomic_t *stop, struct st_why *err)
{
  src->fn = fn;
  src->fn_arg = arg;
  src->err = err;
  src->queue = st_ordered_queue_new (release_queued, src);
  if (src->queue == NULL)
    return -ENOMEM;

  int r = 0;
  if (!src->pipe_mode && src->in != NULL)
    {
      struct st_event ev = { .kind = ST_EVENT_RECORDING, .recording = src->recording };
      struct stat st;
      /* Without CLOCK_DATA: perf wrote the file when the last sample was
         in, so its time stands for the last sample's.  */
      if (ev.recording.wall_ns == 0 && src->last_sample_time > 0
          && stat (st_input_name (src->in), &st) == 0 && S_ISREG (st.st_mode))
        {
          ev.recording.wall_ns = (uint64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
          ev.recording.wall_at = src->last_sample_time;
          ev.recording.wall_from_file = true;
        }
      r = fn (&ev, arg);
    }
  for (size_t i = 0; i < src->n_build_ids && r == 0; i++)
    {
      struct st_event ev;
      struct feature_record *q = src->build_ids[i];
      r = st_perf_parse_build_id_entry (src, q->data, q->size, q->offset, &ev);
      if (r == 0)
        r = fn (&ev, arg);
    }

  /* Records are 8-byte aligned in the file, but a stream's buffer gives
     no such promise: parsers read fields with memcpy.  */
  if (r == 0 && src->dir != NULL)
    r = st_perf_dir_run (src, next_record, stop);
  else
    {
      /* Queued records stay in the input's buffers, not copied, until a
         round or an empty queue lets them go.  */
      if (src->in != NULL)
        st_input_keep (src->in);
      while (r == 0 && !(stop && *stop))
        r = next_record (src);
    }
  if (r == 1)
    r = 0;
  r = flush_to_the_end (src, r, err);
  /* Copies (a stream's records, a compressed record's, a swapped one's)
     left by an error are freed; records of a mapped file are not.  */
  st_ordered_queue_free (src->queue, free);
  src->queue = NULL;
  return r;
}


/* The generic face of this source (see source.h).  */
static const char *
perf_arch (const void *state)
{
  const struct st_perf_source *src = state;
  return src->arch[0] ? src->arch : NULL;
}

static void
perf_report (const void *state)
{
  const struct st_perf_source *src = state;
  if (src->skipped_records > 0)
    st_info ("%" PRIu64 " records of kinds not needed for unwinding were skipped",
             src->skipped_records);
  st_perf_dir_report (src);
}

ST_DEFINE_FILE_SOURCE (st_source_perf, "perf.data", st_perf_source, perf_arch, perf_report);

/* Live mode: the records come from perf_event_open ring buffers, fed one
   by one by the live source, instead of from an input.  */
int
st_perf_source_new_live (const struct perf_event_attr *attr, bool mmap_build_ids,
                         st_event_fn fn, void *arg, struct st_why *err,
                         struct st_perf_source **out)
{
  struct st_perf_source *src = calloc (1, sizeof *src);
  if (src == NULL)
    return -ENOMEM;
  src->pipe_mode = true;
  src->data_end = UINT64_MAX;
  src->fn = fn;
  src->fn_arg = arg;
  src->err = err;
  src->attr_by_id = st_hashmap_new (NULL);
  src->queue = st_ordered_queue_new (release_queued, src);
  int r = (src->attr_by_id && src->queue) ? 0 : -ENOMEM;
  if (r == 0)
    r = st_perf_add_attr (src, (const uint8_t *) attr, sizeof *attr, NULL, 0, 0);
  /* The mapping records come from the sideband's event, not ATTR's.  */
  src->mmap_build_ids = src->mmap_build_ids || mmap_build_ids;
  if (r < 0)
    {
      st_perf_source_free_live (src);
      return r;
    }
  *out = src;
  return 0;
}

int
st_perf_source_feed (struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  uint64_t offset = src->live_offset;
  src->live_offset += size;
  uint32_t type;
  memcpy (&type, rec, sizeof type);
  if (type >= PERF_RECORD_USER_TYPE_START)
    return handle_user_record (src, rec, size, offset);
  return handle_kernel_record (src, rec, size, offset);
}

int
st_perf_source_feed_in_place (struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  src->in_place = true;
  int r = st_perf_source_feed (src, rec, size);
  src->in_place = false;
  return r;
}

int
st_perf_source_end_round (struct st_perf_source *src)
{
  return st_ordered_queue_round (src->queue);
}

uint64_t
st_perf_source_max_time (const struct st_perf_source *src)
{
  return st_ordered_queue_max_time (src->queue);
}

int
st_perf_source_flush (struct st_perf_source *src)
{
  return st_ordered_queue_flush_all (src->queue);
}

void
st_perf_source_free_live (struct st_perf_source *src)
{
  if (src == NULL)
    return;
  st_ordered_queue_free (src->queue, free);
  src->queue = NULL;
  st_perf_source_free (src);
}
