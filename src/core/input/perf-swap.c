/* perf.data of the other byte order (perf on s390x or big-endian ppc64
 * writes its files in its own order; perf's util/header.c reads them with
 * needs_swap).  Each piece is turned into this machine's order in place,
 * field by field, before the ordinary reader sees it: the file header, the
 * attributes, the feature sections and every record.  Byte arrays stay as
 * they are: file names, build-ids, raw data and, above all, the user stack
 * copy, which is the recording machine's memory (dwfl-unwind.c reads its
 * words in that machine's order).  A field that would run past its record
 * is left alone: the decoder that follows finds the same fault and names
 * it.  */
#include "config.h"

#include <byteswap.h>
#include <stddef.h>
#include <string.h>

#include "core/input/perf-reader.h"

/* The field of WIDTH bytes (2, 4 or 8) at P, into the other byte order.  */
static void
swap_field (uint8_t *p, unsigned width)
{
  for (unsigned i = 0; i < width / 2; i++)
    {
      uint8_t b = p[i];
      p[i] = p[width - 1 - i];
      p[width - 1 - i] = b;
    }
}

static uint64_t
get64 (const uint8_t *p)
{
  uint64_t v;
  memcpy (&v, p, sizeof v);
  return v;
}

/* A cursor that swaps fields while they fit in [p, end).  */
struct walk {
  uint8_t *p, *end;
  bool ok;
};

static bool
fits (struct walk *w, uint64_t n)
{
  if (!w->ok || (uint64_t) (w->end - w->p) < n)
    w->ok = false;
  return w->ok;
}

/* N fields of WIDTH bytes (4 or 8) at the cursor.  */
static void
words (struct walk *w, unsigned width, uint64_t n)
{
  if (n > (uint64_t) (w->end - w->p) / width || !fits (w, width * n))
    {
      w->ok = false;
      return;
    }
  for (uint64_t i = 0; i < n; i++, w->p += width)
    swap_field (w->p, width);
}

static void
u64s (struct walk *w, uint64_t n)
{
  words (w, 8, n);
}

static void
u32s (struct walk *w, unsigned n)
{
  words (w, 4, n);
}

static void
skip (struct walk *w, uint64_t n)
{
  if (fits (w, n))
    w->p += n;
}

/* The file header: every field is a u64.  The feature bitmap was written
   as unsigned longs of the recording machine: perf's rule is to try them
   as u64, then as u32, and to believe whichever shows HEADER_HOSTNAME,
   which every perf since 2012 writes.  */
void
st_perf_swap_file_header (struct perf_file_header *fh)
{
  uint8_t *p = (uint8_t *) fh;
  for (size_t off = 0; off < offsetof (struct perf_file_header, features); off += 8)
    swap_field (p + off, 8);
  uint8_t *bits = (uint8_t *) fh->features;
  uint8_t raw[sizeof fh->features];
  memcpy (raw, bits, sizeof raw);
  for (size_t off = 0; off < sizeof raw; off += 8)
    swap_field (bits + off, 8);
  const unsigned hostname = 3;   /* HEADER_HOSTNAME */
  if (fh->features[0] & (1ULL << hostname))
    return;
  uint8_t as32[sizeof raw];
  memcpy (as32, raw, sizeof raw);
  for (size_t off = 0; off < sizeof as32; off += 4)
    swap_field (as32 + off, 4);
  uint64_t first;
  memcpy (&first, as32, sizeof first);
  if (first & (1ULL << hostname))
    memcpy (bits, as32, sizeof as32);
  /* Neither: a file older than perf 3.3 or made by hand; the u64 reading
     stands (perf would keep only the build-id bit).  */
}

/* The flags word of perf_event_attr is a bitfield: a big-endian compiler
   fills each byte from its top bit, so each byte's bits are reversed (as
   perf's swap_bitfield does).  */
