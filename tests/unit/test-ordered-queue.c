#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/input/ordered-queue.h"

struct released {
  uint64_t times[64];
  uintptr_t items[64];
  size_t n;
};

static int
record (const struct st_queued_record *rec, void *arg)
{
  struct released *r = arg;
  r->times[r->n] = rec->time;
  r->items[r->n++] = rec->offset;
  return 0;
}

static void
push (struct st_ordered_queue *q, uint64_t time, uint64_t offset)
{
  struct st_queued_record rec = { .time = time, .offset = offset };
  assert_int_equal (st_ordered_queue_push (q, &rec), 0);
}

static void
test_round_releases_only_what_the_previous_round_made_safe (void **state)
{
  struct released r = { 0 };
  struct st_ordered_queue *q = st_ordered_queue_new (record, &r);
  /* Round 1: CPU 0 wrote 10 and 30, CPU 1 wrote 20.  */
  push (q, 10, 1);
  push (q, 30, 3);
  push (q, 20, 2);
  assert_int_equal (st_ordered_queue_round (q), 0);
  /* Nothing is safe yet: round 2 may still bring older records.  */
  assert_int_equal (r.n, 0);
  /* Round 2 brings 25 (older than round 1's latest) and 40.  */
  push (q, 25, 25);
  push (q, 40, 4);
  assert_int_equal (st_ordered_queue_round (q), 0);
  /* Released up to round 1's latest time, 30, in time order.  */
  assert_int_equal (r.n, 4);
  assert_int_equal (r.times[0], 10);
  assert_int_equal (r.times[1], 20);
  assert_int_equal (r.times[2], 25);
  assert_int_equal (r.times[3], 30);
  assert_int_equal (st_ordered_queue_flush_all (q), 0);
  assert_int_equal (r.n, 5);
  assert_int_equal (r.times[4], 40);
  st_ordered_queue_free (q, NULL);
}

static void
test_equal_times_keep_input_order (void **state)
{
  struct released r = { 0 };
  struct st_ordered_queue *q = st_ordered_queue_new (record, &r);
  for (uintptr_t i = 1; i <= 20; i++)
    push (q, 5, i);
  st_ordered_queue_flush_all (q);
  for (size_t i = 0; i < 20; i++)
    assert_int_equal (r.items[i], i + 1);
  st_ordered_queue_free (q, NULL);
}

static int
fail_on_second (const struct st_queued_record *rec, void *arg)
{
  return ++*(int *) arg == 2 ? -5 : 0;
}

static void
test_release_error_stops_the_flush (void **state)
{
  int calls = 0;
  struct st_ordered_queue *q = st_ordered_queue_new (fail_on_second, &calls);
  for (uintptr_t i = 1; i <= 3; i++)
    push (q, i, 0);
  assert_int_equal (st_ordered_queue_flush_all (q), -5);
  assert_int_equal (st_ordered_queue_size (q), 1);
  assert_int_equal (st_ordered_queue_min_offset (q), 0);
  st_ordered_queue_free (q, NULL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_round_releases_only_what_the_previous_round_made_safe),
    cmocka_unit_test (test_equal_times_keep_input_order),
    cmocka_unit_test (test_release_error_stops_the_flush),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
