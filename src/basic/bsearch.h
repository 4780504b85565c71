/* Binary search of an array sorted by a uint64_t field: the one copy of the
 * loop the unwind-rule cache, the symbol tables and the JIT maps use to
 * find the item an address falls in (an item covers [start, end), the
 * items are sorted by start).  Header only: the loop runs once per frame,
 * and inlined with a constant item size and field offset it compiles to
 * the hand-written one.  */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many of the N items of SIZE bytes at BASE, sorted by the uint64_t at
   OFFSET in each, have that field at or below KEY: the index one past the
   last such item, 0 when KEY is below them all (C++'s upper_bound).  */
static inline size_t
st_bsearch_upper (const void *base, size_t n, size_t size, size_t offset, uint64_t key)
{
  const unsigned char *p = base;
  size_t lo = 0, hi = n;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      uint64_t v;
      memcpy (&v, p + mid * size + offset, sizeof v);
      if (v <= key)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* st_bsearch_upper on ARRAY, N items sorted by their uint64_t FIELD.  */
#define ST_BSEARCH_UPPER(array, n, field, key)                                  \
  (__extension__ ({                                                             \
    _Static_assert (sizeof ((array)->field) == sizeof (uint64_t),               \
                    "ST_BSEARCH_UPPER: " #field " is not 64 bits");             \
    st_bsearch_upper ((array), (n), sizeof *(array),                            \
                      offsetof (__typeof__ (*(array)), field), (key));          \
  }))