static uint8_t
reverse_bits (uint8_t b)
{
  b = (uint8_t) ((b & 0xf0) >> 4 | (b & 0x0f) << 4);
  b = (uint8_t) ((b & 0xcc) >> 2 | (b & 0x33) << 2);
  return (uint8_t) ((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

void
st_perf_swap_attr (uint8_t *attr, size_t len)
{
  /* perf_event_attr, by offset: the u32, u16 and u64 fields up to
     PERF_ATTR_SIZE_VER8, as far as LEN goes.  */
  static const struct { uint8_t off, width; } fields[] = {
    { 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 32, 8 },
    { 48, 4 }, { 52, 4 }, { 56, 8 }, { 64, 8 }, { 72, 8 }, { 80, 8 },
    { 88, 4 }, { 92, 4 }, { 96, 8 }, { 104, 4 }, { 108, 2 }, { 110, 2 },
    { 112, 4 }, { 116, 4 }, { 120, 8 }, { 128, 8 },
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    {
      if ((size_t) fields[i].off + fields[i].width > len)
        break;
      swap_field (attr + fields[i].off, fields[i].width);
    }
  if (len >= 48)
    for (size_t i = 40; i < 48; i++)
      attr[i] = reverse_bits (attr[i]);
}

static void
swap_event_header (uint8_t *rec)
{
  swap_field (rec, 4);
  swap_field (rec + 4, 2);
  swap_field (rec + 6, 2);
}

void
st_perf_swap_feature (unsigned feature, uint8_t *data, size_t len)
{
  struct walk w = { data, data + len, true };
  switch (feature)
    {
    case PERF_HEADER_ARCH:
    case PERF_HEADER_CPUDESC:
      u32s (&w, 1);   /* a perf string: u32 length, then the characters */
      break;
    case PERF_HEADER_CLOCK_DATA:
      u32s (&w, 2);
      u64s (&w, 2);
      break;
    case PERF_HEADER_SAMPLE_TIME:
      u64s (&w, 2);
      break;
    case PERF_HEADER_DIR_FORMAT:
      u64s (&w, 1);   /* the version */
      break;
    case PERF_HEADER_BUILD_ID:
      /* Entries of their own size: header, pid, then bytes.  */
      for (size_t pos = 0; pos + sizeof (struct perf_build_id_entry) <= len;)
        {
          swap_event_header (data + pos);
          swap_field (data + pos + 8, 4);
          uint16_t size;
          memcpy (&size, data + pos + 6, sizeof size);
          if (size < sizeof (struct perf_event_header))
            break;
          pos += size;
        }
      break;
    default:
      break;   /* not read by this tool */
    }
}

/* Fixed-size fields of a sample or of its sample_id_all trailer: present
   with their sample_type bit, COUNT fields of WIDTH bytes.  */
struct id_field {
  uint64_t bit;
  uint8_t width, count;
};

/* The trailer: TID (two u32), TIME, ID, STREAM_ID, CPU (two u32),
   IDENTIFIER.  */
static const struct id_field trailer_fields[] = {
  { PERF_SAMPLE_TID, 4, 2 }, { PERF_SAMPLE_TIME, 8, 1 }, { PERF_SAMPLE_ID, 8, 1 },
  { PERF_SAMPLE_STREAM_ID, 8, 1 }, { PERF_SAMPLE_CPU, 4, 2 }, { PERF_SAMPLE_IDENTIFIER, 8, 1 },
};

/* A sample's fields before READ, in perf's order.  */
static const struct id_field sample_head_fields[] = {
  { PERF_SAMPLE_IDENTIFIER, 8, 1 }, { PERF_SAMPLE_IP, 8, 1 }, { PERF_SAMPLE_TID, 4, 2 },
  { PERF_SAMPLE_TIME, 8, 1 }, { PERF_SAMPLE_ADDR, 8, 1 }, { PERF_SAMPLE_ID, 8, 1 },
  { PERF_SAMPLE_STREAM_ID, 8, 1 }, { PERF_SAMPLE_CPU, 4, 2 }, { PERF_SAMPLE_PERIOD, 8, 1 },
};

static void
id_fields (struct walk *w, uint64_t sample_type, const struct id_field *fields, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (sample_type & fields[i].bit)
      words (w, fields[i].width, fields[i].count);
}

/* A sample, field by field in perf's order (perf-record.c's parse_sample
   reads the same fields); the fields after STACK_USER are not read.  */
static void
swap_sample (const struct attr_info *a, uint8_t *rec, uint32_t size)
{
  uint64_t t = a->sample_type;
  struct walk w = { rec + 8, rec + size, true };
  id_fields (&w, t, sample_head_fields, sizeof sample_head_fields / sizeof *sample_head_fields);
  if (t & PERF_SAMPLE_READ)
    {
      uint64_t rf = a->read_format;
      uint64_t per_value = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
      uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
                       + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
      if (rf & PERF_FORMAT_GROUP)
        {
          u64s (&w, 1);
          uint64_t nr = w.ok ? get64 (w.p - 8) : 0;
          u64s (&w, times);
          if (nr > (uint64_t) (w.end - w.p) / 8 / per_value)
            return;
          u64s (&w, nr * per_value);
        }
      else
        u64s (&w, per_value + times);
    }
  if (t & PERF_SAMPLE_CALLCHAIN)
    {
      u64s (&w, 1);
      if (w.ok)
        u64s (&w, get64 (w.p - 8));
    }
  if (t & PERF_SAMPLE_RAW)
    {
      /* u32 size, then bytes perf hands to the tracepoint's own parser.  */
      u32s (&w, 1);
      uint32_t raw;
      if (w.ok)
        {
          memcpy (&raw, w.p - 4, sizeof raw);
          skip (&w, raw);
        }
    }
  if (t & PERF_SAMPLE_BRANCH_STACK)
    {
      /* nr, the hardware index, then {from, to, flags} entries.  The
         flags are a bitfield nobody here reads.  */
      u64s (&w, 1);
      uint64_t nr = w.ok ? get64 (w.p - 8) : 0;
      if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
        u64s (&w, 1);
      if (nr > (uint64_t) (w.end - w.p) / 24)
        return;
      u64s (&w, 3 * nr);
    }
  if (t & PERF_SAMPLE_REGS_USER)
    {
      u64s (&w, 1);
      if (w.ok && get64 (w.p - 8) != 0)
        u64s (&w, (uint64_t) __builtin_popcountll (a->sample_regs_user));
    }
  if (t & PERF_SAMPLE_STACK_USER)
    {
      u64s (&w, 1);
      uint64_t n = w.ok ? get64 (w.p - 8) : 0;
      if (n != 0)
        {
          skip (&w, n);   /* the recording machine's memory, as it was */
          u64s (&w, 1);
        }
    }
}

/* The fixed fields that follow a record's header, as runs of fields of
   one width (a zero width ends them).  The variable parts of MMAP2,
   HEADER_ATTR and HEADER_FEATURE are swapped by their own code.  */
static const struct record_layout {
  uint32_t type;
  struct { uint8_t width, count; } runs[2];
} record_layouts[] = {
  { PERF_RECORD_MMAP, { { 4, 2 }, { 8, 3 } } },    /* pid, tid; start, len, pgoff */
  { PERF_RECORD_MMAP2, { { 4, 2 }, { 8, 3 } } },
  { PERF_RECORD_COMM, { { 4, 2 } } },              /* pid, tid */
  { PERF_RECORD_FORK, { { 4, 4 }, { 8, 1 } } },    /* pid, ppid, tid, ptid; time */
  { PERF_RECORD_EXIT, { { 4, 4 }, { 8, 1 } } },
  { PERF_RECORD_LOST, { { 8, 2 } } },              /* id, lost */
  { PERF_RECORD_LOST_SAMPLES, { { 8, 1 } } },
  { PERF_RECORD_HEADER_BUILD_ID, { { 4, 1 } } },   /* pid */
  { PERF_RECORD_HEADER_TRACING_DATA, { { 4, 1 } } },  /* size */
  /* size, offset, reference; idx, tid, cpu, reserved */
  { PERF_RECORD_AUXTRACE, { { 8, 3 }, { 4, 4 } } },
  { PERF_RECORD_HEADER_FEATURE, { { 8, 1 } } },    /* feat_id */
};

static void
fixed_fields (struct walk *w, uint32_t type)
{
  for (size_t i = 0; i < sizeof record_layouts / sizeof *record_layouts; i++)
    if (record_layouts[i].type == type)
      for (size_t j = 0; j < 2 && record_layouts[i].runs[j].width != 0; j++)
        words (w, record_layouts[i].runs[j].width, record_layouts[i].runs[j].count);
}

/* Where the record's sample id sits, swapped into this machine's order
   for the attribute lookup and back again, so that the walk below swaps
   every field exactly once.  */
static const struct attr_info *
attr_of_swapped (const struct st_perf_source *src, uint8_t *rec, uint32_t size)
{
  size_t at = st_perf_record_id_offset (src, rec, size);
  if (at != 0)
    swap_field (rec + at, 8);
  const struct attr_info *a = st_perf_attr_for_record (src, rec, size);
  if (at != 0)
    swap_field (rec + at, 8);
  return a;
}

static void
swap_kernel_record (const struct st_perf_source *src, uint8_t *rec, uint32_t size,
                    uint32_t type, uint16_t misc)
{
  const struct attr_info *a = attr_of_swapped (src, rec, size);
  if (type == PERF_RECORD_SAMPLE)
    {
      if (a != NULL)
        swap_sample (a, rec, size);
      return;
    }
  uint8_t *end = rec + size;
  size_t trailer = a != NULL ? st_perf_id_trailer_size (a) : 0;
  if (trailer > size - 8)
    trailer = 0;
  if (trailer > 0)
    {
      end -= trailer;
      struct walk tw = { end, rec + size, true };
      id_fields (&tw, a->sample_type, trailer_fields,
                 sizeof trailer_fields / sizeof *trailer_fields);
    }
  struct walk w = { rec + 8, end, true };
  fixed_fields (&w, type);   /* other kinds: only their header and trailer are read */
  if (type == PERF_RECORD_MMAP2)
    {
      if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
        skip (&w, 24);   /* u8 size, 3 pad, build_id[20] */
      else
        {
          u32s (&w, 2);   /* maj, min */
          u64s (&w, 2);   /* ino, ino_generation */
        }
      u32s (&w, 2);     /* prot, flags */
    }
}

static void
swap_user_record (const struct st_perf_source *src, uint8_t *rec, uint32_t size,
                  uint32_t type)
{
  struct walk w = { rec + 8, rec + size, true };
  switch (type)
    {
    case PERF_RECORD_HEADER_ATTR:
      if (size >= 16)
        {
          uint32_t attr_size;
          memcpy (&attr_size, rec + 12, sizeof attr_size);
          attr_size = bswap_32 (attr_size);
          if (attr_size == 0)
            attr_size = PERF_ATTR_SIZE_VER0;
          if (attr_size > size - 8)
            return;
          st_perf_swap_attr (rec + 8, attr_size);
          skip (&w, attr_size);
          u64s (&w, (size - 8 - attr_size) / 8);
        }
      break;
    case PERF_RECORD_HEADER_FEATURE:
      fixed_fields (&w, type);
      if (w.ok)
        st_perf_swap_feature ((unsigned) get64 (rec + 8), rec + 16, size - 16);
      break;
    default:
      fixed_fields (&w, type);   /* none for FINISHED_ROUND, COMPRESSED (bytes) */
      break;
    }
  (void) src;
}

/* REC (SIZE bytes, a writable copy) into this machine's byte order.  */
void
st_perf_swap_record (const struct st_perf_source *src, uint8_t *rec, uint32_t size)
{
  if (size < sizeof (struct perf_event_header))
    return;
  swap_event_header (rec);
  const struct perf_event_header h = st_perf_record_header (rec);
  if (h.type >= PERF_RECORD_USER_TYPE_START)
    swap_user_record (src, rec, size, h.type);
  else
    swap_kernel_record (src, rec, size, h.type, h.misc);
}
