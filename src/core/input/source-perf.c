#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "basic/bytes.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/input/ordered-queue.h"
#include "core/input/perf-format.h"
#include "core/input/source-perf.h"

#define MAX_ATTRS 4096

struct attr_info {
  uint64_t sample_type;
  uint64_t read_format;
  uint64_t sample_regs_user;
  uint64_t branch_sample_type;
  bool sample_id_all;
};

/* A build-id entry of the feature section, kept until the run starts.  */
struct feature_record {
  uint64_t offset;
  uint32_t size;
  uint8_t data[];
};

struct st_perf_source {
  struct st_input *in;
  bool pipe_mode;
  uint64_t data_end;          /* file mode: end of the data section */
  struct attr_info *attrs;
  size_t n_attrs;
  struct st_hashmap *attr_by_id;  /* sample id -> attr index + 1 */
  char arch[32];
  uint64_t skipped_records;
  /* feature section build-ids, delivered before the first record */
  struct feature_record **build_ids;
  size_t n_build_ids;
  /* file mode: what the header says of the recording, delivered before
     the first record too */
  struct st_recording_event recording;
  uint64_t first_sample_time, last_sample_time;

  uint64_t live_offset;       /* live mode: bytes fed so far */

  /* state of one run */
  struct st_ordered_queue *queue;
  st_event_fn fn;
  void *fn_arg;
  struct st_source_error *err;
};

/* Records of a mapped file stay where they are for the whole run; those of
   a stream or a live ring buffer are copied before they are queued.  */
static bool
records_stable (const struct st_perf_source *src)
{
  return src->in != NULL && st_input_stable (src->in);
}

/* Records need not be aligned in a hostile file: copy the header out.  */
static struct perf_event_header
record_header (const uint8_t *rec)
{
  struct perf_event_header h;
  memcpy (&h, rec, sizeof h);
  return h;
}

bool
st_perf_source_probe (const uint8_t *magic, size_t len)
{
  if (len < 8)
    return false;
  uint64_t m = st_get_u64 (magic);
  return m == PERF_MAGIC2 || m == PERF_MAGIC2_SWAPPED;
}

const char *
st_perf_source_arch (const struct st_perf_source *src)
{
  return src->arch[0] ? src->arch : NULL;
}

bool
st_perf_source_is_pipe (const struct st_perf_source *src)
{
  return src->pipe_mode;
}

uint64_t
st_perf_source_skipped_records (const struct st_perf_source *src)
{
  return src->skipped_records;
}

void
st_perf_source_free (struct st_perf_source *src)
{
  if (src == NULL)
    return;
  free (src->attrs);
  st_hashmap_free (src->attr_by_id);
  for (size_t i = 0; i < src->n_build_ids; i++)
    free (src->build_ids[i]);
  free (src->build_ids);
  free (src);
}

/* Records one attribute and the sample ids that select it.  */
static int
add_attr (struct st_perf_source *src, const uint8_t *attr, size_t attr_len,
          const uint64_t *ids, size_t n_ids, uint64_t offset)
{
  struct perf_event_attr a;
  memset (&a, 0, sizeof a);
  if (attr_len < PERF_ATTR_SIZE_VER0)
    return st_source_bad_input (src->err, offset,
                                "event attribute of %zu bytes is smaller than the "
                                "oldest perf_event_attr (%d bytes)",
                                attr_len, PERF_ATTR_SIZE_VER0);
  memcpy (&a, attr, attr_len < sizeof a ? attr_len : sizeof a);
  if (src->n_attrs >= MAX_ATTRS)
    return st_source_bad_input (src->err, offset, "more than %d event attributes", MAX_ATTRS);
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
  for (size_t i = 0; i < n_ids; i++)
    {
      int r = st_hashmap_put_u64 (src->attr_by_id, ids[i], (void *) (uintptr_t) src->n_attrs);
      if (r < 0)
        return r;
    }
  return 0;
}

/* Where the sample id sits in a sample, for files whose events lack
   PERF_SAMPLE_IDENTIFIER: after the fixed fields that precede ID.  */
static int
sample_id_position (uint64_t sample_type)
{
  if (sample_type & PERF_SAMPLE_IDENTIFIER)
    return 0;
  if (!(sample_type & PERF_SAMPLE_ID))
    return -1;
  int pos = 0;
  if (sample_type & PERF_SAMPLE_IP)
    pos++;
  if (sample_type & PERF_SAMPLE_TID)
    pos++;
  if (sample_type & PERF_SAMPLE_TIME)
    pos++;
  if (sample_type & PERF_SAMPLE_ADDR)
    pos++;
  return pos;
}

/* The attribute that describes a record.  With several events the record's
   sample id picks it, as in perf's evlist__event2evsel().  */
