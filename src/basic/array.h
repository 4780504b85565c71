/* Arrays that grow one item at a time, their capacity doubling.  */
#pragma once

#include <stddef.h>

/* Makes room for item N of *ITEMS, an array of *CAP items of SIZE bytes:
   when N is *CAP, doubles *CAP (FIRST items the first time) and reallocates.
   Returns 0, or -ENOMEM with *ITEMS and *CAP as they were.  */
int st_grow (void **items, size_t *cap, size_t n, size_t size, size_t first);

/* st_grow for an array ITEMS of any item type.  */
#define ST_GROW(items, cap, n, first) \
  st_grow ((void **) &(items), &(cap), (n), sizeof *(items), (first))
