/* The Sysprof stream reader on streams built byte by byte: every frame comes
 * out, raw and (for the kinds the unwinder uses) decoded, in input order;
 * stack-user frames become samples with their registers in perf order;
 * processes without map frames are looked up in /proc, but only when /proc
 * still shows the sampled process; and a malformed stream is reported at
 * the right byte offset with the frames before it delivered.  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/input/input.h"
#include "unit/test-bytes.h"
#include "core/input/source-sysprof.h"
#include "core/input/sysprof-format.h"

static void
put_header (struct buf *b)
{
  struct st_sysprof_file_header h = {
    .magic = ST_SYSPROF_MAGIC,
    .flags = 1 | ST_SYSPROF_LITTLE_ENDIAN,
    .capture_time = "2026-11-29T12:00:00Z",
    .time = 1000,
  };
  b->len = 0;
  put (b, &h, sizeof h);
}

/* Starts a frame; end_frame() sets its length and pads it.  */
static size_t
begin_frame (struct buf *b, uint32_t type, int32_t pid, int64_t time)
{
  size_t at = b->len;
  struct st_sysprof_frame f = { .cpu = 3, .pid = pid, .time = time, .type = type };
  put (b, &f, sizeof f);
  return at;
}

static void
end_frame (struct buf *b, size_t at)
{
  while ((b->len - at) % 8)
    b->data[b->len++] = 0;
  uint16_t len = b->len - at;
  memcpy (b->data + at, &len, sizeof len);
}

static void
put_map (struct buf *b, int32_t pid, uint64_t start, uint64_t end, const char *name)
{
  size_t at = begin_frame (b, ST_SYSPROF_MAP, pid, 10);
  uint64_t v[4] = { start, end, 0x1000, 4242 };
  put (b, v, sizeof v);
  put (b, name, strlen (name) + 1);
  end_frame (b, at);
}

static void
put_string_frame (struct buf *b, uint32_t type, int32_t pid, const char *s)
{
  size_t at = begin_frame (b, type, pid, 20);
  put (b, s, strlen (s) + 1);
  end_frame (b, at);
}

static void
put_fork (struct buf *b, int32_t parent, int32_t child)
{
  size_t at = begin_frame (b, ST_SYSPROF_FORK, parent, 30);
  put (b, &child, sizeof child);
  end_frame (b, at);
}

/* A stack-user frame: STACK_SIZE bytes 0, 1, 2, ... and 17 registers
   100 + i, so that IP (perf register 8) is 108 and SP (7) is 107.  */
static size_t
put_stack_user (struct buf *b, int32_t pid, int32_t tid, int64_t time, uint64_t stack_size)
{
  size_t at = begin_frame (b, ST_SYSPROF_STACK_USER, pid, time);
  int32_t pad = 0;
  put (b, &stack_size, 8);
  put (b, &tid, 4);
  put (b, &pad, 4);
  for (uint64_t i = 0; i < stack_size; i++)
    b->data[b->len++] = (uint8_t) i;
  uint32_t ur[2] = { 17, 2 };
  put (b, ur, sizeof ur);
  for (uint64_t i = 0; i < 17; i++)
    {
      uint64_t v = 100 + i;
      put (b, &v, 8);
    }
  end_frame (b, at);
  return at;
}

struct seen {
  struct st_event ev[64];
  char strings[64][4096];
  uint8_t raw[64][64];
  uint64_t regs[64][17];
  uint8_t stack_byte[64];
  size_t n;
};

static int
collect (const struct st_event *ev, void *arg)
{
  struct seen *s = arg;
  assert_true (s->n < 64);
  s->ev[s->n] = *ev;
  switch (ev->kind)
    {
    case ST_EVENT_COMM:
      snprintf (s->strings[s->n], sizeof s->strings[0], "%s", ev->comm.comm);
      break;
    case ST_EVENT_MMAP:
      snprintf (s->strings[s->n], sizeof s->strings[0], "%s", ev->mmap.filename);
      break;
    case ST_EVENT_RAW:
      memcpy (s->raw[s->n], ev->raw.data, ev->raw.size < 64 ? ev->raw.size : 64);
      break;
    case ST_EVENT_SAMPLE:
      memcpy (s->regs[s->n], ev->sample.regs, ev->sample.n_regs * 8);
      if (ev->sample.stack_size > 5)
        s->stack_byte[s->n] = ev->sample.stack[5];
      break;
    default:
      break;
    }
  s->n++;
  return 0;
}

/* Runs the reader over B, from a file; returns its result.  */
static int
run (const struct buf *b, struct seen *seen, struct st_why *err)
{
  struct st_input *in = input_of (b);
  const uint8_t *magic;
  assert_true (st_input_peek (in, 8, &magic) >= 4);
  assert_true (st_sysprof_source_probe (magic, 8));
  struct st_sysprof_source *src;
  seen->n = 0;
  int r = st_sysprof_source_open (in, &src, err);
  if (r == 0)
    {
      r = st_sysprof_source_run (src, collect, seen, NULL, err);
      st_sysprof_source_free (src);
    }
  st_input_free (in);
  return r;
}