static const struct attr_info *
attr_for_record (const struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  if (src->n_attrs == 0)
    return NULL;
  if (src->n_attrs == 1)
    return &src->attrs[0];
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  const struct attr_info *first = &src->attrs[0];
  uint64_t id;
  if (h->type == PERF_RECORD_SAMPLE)
    {
      int pos = sample_id_position (first->sample_type);
      if (pos < 0 || 8 + 8 * (uint32_t) (pos + 1) > size)
        return first;
      id = st_get_u64 (rec + 8 + 8 * pos);
    }
  else
    {
      if (!first->sample_id_all)
        return first;
      if (first->sample_type & PERF_SAMPLE_IDENTIFIER)
        {
          if (size < 16)
            return first;
          id = st_get_u64 (rec + size - 8);
        }
      else
        return first;  /* perf itself cannot tell here either */
    }
  uintptr_t idx = (uintptr_t) st_hashmap_get_u64 (src->attr_by_id, id);
  return idx ? &src->attrs[idx - 1] : first;
}

static size_t
popcount64 (uint64_t v)
{
  return (size_t) __builtin_popcountll (v);
}

/* The sample_id_all trailer of a non-sample record.  */
static size_t
id_trailer_size (const struct attr_info *a)
{
  if (!a->sample_id_all)
    return 0;
  uint64_t t = a->sample_type;
  return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID)
              + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU)
              + !!(t & PERF_SAMPLE_IDENTIFIER));
}

/* The timestamp of a record, if it has one.  */
static bool
record_time (const struct st_perf_source *src, const uint8_t *rec, uint32_t size, uint64_t *time)
{
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  if (h->type >= PERF_RECORD_USER_TYPE_START)
    return false;
  const struct attr_info *a = attr_for_record (src, rec, size);
  if (a == NULL || !(a->sample_type & PERF_SAMPLE_TIME))
    return false;
  uint64_t t = a->sample_type;
  size_t pos;
  if (h->type == PERF_RECORD_SAMPLE)
    pos = 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP)
                   + !!(t & PERF_SAMPLE_TID));
  else
    {
      size_t trailer = id_trailer_size (a);
      if (trailer == 0 || trailer + 8 > size)
        return false;
      pos = size - trailer + 8 * !!(t & PERF_SAMPLE_TID);
    }
  if (pos + 8 > size)
    return false;
  *time = st_get_u64 (rec + pos);
  return true;
}

/* Bounds-checked cursor over one record.  */
struct cursor {
  const uint8_t *p, *end;
  const uint8_t *start;
  uint64_t offset;   /* input offset of start */
};

#define NEED(c, n, what)                                                      \
  do                                                                          \
    {                                                                         \
      if ((uint64_t) ((c)->end - (c)->p) < (uint64_t) (n))                    \
        return st_source_bad_input (src->err, (c)->offset + ((c)->p - (c)->start), \
                                    "%s runs past the end of its %zu-byte record", \
                                    what, (size_t) ((c)->end - (c)->start));  \
    }                                                                         \
  while (0)

