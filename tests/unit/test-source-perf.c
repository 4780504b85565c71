/* The perf.data reader on streams built byte by byte: every field lands
 * where the format puts it, records come out in time order, and malformed
 * input is reported at the right byte offset with the earlier events kept.  */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/input/input.h"
#include "unit/test-bytes.h"
#include "core/input/perf-format.h"
#include "core/input/source-perf.h"

static void
put_u64 (struct buf *b, uint64_t v)
{
  put (b, &v, 8);
}

static void
put_u32 (struct buf *b, uint32_t v)
{
  put (b, &v, 4);
}

static size_t
begin_record (struct buf *b, uint32_t type, uint16_t misc)
{
  size_t at = b->len;
  struct perf_event_header h = { type, misc, 0 };
  put (b, &h, sizeof h);
  return at;
}

static void
end_record (struct buf *b, size_t at)
{
  while ((b->len - at) % 8)
    b->data[b->len++] = 0;
  uint16_t size = b->len - at;
  memcpy (b->data + at + 6, &size, 2);
}

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU \
                     | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define REGS_MASK 0xff0fffULL

static void
put_header_and_attr (struct buf *b)
{
  put_u64 (b, PERF_MAGIC2);
  put_u64 (b, 16);
  size_t at = begin_record (b, PERF_RECORD_HEADER_ATTR, 0);
  struct perf_event_attr attr = { 0 };
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_type = SAMPLE_TYPE;
  attr.sample_regs_user = REGS_MASK;
  attr.sample_stack_user = 64;
  attr.sample_id_all = 1;
  put (b, &attr, sizeof attr);
  put_u64 (b, 1234);   /* the event's id */
  end_record (b, at);
}

/* The sample_id_all trailer: TID, TIME, CPU (in sample_type order).  */
static void
put_trailer (struct buf *b, uint32_t pid, uint32_t tid, uint64_t time)
{
  put_u32 (b, pid);
  put_u32 (b, tid);
  put_u64 (b, time);
  put_u32 (b, 1);
  put_u32 (b, 0);
}