static void
assert_raw (const struct seen *s, size_t i, uint32_t type, const struct buf *b, size_t at)
{
  assert_int_equal (s->ev[i].kind, ST_EVENT_RAW);
  assert_int_equal (s->ev[i].raw.type, type);
  size_t n = s->ev[i].raw.size < 64 ? s->ev[i].raw.size : 64;
  assert_memory_equal (s->raw[i], b->data + at, n);
}

static void
test_every_frame_comes_out_raw_and_decoded_in_order (void **state)
{
  static struct buf b;
  put_header (&b);
  size_t at_map = b.len;
  put_map (&b, 77, 0x400000, 0x402000, "/usr/bin/worker");
  size_t at_process = b.len;
  put_string_frame (&b, ST_SYSPROF_PROCESS, 77, "/usr/bin/worker --fast");
  size_t at_unknown = b.len;
  put_string_frame (&b, 200, 77, "a frame of a type nobody knows");
  size_t at_thread = b.len;
  put_fork (&b, 77, 77);
  size_t at_fork = b.len;
  put_fork (&b, 77, 78);
  size_t at_sample = b.len;
  put_stack_user (&b, 77, 79, 40, 64);
  size_t at_exit = b.len;
  size_t f = begin_frame (&b, ST_SYSPROF_EXIT, 78, 50);
  end_frame (&b, f);

  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.n, 12);

  /* The file header first, for a Sysprof output to keep.  */
  assert_raw (&s, 0, ST_SYSPROF_RAW_FILE_HEADER, &b, 0);
  assert_int_equal (s.ev[0].raw.size, 256);

  assert_raw (&s, 1, ST_SYSPROF_MAP, &b, at_map);
  assert_int_equal (s.ev[2].kind, ST_EVENT_MMAP);
  assert_int_equal (s.ev[2].mmap.pid, 77);
  assert_int_equal (s.ev[2].mmap.start, 0x400000);
  assert_int_equal (s.ev[2].mmap.len, 0x2000);
  assert_int_equal (s.ev[2].mmap.pgoff, 0x1000);
  assert_int_equal (s.ev[2].mmap.ino, 4242);
  assert_string_equal (s.strings[2], "/usr/bin/worker");

  assert_raw (&s, 3, ST_SYSPROF_PROCESS, &b, at_process);
  assert_int_equal (s.ev[4].kind, ST_EVENT_COMM);
  assert_int_equal (s.ev[4].comm.pid, 77);
  assert_false (s.ev[4].comm.exec);
  assert_string_equal (s.strings[4], "worker");

  /* Unknown types and new threads: raw only.  */
  assert_raw (&s, 5, 200, &b, at_unknown);
  assert_raw (&s, 6, ST_SYSPROF_FORK, &b, at_thread);

  assert_raw (&s, 7, ST_SYSPROF_FORK, &b, at_fork);
  assert_int_equal (s.ev[8].kind, ST_EVENT_FORK);
  assert_int_equal (s.ev[8].task.pid, 78);
  assert_int_equal (s.ev[8].task.ppid, 77);

  assert_int_equal (s.ev[9].kind, ST_EVENT_SAMPLE);
  const struct st_sample *smp = &s.ev[9].sample;
  assert_int_equal (smp->pid, 77);
  assert_int_equal (smp->tid, 79);
  assert_int_equal (smp->time, 40);
  assert_int_equal (smp->cpu, 3);
  assert_int_equal (smp->input_offset, at_sample);
  assert_int_equal (smp->abi, ST_REGS_ABI_64);
  assert_int_equal (smp->regs_mask, 0xff01ff);
  assert_int_equal (smp->n_regs, 17);
  assert_int_equal (s.regs[9][0], 100);
  assert_int_equal (s.regs[9][16], 116);
  assert_int_equal (smp->ip, 108);
  assert_int_equal (smp->stack_size, 64);
  assert_int_equal (s.stack_byte[9], 5);

  assert_raw (&s, 10, ST_SYSPROF_EXIT, &b, at_exit);
  assert_int_equal (s.ev[11].kind, ST_EVENT_EXIT);
  assert_int_equal (s.ev[11].task.pid, 78);
  assert_int_equal (s.ev[11].task.tid, 78);
}

static void
test_registers_after_an_odd_stack_size (void **state)
{
  static struct buf b;
  put_header (&b);
  put_map (&b, 77, 0x400000, 0x402000, "/usr/bin/worker");
  put_stack_user (&b, 77, 77, 40, 13);
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.ev[s.n - 1].kind, ST_EVENT_SAMPLE);
  assert_int_equal (s.ev[s.n - 1].sample.stack_size, 13);
  assert_int_equal (s.regs[s.n - 1][7], 107);
  assert_int_equal (s.regs[s.n - 1][16], 116);
}

/* One damaged stack-user frame after two good ones: the error names
   OFFSET and the two samples before it came out.  */