static int
parse_sample (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
              uint64_t offset, struct st_event *ev)
{
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  const struct attr_info *a = attr_for_record (src, rec, size);
  if (a == NULL)
    return st_source_bad_input (src->err, offset, "sample record before any event attribute");
  uint64_t t = a->sample_type;
  struct cursor c = { rec + 8, rec + size, rec, offset };
  struct cursor *cp = &c;
  struct st_sample *s = &ev->sample;
  memset (s, 0, sizeof *s);
  ev->kind = ST_EVENT_SAMPLE;
  s->input_offset = offset;
  s->pid = s->tid = -1;
  s->user_mode = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;

  if (t & PERF_SAMPLE_IDENTIFIER)
    { NEED (cp, 8, "sample identifier"); c.p += 8; }
  if (t & PERF_SAMPLE_IP)
    { NEED (cp, 8, "sample ip"); s->ip = st_get_u64 (c.p); c.p += 8; }
  if (t & PERF_SAMPLE_TID)
    {
      NEED (cp, 8, "sample pid/tid");
      s->pid = (int32_t) st_get_u32 (c.p);
      s->tid = (int32_t) st_get_u32 (c.p + 4);
      c.p += 8;
    }
  if (t & PERF_SAMPLE_TIME)
    { NEED (cp, 8, "sample time"); s->time = st_get_u64 (c.p); c.p += 8; }
  if (t & PERF_SAMPLE_ADDR)
    { NEED (cp, 8, "sample addr"); c.p += 8; }
  if (t & PERF_SAMPLE_ID)
    { NEED (cp, 8, "sample id"); c.p += 8; }
  if (t & PERF_SAMPLE_STREAM_ID)
    { NEED (cp, 8, "sample stream id"); c.p += 8; }
  if (t & PERF_SAMPLE_CPU)
    { NEED (cp, 8, "sample cpu"); s->cpu = st_get_u32 (c.p); c.p += 8; }
  if (t & PERF_SAMPLE_PERIOD)
    { NEED (cp, 8, "sample period"); s->period = st_get_u64 (c.p); c.p += 8; }
  if (t & PERF_SAMPLE_READ)
    {
      uint64_t rf = a->read_format;
      uint64_t per_value = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
      uint64_t times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
                            + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));
      if (rf & PERF_FORMAT_GROUP)
        {
          NEED (cp, 8, "sample read group");
          uint64_t nr = st_get_u64 (c.p);
          c.p += 8;
          NEED (cp, times, "sample read times");
          c.p += times;
          if (nr > (uint64_t) (c.end - c.p) / per_value)
            NEED (cp, UINT64_MAX, "sample read values");
          c.p += nr * per_value;
        }
      else
        {
          NEED (cp, per_value + times, "sample read value");
          c.p += per_value + times;
        }
    }
  if (t & PERF_SAMPLE_CALLCHAIN)
    {
      NEED (cp, 8, "callchain length");
      uint64_t nr = st_get_u64 (c.p);
      c.p += 8;
      if (nr > (uint64_t) (c.end - c.p) / 8)
        NEED (cp, UINT64_MAX, "callchain");
      const uint64_t *ips = (const uint64_t *) c.p;
      /* Kernel frames sit between PERF_CONTEXT_KERNEL and the next marker;
         the user part perf may add (frame pointers) is not used here.  */
      bool in_kernel = false;
      for (uint64_t i = 0; i < nr; i++)
        {
          uint64_t ip = st_get_u64 (c.p + 8 * i);
          if (ip >= PERF_CONTEXT_MAX_MARK)
            {
              if (in_kernel)
                break;
              in_kernel = ip == PERF_CONTEXT_KERNEL_MARK;
              if (in_kernel)
                s->kernel_ips = ips + i + 1;
              continue;
            }
          if (in_kernel)
            s->n_kernel_ips++;
        }
      c.p += nr * 8;
    }
  if (t & PERF_SAMPLE_RAW)
    {
      NEED (cp, 4, "raw data size");
      uint32_t raw = st_get_u32 (c.p);
      c.p += 4;
      NEED (cp, raw, "raw data");
      c.p += raw;
    }
  if (t & PERF_SAMPLE_BRANCH_STACK)
    {
      NEED (cp, 8, "branch stack length");
      uint64_t nr = st_get_u64 (c.p);
      c.p += 8;
      if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
        {
          NEED (cp, 8, "branch stack hw index");
          c.p += 8;
        }
      if (nr > (uint64_t) (c.end - c.p) / 24)
        NEED (cp, UINT64_MAX, "branch stack");
      c.p += nr * 24;
    }
  if (t & PERF_SAMPLE_REGS_USER)
    {
      NEED (cp, 8, "user register abi");
      uint64_t abi = st_get_u64 (c.p);
      c.p += 8;
      if (abi != 0)
        {
          if (abi != ST_REGS_ABI_32 && abi != ST_REGS_ABI_64)
            return st_source_bad_input (src->err, offset + (c.p - 8 - rec),
                                        "unknown user register abi %" PRIu64, abi);
          size_t n = popcount64 (a->sample_regs_user);
          NEED (cp, 8 * n, "user registers");
          s->abi = abi;
          s->regs_mask = a->sample_regs_user;
          s->regs = (const uint64_t *) c.p;
          s->n_regs = n;
          c.p += 8 * n;
        }
    }
  if (t & PERF_SAMPLE_STACK_USER)
    {
      NEED (cp, 8, "user stack size");
      uint64_t stack_size = st_get_u64 (c.p);
      c.p += 8;
      if (stack_size != 0)
        {
          NEED (cp, stack_size, "user stack");
          const uint8_t *stack = c.p;
          c.p += stack_size;
          NEED (cp, 8, "user stack dyn_size");
          uint64_t dyn = st_get_u64 (c.p);
          c.p += 8;
          if (dyn > stack_size)
            return st_source_bad_input (src->err, offset + (c.p - 8 - rec),
                                        "user stack dyn_size %" PRIu64
                                        " is larger than the stack copy (%" PRIu64 " bytes)",
                                        dyn, stack_size);
          s->stack = stack;
          s->stack_size = dyn;
        }
    }
  /* Later fields (weight, data source, ...) are not needed.  */
  ev->time = s->time;
  return 0;
}

/* Copies a NUL-terminated string that must end inside the record.  */
static int
record_string (struct st_perf_source *src, struct cursor *c, const char *what,
               const char **out)
{
  size_t max = c->end - c->p;
  size_t len = strnlen ((const char *) c->p, max);
  if (len == max)
    return st_source_bad_input (src->err, c->offset + (c->p - c->start),
                                "%s is not terminated inside its record", what);
  *out = (const char *) c->p;
  return 0;
}

