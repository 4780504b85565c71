/* See array.h.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "basic/array.h"

int
st_grow (void **items, size_t *cap, size_t n, size_t size, size_t first)
{
  if (n < *cap)
    return 0;
  size_t new_cap = *cap ? 2 * *cap : first;
  void *p = reallocarray (*items, new_cap, size);
  if (p == NULL)
    return -ENOMEM;
  *items = p;
  *cap = new_cap;
  return 0;
}
