/* For unit tests that build an input byte by byte: a fixed buffer to
 * append to, and the st_input that reads it back from a file.  Include
 * after <cmocka.h>.  */
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/input/input.h"

struct buf {
  uint8_t data[1 << 16];
  size_t len;
};

static inline void
put (struct buf *b, const void *p, size_t n)
{
  assert_true (b->len + n <= sizeof b->data);
  memcpy (b->data + b->len, p, n);
  b->len += n;
}

/* B's bytes as an input, through a temporary file (already unlinked).  */
static inline struct st_input *
input_of (const struct buf *b)
{
  char path[] = "/tmp/eu-stacktrace-unit.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, b->data, b->len), (ssize_t) b->len);
  close (fd);
  struct st_input *in;
  assert_int_equal (st_input_open (path, &in), 0);
  unlink (path);
  return in;
}