static int
parse_build_id_entry (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                      uint64_t offset, struct st_event *ev)
{
  struct cursor c = { rec, rec + size, rec, offset };
  struct cursor *cp = &c;
  NEED (cp, sizeof (struct perf_build_id_entry), "build-id entry");
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  ev->kind = ST_EVENT_BUILD_ID;
  ev->time = 0;
  struct st_build_id_event *b = &ev->build_id;
  b->pid = (int32_t) st_get_u32 (rec + 8);
  memcpy (b->build_id, rec + 12, ST_BUILD_ID_MAX);
  b->build_id_size = ST_BUILD_ID_MAX;
  if (h->misc & PERF_BUILD_ID_MISC_SIZE)
    b->build_id_size = rec[12 + 20] <= ST_BUILD_ID_MAX ? rec[12 + 20] : ST_BUILD_ID_MAX;
  c.p += sizeof (struct perf_build_id_entry);
  return record_string (src, cp, "build-id file name", &b->filename);
}

static int
parse_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
              uint64_t offset, struct st_event *ev)
{
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  struct cursor c = { rec + 8, rec + size, rec, offset };
  struct cursor *cp = &c;

  memset (ev, 0, sizeof *ev);
  record_time (src, rec, size, &ev->time);

  /* Non-sample records carry the sample_id_all trailer: leave it out of
     the body.  */
  if (h->type != PERF_RECORD_SAMPLE)
    {
      const struct attr_info *a = attr_for_record (src, rec, size);
      size_t trailer = a ? id_trailer_size (a) : 0;
      if (trailer > (size_t) (c.end - c.p))
        trailer = 0;
      c.end -= trailer;
    }

  switch (h->type)
    {
    case PERF_RECORD_SAMPLE:
      return parse_sample (src, rec, size, offset, ev);

    case PERF_RECORD_MMAP:
      {
        bool user = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
        if (!user)
          return 1;  /* kernel and module maps: not for the user unwinder */
        NEED (cp, 32, "mmap record");
        ev->kind = ST_EVENT_MMAP;
        struct st_mmap_event *m = &ev->mmap;
        m->pid = (int32_t) st_get_u32 (c.p);
        m->tid = (int32_t) st_get_u32 (c.p + 4);
        m->start = st_get_u64 (c.p + 8);
        m->len = st_get_u64 (c.p + 16);
        m->pgoff = st_get_u64 (c.p + 24);
        m->prot = (h->misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_READ : PROT_READ | PROT_EXEC;
        c.p += 32;
        return record_string (src, cp, "mmap file name", &m->filename);
      }

    case PERF_RECORD_MMAP2:
      {
        bool user = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
        if (!user)
          return 1;
        NEED (cp, 64, "mmap2 record");
        ev->kind = ST_EVENT_MMAP;
        struct st_mmap_event *m = &ev->mmap;
        m->pid = (int32_t) st_get_u32 (c.p);
        m->tid = (int32_t) st_get_u32 (c.p + 4);
        m->start = st_get_u64 (c.p + 8);
        m->len = st_get_u64 (c.p + 16);
        m->pgoff = st_get_u64 (c.p + 24);
        if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
          {
            uint8_t n = c.p[32];
            m->build_id_size = n <= ST_BUILD_ID_MAX ? n : ST_BUILD_ID_MAX;
            memcpy (m->build_id, c.p + 36, m->build_id_size);
          }
        else
          {
            m->has_dev_ino = true;
            m->maj = st_get_u32 (c.p + 32);
            m->min = st_get_u32 (c.p + 36);
            m->ino = st_get_u64 (c.p + 40);
            m->ino_generation = st_get_u64 (c.p + 48);
          }
        m->prot = st_get_u32 (c.p + 56);
        m->flags = st_get_u32 (c.p + 60);
        c.p += 64;
        return record_string (src, cp, "mmap2 file name", &m->filename);
      }

    case PERF_RECORD_COMM:
      NEED (cp, 8, "comm record");
      ev->kind = ST_EVENT_COMM;
      ev->comm.pid = (int32_t) st_get_u32 (c.p);
      ev->comm.tid = (int32_t) st_get_u32 (c.p + 4);
      ev->comm.exec = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
      c.p += 8;
      return record_string (src, cp, "comm name", &ev->comm.comm);

    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      NEED (cp, 24, "fork/exit record");
      ev->kind = h->type == PERF_RECORD_FORK ? ST_EVENT_FORK : ST_EVENT_EXIT;
      ev->task.pid = (int32_t) st_get_u32 (c.p);
      ev->task.ppid = (int32_t) st_get_u32 (c.p + 4);
      ev->task.tid = (int32_t) st_get_u32 (c.p + 8);
      ev->task.ptid = (int32_t) st_get_u32 (c.p + 12);
      if (ev->time == 0)
        ev->time = st_get_u64 (c.p + 16);
      return 0;

    case PERF_RECORD_LOST:
      NEED (cp, 16, "lost record");
      ev->kind = ST_EVENT_LOST;
      ev->lost.lost = st_get_u64 (c.p + 8);
      return 0;

    case PERF_RECORD_LOST_SAMPLES:
      NEED (cp, 8, "lost samples record");
      ev->kind = ST_EVENT_LOST;
      ev->lost.lost = st_get_u64 (c.p);
      return 0;

    default:
      return 1;  /* a record this tool has no use for */
    }
}

static int
deliver (struct st_perf_source *src, const uint8_t *rec, uint32_t size, uint64_t offset)
{
  struct st_event ev;
  int r = parse_record (src, rec, size, offset, &ev);
  if (r != 0)
    return r > 0 ? 0 : r;
  return src->fn (&ev, src->fn_arg);
}

static int
release_queued (const struct st_queued_record *rec, void *arg)
{
  struct st_perf_source *src = arg;
  int r = deliver (src, rec->data, rec->size, rec->offset);
  if (!records_stable (src))
    free ((void *) rec->data);
  return r;
}

/* A kernel record: ordered by time when it has one, else delivered now.
   Records of a mapped file are queued in place; a stream's are copied,
   since its buffer moves on.  */
static int
handle_kernel_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                      uint64_t offset)
{
  struct st_queued_record q = { .offset = offset, .data = rec, .size = size };
  if (!record_time (src, rec, size, &q.time))
    return deliver (src, rec, size, offset);
  if (!records_stable (src))
    {
      uint8_t *copy = malloc (size);
      if (copy == NULL)
        return -ENOMEM;
      memcpy (copy, rec, size);
      q.data = copy;
    }
  int r = st_ordered_queue_push (src->queue, &q);
  if (r < 0 && !records_stable (src))
    free ((void *) q.data);
  return r;
}