static void
expect_bad (const struct buf *b, uint64_t offset, const char *words)
{
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (b, &s, &err), -EBADMSG);
  if (err.offset != offset || strstr (err.text, words) == NULL)
    fail_msg ("error at %llu (%s), expected %llu (%s)", (unsigned long long) err.offset,
              err.text, (unsigned long long) offset, words);
  size_t samples = 0;
  for (size_t i = 0; i < s.n; i++)
    samples += s.ev[i].kind == ST_EVENT_SAMPLE;
  assert_int_equal (samples, 2);
}

static size_t
two_good_one_to_damage (struct buf *b)
{
  put_header (b);
  put_map (b, 77, 0x400000, 0x402000, "/usr/bin/worker");
  put_stack_user (b, 77, 77, 40, 64);
  put_stack_user (b, 77, 77, 41, 64);
  return put_stack_user (b, 77, 77, 42, 64);
}

static void
test_malformed_frames_name_their_offset_and_keep_earlier_ones (void **state)
{
  static struct buf b;
  size_t at = two_good_one_to_damage (&b);
  uint16_t len16 = 16;
  memcpy (b.data + at, &len16, 2);
  expect_bad (&b, at, "smaller than its 24-byte header");

  at = two_good_one_to_damage (&b);
  b.len -= 8;
  expect_bad (&b, at, "runs past the end of the input");

  at = two_good_one_to_damage (&b);
  b.len = at + 10;
  expect_bad (&b, at, "truncated frame header");

  at = two_good_one_to_damage (&b);
  uint64_t size = 1000;
  memcpy (b.data + at + 24, &size, 8);
  expect_bad (&b, at + 24, "stack size 1000 overflows");

  at = two_good_one_to_damage (&b);
  uint32_t n_regs = 18;
  memcpy (b.data + at + 40 + 64, &n_regs, 4);
  expect_bad (&b, at + 40 + 64, "n_regs 18 overflows");

  at = two_good_one_to_damage (&b);
  uint16_t len = 40 + 64 + 4;
  memcpy (b.data + at, &len, 2);
  expect_bad (&b, at, "not a multiple of 8");

  at = two_good_one_to_damage (&b);
  len = 40 + 64;
  memcpy (b.data + at, &len, 2);
  b.len = at + len;
  expect_bad (&b, at + len, "registers header");
}

static void
test_bad_header (void **state)
{
  static struct buf b;
  put_header (&b);
  b.len = 100;
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), -EBADMSG);
  assert_int_equal (err.offset, 100);
  put_header (&b);
  uint32_t flags = 1;   /* big-endian */
  memcpy (b.data + 4, &flags, 4);
  assert_int_equal (run (&b, &s, &err), -ENOTSUP);
}

static int64_t
monotonic_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void
test_process_without_map_frames_is_read_from_proc (void **state)
{
  static struct buf b;
  put_header (&b);
  put_stack_user (&b, getpid (), getpid (), monotonic_now (), 64);
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  size_t maps = 0, raw_maps = 0, comms = 0;
  bool ours = false;
  for (size_t i = 0; i < s.n; i++)
    {
      if (s.ev[i].kind == ST_EVENT_MMAP)
        {
          maps++;
          ours |= strstr (s.strings[i], "test-source-sysprof") != NULL;
        }
      raw_maps += s.ev[i].kind == ST_EVENT_RAW && s.ev[i].raw.type == ST_SYSPROF_MAP;
      if (s.ev[i].kind == ST_EVENT_COMM)
        {
          comms++;
          assert_string_equal (s.strings[i], "test-source-sys");
        }
    }
  assert_true (maps > 0);
  assert_int_equal (raw_maps, maps);   /* as frames, for a Sysprof output */
  assert_true (ours);
  assert_int_equal (comms, 1);
  assert_int_equal (s.ev[s.n - 1].kind, ST_EVENT_SAMPLE);
}

static void
test_newer_process_under_the_same_pid_is_not_used (void **state)
{
  static struct buf b;
  put_header (&b);
  /* Sampled long before this process started: /proc shows another one. */
  put_stack_user (&b, getpid (), getpid (), 1000, 64);
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.n, 2);   /* the header and the sample, nothing made up */
  assert_int_equal (s.ev[1].kind, ST_EVENT_SAMPLE);
}

static void
test_map_frames_in_the_stream_win_over_proc (void **state)
{
  static struct buf b;
  put_header (&b);
  put_map (&b, getpid (), 0x400000, 0x402000, "/usr/bin/worker");
  put_stack_user (&b, getpid (), getpid (), monotonic_now (), 64);
  static struct seen s;
  struct st_why err;
  assert_int_equal (run (&b, &s, &err), 0);
  assert_int_equal (s.n, 4);   /* header, map raw and decoded, sample */
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_frame_comes_out_raw_and_decoded_in_order),
    cmocka_unit_test (test_registers_after_an_odd_stack_size),
    cmocka_unit_test (test_malformed_frames_name_their_offset_and_keep_earlier_ones),
    cmocka_unit_test (test_bad_header),
    cmocka_unit_test (test_process_without_map_frames_is_read_from_proc),
    cmocka_unit_test (test_newer_process_under_the_same_pid_is_not_used),
    cmocka_unit_test (test_map_frames_in_the_stream_win_over_proc),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