static size_t
put_comm (struct buf *b, uint32_t pid, const char *comm, uint64_t time, bool exec)
{
  size_t at = begin_record (b, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
  put_u32 (b, pid);
  put_u32 (b, pid);
  char name[16] = { 0 };
  strncpy (name, comm, 15);
  put (b, name, 16);
  put_trailer (b, pid, pid, time);
  end_record (b, at);
  return at;
}

static size_t
put_mmap2 (struct buf *b, uint32_t pid, uint64_t start, const char *file, uint64_t time)
{
  size_t at = begin_record (b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  put_u32 (b, pid);
  put_u32 (b, pid);
  put_u64 (b, start);
  put_u64 (b, 0x2000);
  put_u64 (b, 0x1000);
  put_u32 (b, 8);   /* maj */
  put_u32 (b, 1);   /* min */
  put_u64 (b, 4242);
  put_u64 (b, 0);
  put_u32 (b, 5);   /* PROT_READ | PROT_EXEC */
  put_u32 (b, 2);
  char name[32] = { 0 };
  strncpy (name, file, 31);
  put (b, name, strlen (name) + 1);
  end_record (b, at);
  /* The trailer comes after the padded name: rewrite size afterwards.  */
  b->len = at + ((b->len - at + 7) & ~7ul);
  put_trailer (b, pid, pid, time);
  uint16_t size = b->len - at;
  memcpy (b->data + at + 6, &size, 2);
  return at;
}

static size_t
put_sample (struct buf *b, uint32_t pid, uint32_t tid, uint64_t time, uint64_t stack_size,
            uint64_t dyn_size)
{
  size_t at = begin_record (b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  put_u64 (b, 0x401000 + time);   /* ip */
  put_u32 (b, pid);
  put_u32 (b, tid);
  put_u64 (b, time);
  put_u32 (b, 1);                  /* cpu */
  put_u32 (b, 0);
  put_u64 (b, 1000000);            /* period */
  put_u64 (b, 2);                  /* abi 64 */
  for (int i = 0; i < __builtin_popcountll (REGS_MASK); i++)
    put_u64 (b, 0x100 + i);
  put_u64 (b, stack_size);
  for (uint64_t i = 0; i < stack_size; i++)
    b->data[b->len++] = (uint8_t) i;
  if (stack_size)
    put_u64 (b, dyn_size);
  end_record (b, at);
  return at;
}

static size_t
put_round (struct buf *b)
{
  size_t at = begin_record (b, PERF_RECORD_FINISHED_ROUND, 0);
  end_record (b, at);
  return at;
}

struct seen {
  struct st_event ev[32];
  char strings[32][64];
  uint64_t stack_first_byte[32];
  size_t n;
};

static int
collect (const struct st_event *ev, void *arg)
{
  struct seen *s = arg;
  assert_true (s->n < 32);
  s->ev[s->n] = *ev;
  if (ev->kind == ST_EVENT_COMM)
    snprintf (s->strings[s->n], 64, "%s", ev->comm.comm);
  if (ev->kind == ST_EVENT_MMAP)
    snprintf (s->strings[s->n], 64, "%s", ev->mmap.filename);
  if (ev->kind == ST_EVENT_SAMPLE && ev->sample.stack_size > 1)
    s->stack_first_byte[s->n] = ev->sample.stack[1];
  s->n++;
  return 0;
}

/* Runs the reader over B; returns its result, events in SEEN.  */
static int
run (const struct buf *b, struct seen *seen, struct st_why *err)
{
  struct st_input *in = input_of (b);
  struct st_perf_source *src;
  int r = st_perf_source_open (in, &src, err);
  if (r == 0)
    {
      assert_true (st_perf_source_is_pipe (src));
      r = st_perf_source_run (src, collect, seen, NULL, err);
      st_perf_source_free (src);
    }
  st_input_free (in);
  return r;
}

static void
test_fields_land_where_the_format_puts_them (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  put_comm (&b, 77, "worker", 100, true);
  put_mmap2 (&b, 77, 0x400000, "/usr/bin/worker", 110);
  put_sample (&b, 77, 78, 120, 64, 48);
  put_round (&b);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.n, 3);

  assert_int_equal (s.ev[0].kind, ST_EVENT_COMM);
  assert_true (s.ev[0].comm.exec);
  assert_string_equal (s.strings[0], "worker");
  assert_int_equal (s.ev[0].time, 100);

  assert_int_equal (s.ev[1].kind, ST_EVENT_MMAP);
  const struct st_mmap_event *m = &s.ev[1].mmap;
  assert_int_equal (m->start, 0x400000);
  assert_int_equal (m->len, 0x2000);
  assert_int_equal (m->pgoff, 0x1000);
  assert_true (m->has_dev_ino);
  assert_int_equal (m->ino, 4242);
  assert_int_equal (m->prot, 5);
  assert_string_equal (s.strings[1], "/usr/bin/worker");

  assert_int_equal (s.ev[2].kind, ST_EVENT_SAMPLE);
  const struct st_sample *smp = &s.ev[2].sample;
  assert_int_equal (smp->pid, 77);
  assert_int_equal (smp->tid, 78);
  assert_int_equal (smp->time, 120);
  assert_int_equal (smp->cpu, 1);
  assert_int_equal (smp->period, 1000000);
  assert_int_equal (smp->abi, ST_REGS_ABI_64);
  assert_int_equal (smp->regs_mask, REGS_MASK);
  assert_int_equal (smp->n_regs, 20);
  assert_int_equal (smp->stack_size, 48);   /* dyn_size, not the copy's size */
  assert_int_equal (s.stack_first_byte[2], 1);
  assert_true (smp->user_mode);
}

static void
test_records_come_out_in_time_order (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  /* Two CPUs' buffers drained one after the other: 300 before 200.  */
  put_sample (&b, 5, 5, 300, 0, 0);
  put_sample (&b, 5, 5, 100, 0, 0);
  put_round (&b);
  put_sample (&b, 5, 5, 200, 0, 0);
  put_sample (&b, 5, 5, 400, 0, 0);
  put_round (&b);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.n, 4);
  assert_int_equal (s.ev[0].time, 100);
  assert_int_equal (s.ev[1].time, 200);
  assert_int_equal (s.ev[2].time, 300);
  assert_int_equal (s.ev[3].time, 400);
}

static void
test_truncated_record_names_its_offset_and_keeps_earlier_events (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  put_sample (&b, 5, 5, 100, 0, 0);
  put_sample (&b, 5, 5, 200, 0, 0);
  size_t bad = put_sample (&b, 5, 5, 300, 64, 64);
  b.len -= 20;   /* cut inside the last record */
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_int_equal (err.offset, bad);
  assert_non_null (strstr (err.text, "truncated"));
  assert_int_equal (s.n, 2);
}

static void
test_record_of_size_zero (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  put_sample (&b, 5, 5, 100, 0, 0);
  size_t bad = begin_record (&b, PERF_RECORD_SAMPLE, 0);   /* size stays 0 */
  put_u64 (&b, 0);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_int_equal (err.offset, bad);
  assert_int_equal (s.n, 1);
}

static void
test_stack_larger_than_its_record (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  size_t at = put_sample (&b, 5, 5, 100, 64, 64);
  /* Claim a stack of 4096 bytes in a record that holds 64.  */
  size_t stack_size_field = at + 8 * 7 + 8 * 20;  /* header ip tid time cpu period abi regs */
  uint64_t big = 4096;
  memcpy (b.data + stack_size_field, &big, 8);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_true (err.offset >= at && err.offset < b.len);
  assert_non_null (strstr (err.text, "user stack"));
  assert_int_equal (s.n, 0);
}

static void
test_dyn_size_larger_than_the_copy (void **state)
{
  static struct buf b;
  b.len = 0;
  put_header_and_attr (&b);
  size_t at = put_sample (&b, 5, 5, 100, 64, 65);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_true (err.offset > at && err.offset < b.len);
  assert_non_null (strstr (err.text, "dyn_size"));
}

static void
test_bad_magic (void **state)
{
  static struct buf b;
  b.len = 0;
  put_u64 (&b, 0x1122334455667788ULL);
  put_u64 (&b, 16);
  static struct seen s;
  s.n = 0;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_int_equal (err.offset, 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fields_land_where_the_format_puts_them),
    cmocka_unit_test (test_records_come_out_in_time_order),
    cmocka_unit_test (test_truncated_record_names_its_offset_and_keeps_earlier_events),
    cmocka_unit_test (test_record_of_size_zero),
    cmocka_unit_test (test_stack_larger_than_its_record),
    cmocka_unit_test (test_dyn_size_larger_than_the_copy),
    cmocka_unit_test (test_bad_magic),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