static void
set_arch (struct st_perf_source *src, const uint8_t *data, size_t len)
{
  /* HEADER_ARCH is a perf string: u32 length, then the characters.  */
  if (len < 4)
    return;
  uint32_t n = st_get_u32 (data);
  if (n > len - 4)
    n = len - 4;
  if (n >= sizeof src->arch)
    n = sizeof src->arch - 1;
  memcpy (src->arch, data + 4, n);
  src->arch[n] = '\0';
  src->arch[strnlen (src->arch, n)] = '\0';
}

/* HEADER_CPUDESC and HEADER_CLOCK_DATA (and HEADER_SAMPLE_TIME, which
   with the file's time gives the wall clock when no CLOCK_DATA was
   recorded: perf writes it only with -k).  True when it was one.  */
static bool
parse_recording_feature (struct st_perf_source *src, unsigned feature, const uint8_t *data,
                         size_t len)
{
  struct st_recording_event *rec = &src->recording;
  switch (feature)
    {
    case PERF_HEADER_CPUDESC:
      if (len >= 4)
        {
          size_t n = st_get_u32 (data);
          if (n > len - 4)
            n = len - 4;
          if (n >= sizeof rec->cpu_model)
            n = sizeof rec->cpu_model - 1;
          memcpy (rec->cpu_model, data + 4, n);
          rec->cpu_model[n] = '\0';
        }
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

/* A record perf itself inserted (pipe-mode headers, rounds, build-ids).  */
static int
handle_user_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                    uint64_t offset)
{
  const struct perf_event_header hdr = record_header (rec), *h = &hdr;
  ssize_t n;
  switch (h->type)
    {
    case PERF_RECORD_FINISHED_ROUND:
      {
        int r = st_ordered_queue_round (src->queue);
        uint64_t low = st_ordered_queue_min_offset (src->queue);
        if (src->in != NULL)
          st_input_release_before (src->in, low < offset ? low : offset);
        return r;
      }

    case PERF_RECORD_HEADER_ATTR:
      {
        if (size < 8 + 8)
          return st_source_bad_input (src->err, offset, "attribute record of %u bytes", size);
        uint32_t attr_size = st_get_u32 (rec + 8 + 4);  /* perf_event_attr.size */
        if (attr_size == 0)
          attr_size = PERF_ATTR_SIZE_VER0;
        if (attr_size > size - 8)
          return st_source_bad_input (src->err, offset,
                                      "attribute of %u bytes in a %u-byte record",
                                      attr_size, size);
        size_t n_ids = (size - 8 - attr_size) / 8;
        uint64_t ids[n_ids ? n_ids : 1];
        memcpy (ids, rec + 8 + attr_size, n_ids * 8);
        return add_attr (src, rec + 8, attr_size, ids, n_ids, offset);
      }

    case PERF_RECORD_HEADER_BUILD_ID:
      {
        struct st_event ev;
        int r = parse_build_id_entry (src, rec, size, offset, &ev);
        return r < 0 ? r : src->fn (&ev, src->fn_arg);
      }

    case PERF_RECORD_HEADER_FEATURE:
      if (size >= 16 && st_get_u64 (rec + 8) == PERF_HEADER_ARCH)
        set_arch (src, rec + 16, size - 16);
      else if (size >= 16
               && parse_recording_feature (src, st_get_u64 (rec + 8), rec + 16, size - 16))
        {
          struct st_event ev = { .kind = ST_EVENT_RECORDING, .recording = src->recording };
          return src->fn (&ev, src->fn_arg);
        }
      return 0;

    case PERF_RECORD_HEADER_TRACING_DATA:
      /* The tracing data follows the record in the stream.  */
      if (size < 12)
        return st_source_bad_input (src->err, offset, "tracing data record of %u bytes", size);
      src->skipped_records++;
      n = st_input_skip (src->in, st_get_u32 (rec + 8));
      if (n < 0)
        return n;
      if ((uint64_t) n < st_get_u32 (rec + 8))
        return st_source_bad_input (src->err, st_input_offset (src->in),
                                    "tracing data runs past the end of the input");
      return 0;

    case PERF_RECORD_AUXTRACE:
      {
        if (size < 16)
          return st_source_bad_input (src->err, offset, "auxtrace record of %u bytes", size);
        uint64_t aux = st_get_u64 (rec + 8);
        src->skipped_records++;
        n = st_input_skip (src->in, aux);
        if (n < 0)
          return n;
        if ((uint64_t) n < aux)
          return st_source_bad_input (src->err, st_input_offset (src->in),
                                      "auxtrace data runs past the end of the input");
        return 0;
      }

    case PERF_RECORD_COMPRESSED:
      return st_source_unsupported (src->err, offset,
                                    "zstd-compressed records (perf record -z) are not "
                                    "supported: record without -z, or convert with "
                                    "`perf inject -i IN -o OUT`");

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
        return st_source_bad_input (src->err, *offset,
                                    "the file ends before its data section does "
                                    "(at byte %" PRIu64 ")", src->data_end);
      return 1;
    }
  if ((size_t) n < sizeof (struct perf_event_header))
    return st_source_bad_input (src->err, *offset,
                                "truncated record header (%zd of 8 bytes)", n);
  struct perf_event_header h;
  memcpy (&h, p, sizeof h);
  if (h.size < sizeof h)
    return st_source_bad_input (src->err, *offset,
                                "record of type %u has size %u, smaller than its header",
                                h.type, h.size);
  if (!src->pipe_mode && *offset + h.size > src->data_end)
    return st_source_bad_input (src->err, *offset,
                                "record of type %u and %u bytes runs past the end of "
                                "the data section (byte %" PRIu64 ")",
                                h.type, h.size, src->data_end);
  n = st_input_next (src->in, h.size, rec);
  if (n < 0)
    return n;
  if ((size_t) n < h.size)
    return st_source_bad_input (src->err, *offset,
                                "truncated record: type %u says %u bytes, the input "
                                "has %zd", h.type, h.size, n);
  *size = h.size;
  return 0;
}

int
st_perf_source_run (struct st_perf_source *src, st_event_fn fn, void *arg,
                    volatile sig_atomic_t *stop, struct st_source_error *err)
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
      r = parse_build_id_entry (src, q->data, q->size, q->offset, &ev);
      if (r == 0)
        r = fn (&ev, arg);
    }

  /* Records are 8-byte aligned in the file, but a stream's buffer gives
     no such promise: parsers read fields with memcpy.  */
  while (r == 0 && !(stop && *stop))
    {
      const uint8_t *rec = NULL;
      uint32_t size = 0;
      uint64_t offset = 0;
      r = read_record (src, &rec, &size, &offset);
      if (r != 0)
        break;
      uint32_t type;
      memcpy (&type, rec, sizeof type);
      if (type >= PERF_RECORD_USER_TYPE_START)
        r = handle_user_record (src, rec, size, offset);
      else
        r = handle_kernel_record (src, rec, size, offset);
    }
  if (r == 1)
    r = 0;
  /* Whatever was read before an error or an interruption is still
     delivered: a fault never costs the samples before it.  */
  struct st_source_error saved = *err;
  int flushed = st_ordered_queue_flush_all (src->queue);
  if (r == 0)
    r = flushed;
  else
    *err = saved;
  st_ordered_queue_free (src->queue, records_stable (src) ? NULL : free);
  src->queue = NULL;
  return r;
}

