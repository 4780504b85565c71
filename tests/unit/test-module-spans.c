/* The ranges of a Dwfl's modules by file (module-spans.c): its binary
 * search answers what asking every module did, on random ranges, and a
 * range's own load (the same range again) is no conflict.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "core/unwind/module-spans.h"

static void
test_conflicts_of_one_file_only (void **state)
{
  struct st_module_spans *s = st_module_spans_new ();
  assert_non_null (s);
  int a, b;
  assert_false (st_module_spans_conflict (s, &a, 100, 200));
  assert_int_equal (st_module_spans_add (s, &a, 100, 200), 0);
  /* Its own range: another segment of the same load.  */
  assert_false (st_module_spans_conflict (s, &a, 100, 200));
  assert_true (st_module_spans_conflict (s, &a, 150, 250));
  assert_true (st_module_spans_conflict (s, &a, 50, 101));
  assert_true (st_module_spans_conflict (s, &a, 0, 1000));
  assert_false (st_module_spans_conflict (s, &a, 200, 300));   /* ends are exclusive */
  assert_false (st_module_spans_conflict (s, &a, 0, 100));
  /* Another file's ranges are not this one's.  */
  assert_false (st_module_spans_conflict (s, &b, 150, 250));
  /* Added out of order, kept in order.  */
  assert_int_equal (st_module_spans_add (s, &a, 0, 50), 0);
  assert_int_equal (st_module_spans_add (s, &a, 500, 600), 0);
  assert_int_equal (st_module_spans_add (s, &a, 300, 400), 0);
  assert_int_equal (st_module_spans_add (s, &a, 300, 400), 0);   /* again: once */
  assert_true (st_module_spans_conflict (s, &a, 350, 450));
  assert_true (st_module_spans_conflict (s, &a, 40, 60));
  assert_false (st_module_spans_conflict (s, &a, 400, 500));
  assert_false (st_module_spans_conflict (s, &a, 300, 400));
  assert_true (st_module_spans_conflict (s, &a, 599, UINT64_MAX));
  st_module_spans_free (s);
}

/* The rule as process.c asked it before: every module of the file.  */
struct brute {
  uint64_t low[4096], high[4096];
  size_t n;
};

static bool
brute_conflict (const struct brute *b, uint64_t low, uint64_t high)
{
  for (size_t i = 0; i < b->n; i++)
    if (b->low[i] != low && b->low[i] < high && low < b->high[i])
      return true;
  return false;
}

static void
test_answers_as_asking_every_module (void **state)
{
  static struct brute b;
  struct st_module_spans *s = st_module_spans_new ();
  assert_non_null (s);
  int file;
  srand (12345);
  size_t conflicts = 0;
  for (int i = 0; i < 20000; i++)
    {
      /* Ranges of 1 to 64 pages over 4096 pages: dense enough that most
         conflict, sparse enough that many are added.  */
      uint64_t low = (uint64_t) (rand () % 4096) << 12;
      uint64_t high = low + ((uint64_t) (1 + rand () % 64) << 12);
      bool expect = brute_conflict (&b, low, high);
      assert_int_equal (st_module_spans_conflict (s, &file, low, high), expect);
      conflicts += expect;
      if (!expect)
        {
          /* The rule keeps the ranges apart: a range with the low of one
             added is that one (one file, one bias, one range).  */
          bool same = false;
          for (size_t k = 0; k < b.n; k++)
            same |= b.low[k] == low;
          if (same)
            continue;
          assert_true (b.n < 4096);
          b.low[b.n] = low;
          b.high[b.n] = high;
          b.n++;
          assert_int_equal (st_module_spans_add (s, &file, low, high), 0);
        }
    }
  print_message ("%zu ranges added, %zu conflicts\n", b.n, conflicts);
  assert_true (b.n > 50 && conflicts > 1000);
  st_module_spans_free (s);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_conflicts_of_one_file_only),
    cmocka_unit_test (test_answers_as_asking_every_module),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
