/* perf records decoded into st_events: pure functions of the record's
 * bytes and the attributes, no I/O.  Every field is bounds-checked against
 * its record; records need not be aligned (fields are read with memcpy).  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "basic/bytes.h"
#include "core/input/perf-reader.h"

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

/* Where the sample id that picks a record's attribute sits in it: a
   byte offset, or 0 when there is none (one attribute, or a record that
   does not say).  As in perf's evlist__event2evsel(), the first
   attribute's layout tells where to look.  */
size_t
st_perf_record_id_offset (const struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  if (src->n_attrs <= 1)
    return 0;
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
  const struct attr_info *first = &src->attrs[0];
  if (h->type == PERF_RECORD_SAMPLE)
    {
      int pos = sample_id_position (first->sample_type);
      if (pos < 0 || 8 + 8 * (uint32_t) (pos + 1) > size)
        return 0;
      return 8 + 8 * (size_t) pos;
    }
  /* Without an IDENTIFIER at the end, perf itself cannot tell.  */
  if (!first->sample_id_all || !(first->sample_type & PERF_SAMPLE_IDENTIFIER) || size < 16)
    return 0;
  return size - 8;
}

/* The attribute that describes a record.  With several events the record's
   sample id picks it.  */
const struct attr_info *
st_perf_attr_for_record (const struct st_perf_source *src, const uint8_t *rec, uint32_t size)
{
  if (src->n_attrs == 0)
    return NULL;
  size_t at = st_perf_record_id_offset (src, rec, size);
  if (at == 0)
    return &src->attrs[0];
  uintptr_t idx = (uintptr_t) st_hashmap_get_u64 (src->attr_by_id, st_get_u64 (rec + at));
  return idx ? &src->attrs[idx - 1] : &src->attrs[0];
}

static size_t
popcount64 (uint64_t v)
{
  return (size_t) __builtin_popcountll (v);
}

/* The sample_id_all trailer of a non-sample record.  */
size_t
st_perf_id_trailer_size (const struct attr_info *a)
{
  if (!a->sample_id_all)
    return 0;
  uint64_t t = a->sample_type;
  return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID)
              + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU)
              + !!(t & PERF_SAMPLE_IDENTIFIER));
}