/* File mode: the attributes section.  */
static int
read_file_attrs (struct st_perf_source *src, const struct perf_file_header *fh)
{
  if (fh->attr_size < PERF_ATTR_SIZE_VER0 + sizeof (struct perf_file_section))
    return st_source_bad_input (src->err, offsetof (struct perf_file_header, attr_size),
                                "attr_size %" PRIu64 " is too small", fh->attr_size);
  if (fh->attr_size > 65536)
    return st_source_bad_input (src->err, offsetof (struct perf_file_header, attr_size),
                                "attr_size %" PRIu64 " is too large", fh->attr_size);
  if (fh->attrs.size % fh->attr_size != 0)
    return st_source_bad_input (src->err, offsetof (struct perf_file_header, attrs),
                                "attrs section of %" PRIu64 " bytes is not a multiple of "
                                "attr_size %" PRIu64, fh->attrs.size, fh->attr_size);
  uint64_t n = fh->attrs.size / fh->attr_size;
  if (n == 0 || n > MAX_ATTRS)
    return st_source_bad_input (src->err, fh->attrs.offset, "%" PRIu64 " event attributes", n);
  uint8_t *entry = malloc (fh->attr_size);
  if (entry == NULL)
    return -ENOMEM;
  int r = 0;
  for (uint64_t i = 0; i < n && r == 0; i++)
    {
      uint64_t off = fh->attrs.offset + i * fh->attr_size;
      ssize_t got = st_input_pread (src->in, entry, fh->attr_size, off);
      if (got < 0)
        { r = got; break; }
      if ((uint64_t) got < fh->attr_size)
        {
          r = st_source_bad_input (src->err, off, "truncated event attribute");
          break;
        }
      size_t attr_len = fh->attr_size - sizeof (struct perf_file_section);
      struct perf_file_section ids;
      memcpy (&ids, entry + attr_len, sizeof ids);
      if (ids.size % 8 != 0 || ids.size > src->data_end || ids.offset > st_input_size (src->in)
          || ids.size > st_input_size (src->in) - ids.offset)
        {
          r = st_source_bad_input (src->err, off + attr_len,
                                   "event ids section (offset %" PRIu64 ", %" PRIu64
                                   " bytes) lies outside the file", ids.offset, ids.size);
          break;
        }
      uint64_t *id_values = malloc (ids.size ? ids.size : 1);
      if (id_values == NULL)
        { r = -ENOMEM; break; }
      got = st_input_pread (src->in, id_values, ids.size, ids.offset);
      if (got < 0 || (uint64_t) got < ids.size)
        r = got < 0 ? got : st_source_bad_input (src->err, ids.offset, "truncated event ids");
      else
        r = add_attr (src, entry, attr_len, id_values, ids.size / 8, off);
      free (id_values);
    }
  free (entry);
  return r;
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
          && bit != PERF_HEADER_SAMPLE_TIME && bit != PERF_HEADER_CLOCK_DATA)
        continue;
      struct perf_file_section sec;
      if (st_input_pread (src->in, &sec, sizeof sec, at) != sizeof sec)
        {
          /* A recording cut short has no feature table: warn, go on.  */
          st_warning ("%s: feature table missing at byte %" PRIu64 " (file cut short?)",
                      st_input_name (src->in), at);
          return 0;
        }
      if (sec.offset > file_size || sec.size > file_size - sec.offset || sec.size > (1u << 30))
        return st_source_bad_input (src->err, at,
                                    "feature %u section (offset %" PRIu64 ", %" PRIu64
                                    " bytes) lies outside the file", bit, sec.offset, sec.size);
      uint8_t *data = malloc (sec.size ? sec.size : 1);
      if (data == NULL)
        return -ENOMEM;
      if (st_input_pread (src->in, data, sec.size, sec.offset) != (ssize_t) sec.size)
        {
          free (data);
          return st_source_bad_input (src->err, sec.offset, "truncated feature %u", bit);
        }
      int r = 0;
      if (bit == PERF_HEADER_ARCH)
        set_arch (src, data, sec.size);
      else if (parse_recording_feature (src, bit, data, sec.size))
        ;
      else
        for (uint64_t pos = 0; pos + sizeof (struct perf_event_header) <= sec.size;)
          {
            const struct perf_event_header hdr = record_header (data + pos), *h = &hdr;
            if (h->size < sizeof (struct perf_build_id_entry) || h->size > sec.size - pos)
              {
                r = st_source_bad_input (src->err, sec.offset + pos,
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
      free (data);
      if (r < 0)
        return r;
    }
  return 0;
}

int
st_perf_source_open (struct st_input *in, struct st_perf_source **out,
                     struct st_source_error *err)
{
  struct st_perf_source *src = calloc (1, sizeof *src);
  if (src == NULL)
    return -ENOMEM;
  src->in = in;
  src->err = err;
  src->attr_by_id = st_hashmap_new (NULL);
  if (src->attr_by_id == NULL)
    {
      free (src);
      return -ENOMEM;
    }

  struct perf_file_header fh;
  memset (&fh, 0, sizeof fh);
  ssize_t n = st_input_read (in, &fh, sizeof (struct perf_pipe_file_header));
  int r = 0;
  if (n < 0)
    r = n;
  else if (n < (ssize_t) sizeof (struct perf_pipe_file_header))
    r = st_source_bad_input (err, 0, "too short for a perf.data header (%zd bytes)", n);
  else if (fh.magic == PERF_MAGIC2_SWAPPED)
    r = st_source_unsupported (err, 0, "perf.data of the other byte order: "
                               "convert it on a machine of that byte order");
  else if (fh.magic != PERF_MAGIC2)
    r = st_source_bad_input (err, 0, "not a perf.data file (bad magic)");
  if (r < 0)
    goto fail;

  if (fh.size == sizeof (struct perf_pipe_file_header))
    {
      src->pipe_mode = true;
      src->data_end = UINT64_MAX;
      *out = src;
      return 0;
    }
  if (fh.size != sizeof fh)
    {
      r = st_source_bad_input (err, 8, "header size %" PRIu64 " is neither a file (%zu) "
                               "nor a pipe (%zu) header", fh.size, sizeof fh,
                               sizeof (struct perf_pipe_file_header));
      goto fail;
    }
  n = st_input_read (in, (uint8_t *) &fh + 16, sizeof fh - 16);
  if (n < 0)
    {
      r = n;
      goto fail;
    }
  if (n < (ssize_t) (sizeof fh - 16))
    {
      r = st_source_bad_input (err, 16 + n, "truncated perf.data header");
      goto fail;
    }
  if (!st_input_seekable (in))
    {
      r = st_source_unsupported (err, 0, "a perf.data in file mode must be read from a "
                                 "regular file: use `perf record -o -` for pipes");
      goto fail;
    }
  uint64_t size = st_input_size (in);
  if (fh.data.offset < sizeof fh || fh.data.offset > size)
    {
      r = st_source_bad_input (err, offsetof (struct perf_file_header, data),
                               "data section offset %" PRIu64 " lies outside the %" PRIu64
                               "-byte file", fh.data.offset, size);
      goto fail;
    }
  if (fh.data.size > UINT64_MAX - fh.data.offset)
    {
      r = st_source_bad_input (err, offsetof (struct perf_file_header, data.size),
                               "data section size %" PRIu64 " at offset %" PRIu64
                               " runs past 2^64", fh.data.size, fh.data.offset);
      goto fail;
    }
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
    {
      r = st_source_bad_input (err, offsetof (struct perf_file_header, attrs),
                               "attrs section lies outside the file");
      goto fail;
    }
  r = read_file_attrs (src, &fh);
  if (r < 0)
    goto fail;
  if (fh.data.size != 0)
    {
      r = read_file_features (src, &fh);
      if (r < 0)
        goto fail;
    }
  r = st_input_seek (in, fh.data.offset);
  if (r < 0)
    goto fail;
  *out = src;
  return 0;

fail:
  st_perf_source_free (src);
  return r;
}

/* The generic face of this source (see source.h).  */
static int
perf_open (struct st_input *in, void **state, struct st_source_error *err)
{
  return st_perf_source_open (in, (struct st_perf_source **) state, err);
}

static int
perf_run (void *state, st_event_fn fn, void *arg, volatile sig_atomic_t *stop,
          struct st_source_error *err)
{
  return st_perf_source_run (state, fn, arg, stop, err);
}

static const char *
perf_arch (const void *state)
{
  return st_perf_source_arch (state);
}

static void
perf_report (const void *state)
{
  uint64_t skipped = st_perf_source_skipped_records (state);
  if (skipped > 0)
    st_info ("%" PRIu64 " records of kinds not needed for unwinding were skipped", skipped);
}

static void
perf_free (void *state)
{
  st_perf_source_free (state);
}

const struct st_source_ops st_source_perf = {
  .name = "perf.data",
  .probe = st_perf_source_probe,
  .open = perf_open,
  .run = perf_run,
  .arch = perf_arch,
  .report = perf_report,
  .free = perf_free,
};

/* Live mode: the records come from perf_event_open ring buffers, fed one
   by one by the live source, instead of from an input.  */
int
st_perf_source_new_live (const struct perf_event_attr *attr, st_event_fn fn, void *arg,
                         struct st_source_error *err, struct st_perf_source **out)
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
    r = add_attr (src, (const uint8_t *) attr, sizeof *attr, NULL, 0, 0);
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
