#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "basic/hashmap.h"

static int freed;

static void
count_free (void *p)
{
  freed++;
  free (p);
}

static void
test_put_get_replace_remove (void **state)
{
  struct st_hashmap *m = st_hashmap_new (count_free);
  assert_non_null (m);
  freed = 0;
  for (uint64_t i = 0; i < 10000; i++)
    {
      uint64_t *v = malloc (sizeof *v);
      *v = i * 3;
      assert_int_equal (st_hashmap_put_u64 (m, i, v), 0);
    }
  assert_int_equal (st_hashmap_size (m), 10000);
  for (uint64_t i = 0; i < 10000; i++)
    assert_int_equal (*(uint64_t *) st_hashmap_get_u64 (m, i), i * 3);
  assert_null (st_hashmap_get_u64 (m, 10000));

  /* Replacing frees the old value; removing frees too.  */
  uint64_t *v = malloc (sizeof *v);
  *v = 42;
  assert_int_equal (st_hashmap_put_u64 (m, 7, v), 0);
  assert_int_equal (freed, 1);
  assert_int_equal (*(uint64_t *) st_hashmap_get_u64 (m, 7), 42);
  assert_true (st_hashmap_remove_u64 (m, 7));
  assert_false (st_hashmap_remove_u64 (m, 7));
  assert_int_equal (freed, 2);
  assert_int_equal (st_hashmap_size (m), 9999);
  st_hashmap_free (m);
  assert_int_equal (freed, 10001);
}

static void
test_string_keys_are_compared_by_bytes (void **state)
{
  struct st_hashmap *m = st_hashmap_new (NULL);
  assert_int_equal (st_hashmap_put (m, "main;leaf", 9, (void *) 1), 0);
  assert_int_equal (st_hashmap_put (m, "main;lea", 8, (void *) 2), 0);
  assert_ptr_equal (st_hashmap_get (m, "main;leaf", 9), (void *) 1);
  assert_ptr_equal (st_hashmap_get (m, "main;lea", 8), (void *) 2);
  assert_null (st_hashmap_get (m, "main;le", 7));
  st_hashmap_free (m);
}

static int
sum_values (const void *key, size_t len, void *value, void *arg)
{
  *(uintptr_t *) arg += (uintptr_t) value;
  return 0;
}

static void
test_foreach_visits_every_entry (void **state)
{
  struct st_hashmap *m = st_hashmap_new (NULL);
  for (uintptr_t i = 1; i <= 100; i++)
    st_hashmap_put_u64 (m, i, (void *) i);
  uintptr_t sum = 0;
  st_hashmap_foreach (m, sum_values, &sum);
  assert_int_equal (sum, 5050);
  st_hashmap_free (m);
}

/* An entry of the eviction test: when it was used, and whether it may go.  */
struct aged_value {
  uint64_t used;
  bool pinned;
};

static bool
aged_value_age (const void *value, uint64_t *used)
{
  const struct aged_value *v = value;
  *used = v->used;
  return !v->pinned;
}

static void
test_evict_oldest_keeps_the_newest (void **state)
{
  struct st_hashmap *map = st_hashmap_new (free);
  /* 100 entries used at 0..99, every fourth pinned; keys in another order
     than their age.  */
  for (uint64_t i = 0; i < 100; i++)
    {
      struct aged_value *v = malloc (sizeof *v);
      *v = (struct aged_value) { .used = (i * 37) % 100, .pinned = i % 4 == 0 };
      assert_int_equal (st_hashmap_put_u64 (map, i, v), 0);
    }
  size_t candidates = 0;
  /* Fewer candidates than KEEP: nothing goes.  */
  assert_int_equal (st_hashmap_evict_oldest (map, 100, aged_value_age, &candidates), 0);
  assert_int_equal (candidates, 75);
  assert_int_equal (st_hashmap_evict_oldest (map, 10, aged_value_age, &candidates), 65);
  assert_int_equal (candidates, 75);
  assert_int_equal (st_hashmap_size (map), 35);
  /* Left: the 25 pinned, and the 10 unpinned used last.  */
  uint64_t newest_gone = 0, oldest_kept = UINT64_MAX;
  for (uint64_t i = 0; i < 100; i++)
    {
      uint64_t used = (i * 37) % 100;
      struct aged_value *v = st_hashmap_get_u64 (map, i);
      if (i % 4 == 0)
        assert_non_null (v);
      else if (v != NULL && used < oldest_kept)
        oldest_kept = used;
      else if (v == NULL && used > newest_gone)
        newest_gone = used;
    }
  assert_true (newest_gone < oldest_kept);
  st_hashmap_free (map);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_put_get_replace_remove),
    cmocka_unit_test (test_string_keys_are_compared_by_bytes),
    cmocka_unit_test (test_foreach_visits_every_entry),
    cmocka_unit_test (test_evict_oldest_keeps_the_newest),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
