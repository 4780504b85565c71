/* GNU build-ids: how long one may be, and how it is written in hex (the
 * one encoder and digit decoder: the core, the debuginfod client and the namespace helper's
 * protocol all name files by it).  Header-only, so that the privileged
 * helper uses it without linking anything of the core.  */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define ST_BUILD_ID_MAX 20

/* N bytes at BYTES as 2N lowercase hex digits and a NUL in OUT.  */
static inline void
st_hex (const uint8_t *bytes, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++)
    {
      out[2 * i] = digits[bytes[i] >> 4];
      out[2 * i + 1] = digits[bytes[i] & 15];
    }
  out[2 * n] = '\0';
}

/* The value of the hex digit C, or -1 when it is none.  */
static inline int
st_hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* A build-id in hex; one longer than ST_BUILD_ID_MAX is cut to it.  */
static inline void
st_build_id_to_hex (const uint8_t *id, size_t n, char out[2 * ST_BUILD_ID_MAX + 1])
{
  st_hex (id, n > ST_BUILD_ID_MAX ? ST_BUILD_ID_MAX : n, out);
}
