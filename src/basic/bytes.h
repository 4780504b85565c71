/* Integers read from a record's bytes, which need not be aligned (a hostile
 * file, a stream's buffer): memcpy, never a cast pointer.  */
#pragma once

#include <stdint.h>
#include <string.h>

static inline uint64_t
st_get_u64 (const uint8_t *p)
{
  uint64_t v;
  memcpy (&v, p, sizeof v);
  return v;
}

static inline uint32_t
st_get_u32 (const uint8_t *p)
{
  uint32_t v;
  memcpy (&v, p, sizeof v);
  return v;
}