bool
st_perf_record_time (const struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                     uint64_t *time)
{
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
  if (h->type >= PERF_RECORD_USER_TYPE_START)
    return false;
  const struct attr_info *a = st_perf_attr_for_record (src, rec, size);
  if (a == NULL || !(a->sample_type & PERF_SAMPLE_TIME))
    return false;
  uint64_t t = a->sample_type;
  size_t pos;
  if (h->type == PERF_RECORD_SAMPLE)
    pos = 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP)
                   + !!(t & PERF_SAMPLE_TID));
  else
    {
      size_t trailer = st_perf_id_trailer_size (a);
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
/* The fields MMAP and MMAP2 records share: pid, tid, start, len, pgoff
   (32 bytes at P, checked by the caller).  */
static void
mmap_head (const uint8_t *p, struct st_mmap_event *m)
{
  m->pid = (int32_t) st_get_u32 (p);
  m->tid = (int32_t) st_get_u32 (p + 4);
  m->start = st_get_u64 (p + 8);
  m->len = st_get_u64 (p + 16);
  m->pgoff = st_get_u64 (p + 24);
}

struct cursor {
  const uint8_t *p, *end;
  const uint8_t *start;
  uint64_t offset;   /* input offset of start */
};

#define NEED(c, n, what)                                                      \
  do                                                                          \
    {                                                                         \
      if ((uint64_t) ((c)->end - (c)->p) < (uint64_t) (n))                    \
        return st_why_at (src->err, EBADMSG, (c)->offset + ((c)->p - (c)->start), \
                          "%s runs past the end of its %zu-byte record",      \
                          what, (size_t) ((c)->end - (c)->start));            \
    }                                                                         \
  while (0)
/* The u64 at the cursor into V, and the cursor past it.  */
#define TAKE_U64(c, v, what) \
  do { NEED (c, 8, what); (v) = st_get_u64 ((c)->p); (c)->p += 8; } while (0)
/* NR entries of SIZE bytes at the cursor (NR * SIZE may overflow).  */
#define NEED_ENTRIES(c, nr, size, what) \
  do { if ((nr) > (uint64_t) ((c)->end - (c)->p) / (size)) NEED (c, UINT64_MAX, what); } while (0)

/* perf record --call-graph lbr: the hardware's call stack, {from, to,
   flags} entries, the newest call first.  Shown as perf script shows it
   (machine.c, lbr_callchain_add_lbr_ip): the callee of the newest call,
   then each call site, outward.  It stands for the user part of the
   kernel's chain, as in perf.  */
static int
lbr_chain (struct st_perf_source *src, const uint8_t *entries, uint64_t nr, struct st_sample *s)
{
  if (nr + 1 > src->lbr_cap)
    {
      uint64_t *ips = realloc (src->lbr_ips, (nr + 1) * sizeof *ips);
      if (ips == NULL)
        return -ENOMEM;
      src->lbr_ips = ips;
      src->lbr_cap = nr + 1;
    }
  src->lbr_ips[0] = st_get_u64 (entries + 8);
  for (uint64_t i = 0; i < nr; i++)
    src->lbr_ips[i + 1] = st_get_u64 (entries + 24 * i);
  s->user_ips = src->lbr_ips;
  s->n_user_ips = nr + 1;
  s->user_chain_lbr = true;
  return 0;
}

static int
parse_sample (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
              uint64_t offset, struct st_event *ev)
{
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
  const struct attr_info *a = st_perf_attr_for_record (src, rec, size);
  if (a == NULL)
    return st_why_at (src->err, EBADMSG, offset, "sample record before any event attribute");
  uint64_t t = a->sample_type;
  struct cursor c = { rec + 8, rec + size, rec, offset };
  struct cursor *cp = &c;
  struct st_sample *s = &ev->sample;
  memset (s, 0, sizeof *s);
  ev->kind = ST_EVENT_SAMPLE;
  s->input_offset = offset;
  s->input_file = st_perf_dir_file_name (src, src->record_file);
  s->pid = s->tid = -1;
  s->user_mode = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;

  if (t & PERF_SAMPLE_IDENTIFIER)
    { NEED (cp, 8, "sample identifier"); c.p += 8; }
  if (t & PERF_SAMPLE_IP)
    TAKE_U64 (cp, s->ip, "sample ip");
  if (t & PERF_SAMPLE_TID)
    {
      NEED (cp, 8, "sample pid/tid");
      s->pid = (int32_t) st_get_u32 (c.p);
      s->tid = (int32_t) st_get_u32 (c.p + 4);
      c.p += 8;
    }
  if (t & PERF_SAMPLE_TIME)
    TAKE_U64 (cp, s->time, "sample time");
  if (t & PERF_SAMPLE_ADDR)
    { NEED (cp, 8, "sample addr"); c.p += 8; }
  if (t & PERF_SAMPLE_ID)
    { NEED (cp, 8, "sample id"); c.p += 8; }
  if (t & PERF_SAMPLE_STREAM_ID)
    { NEED (cp, 8, "sample stream id"); c.p += 8; }
  if (t & PERF_SAMPLE_CPU)
    { NEED (cp, 8, "sample cpu"); s->cpu = st_get_u32 (c.p); c.p += 8; }
  if (t & PERF_SAMPLE_PERIOD)
    TAKE_U64 (cp, s->period, "sample period");
  if (t & PERF_SAMPLE_READ)
    {
      uint64_t rf = a->read_format;
      uint64_t per_value = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
      uint64_t times = 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
                            + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING));
      if (rf & PERF_FORMAT_GROUP)
        {
          uint64_t nr;
          TAKE_U64 (cp, nr, "sample read group");
          NEED (cp, times, "sample read times");
          c.p += times;
          NEED_ENTRIES (cp, nr, per_value, "sample read values");
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
      uint64_t nr;
      TAKE_U64 (cp, nr, "callchain length");
      NEED_ENTRIES (cp, nr, 8, "callchain");
      const uint64_t *ips = (const uint64_t *) c.p;
      /* Kernel frames sit between PERF_CONTEXT_KERNEL and the next marker,
         the user chain the kernel walked (frame pointers) after
         PERF_CONTEXT_USER.  */
      int part = 0;   /* 1: kernel, 2: user */
      for (uint64_t i = 0; i < nr; i++)
        {
          uint64_t ip = st_get_u64 (c.p + 8 * i);
          if (ip >= PERF_CONTEXT_MAX_MARK)
            {
              part = ip == PERF_CONTEXT_KERNEL_MARK ? 1 : ip == PERF_CONTEXT_USER_MARK ? 2 : 0;
              if (part == 1 && s->kernel_ips == NULL)
                s->kernel_ips = ips + i + 1;
              else if (part == 2 && s->user_ips == NULL)
                s->user_ips = ips + i + 1;
              else
                part = 0;   /* a second chain of either kind: not ours */
              continue;
            }
          if (part == 1)
            s->n_kernel_ips++;
          else if (part == 2)
            s->n_user_ips++;
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
      uint64_t nr;
      TAKE_U64 (cp, nr, "branch stack length");
      if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
        {
          NEED (cp, 8, "branch stack hw index");
          c.p += 8;
        }
      NEED_ENTRIES (cp, nr, 24, "branch stack");
      if ((a->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) && nr > 0)
        {
          int r = lbr_chain (src, c.p, nr, s);
          if (r < 0)
            return r;
        }
      c.p += nr * 24;
    }
  if (t & PERF_SAMPLE_REGS_USER)
    {
      uint64_t abi;
      TAKE_U64 (cp, abi, "user register abi");
      if (abi != 0)
        {
          if (abi != ST_REGS_ABI_32 && abi != ST_REGS_ABI_64)
            return st_why_at (src->err, EBADMSG, offset + (c.p - 8 - rec),
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
      uint64_t stack_size;
      TAKE_U64 (cp, stack_size, "user stack size");
      if (stack_size != 0)
        {
          NEED (cp, stack_size, "user stack");
          const uint8_t *stack = c.p;
          c.p += stack_size;
          uint64_t dyn;
          TAKE_U64 (cp, dyn, "user stack dyn_size");
          if (dyn > stack_size)
            return st_why_at (src->err, EBADMSG, offset + (c.p - 8 - rec),
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
    return st_why_at (src->err, EBADMSG, c->offset + (c->p - c->start),
                      "%s is not terminated inside its record", what);
  *out = (const char *) c->p;
  return 0;
}

int
st_perf_parse_build_id_entry (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                              uint64_t offset, struct st_event *ev)
{
  struct cursor c = { rec, rec + size, rec, offset };
  struct cursor *cp = &c;
  NEED (cp, sizeof (struct perf_build_id_entry), "build-id entry");
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
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

int
st_perf_parse_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                      uint64_t offset, struct st_event *ev)
{
  const struct perf_event_header hdr = st_perf_record_header (rec), *h = &hdr;
  struct cursor c = { rec + 8, rec + size, rec, offset };
  struct cursor *cp = &c;

  memset (ev, 0, sizeof *ev);
  st_perf_record_time (src, rec, size, &ev->time);

  /* Non-sample records carry the sample_id_all trailer: leave it out of
     the body.  */
  if (h->type != PERF_RECORD_SAMPLE)
    {
      const struct attr_info *a = st_perf_attr_for_record (src, rec, size);
      size_t trailer = a ? st_perf_id_trailer_size (a) : 0;
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
        mmap_head (c.p, m);
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
        mmap_head (c.p, m);
        if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && src->mmap_build_ids)
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
