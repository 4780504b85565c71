/* st_bsearch_upper against a linear count, on arrays with repeated keys,
   the key below, between and above them, and a field that is not the
   item's first.  */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "basic/bsearch.h"

struct item {
  uint32_t tag;          /* puts the field at offset 8, after padding */
  uint64_t start;
  uint8_t tail;
};

/* What st_bsearch_upper must return: the items at or below KEY.  */
static size_t
count_at_or_below (const struct item *items, size_t n, uint64_t key)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += items[i].start <= key;
  return c;
}

static void
test_empty_and_one (void **state)
{
  (void) state;
  struct item one = { .start = 100 };
  assert_int_equal (ST_BSEARCH_UPPER (&one, 0, start, 100), 0);
  assert_int_equal (ST_BSEARCH_UPPER (&one, 1, start, 99), 0);
  assert_int_equal (ST_BSEARCH_UPPER (&one, 1, start, 100), 1);
  assert_int_equal (ST_BSEARCH_UPPER (&one, 1, start, UINT64_MAX), 1);
}

static void
test_edges_and_repeats (void **state)
{
  (void) state;
  struct item a[] = { { .start = 0 }, { .start = 10 }, { .start = 10 }, { .start = 10 },
                      { .start = 20 }, { .start = UINT64_MAX } };
  size_t n = sizeof a / sizeof *a;
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, 0), 1);
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, 9), 1);
  /* Repeated keys: past the last of them, so the caller gets the last.  */
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, 10), 4);
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, 19), 4);
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, 20), 5);
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, UINT64_MAX - 1), 5);
  assert_int_equal (ST_BSEARCH_UPPER (a, n, start, UINT64_MAX), 6);
}

/* Every key around every item of sorted arrays of every length up to 64,
   against the linear count.  */
static void
test_against_linear (void **state)
{
  (void) state;
  struct item a[64];
  srand (16);
  for (size_t n = 0; n <= 64; n++)
    {
      uint64_t at = 5;
      for (size_t i = 0; i < n; i++)
        {
          at += (uint64_t) (rand () % 3) * 4;   /* steps of 0, 4 or 8: repeats */
          a[i] = (struct item) { .tag = (uint32_t) i, .start = at, .tail = 0xaa };
        }
      for (uint64_t key = 0; key <= at + 9; key++)
        assert_int_equal (st_bsearch_upper (a, n, sizeof *a, offsetof (struct item, start), key),
                          count_at_or_below (a, n, key));
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_empty_and_one),
    cmocka_unit_test (test_edges_and_repeats),
    cmocka_unit_test (test_against_linear),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
