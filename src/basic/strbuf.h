/* A growable byte buffer with the few formatters output needs, cheaper
 * than printf on the hot path.  An allocation failure is sticky: later
 * appends do nothing and st_strbuf_failed() says so.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_strbuf {
  char *data;
  size_t len, cap;
  bool failed;
};

void st_strbuf_free (struct st_strbuf *b);
static inline void
st_strbuf_reset (struct st_strbuf *b)
{
  b->len = 0;
}
static inline bool
st_strbuf_failed (const struct st_strbuf *b)
{
  return b->failed;
}

/* Room for N more bytes at the end of B, for a formatter that writes them
   itself and then calls st_strbuf_end_at() with where it stopped.  NULL
   when memory ran out.  */
char *st_strbuf_room (struct st_strbuf *b, size_t n);
static inline void
st_strbuf_end_at (struct st_strbuf *b, char *end)
{
  b->len = (size_t) (end - b->data);
}

void st_strbuf_put (struct st_strbuf *b, const void *data, size_t n);
void st_strbuf_put_str (struct st_strbuf *b, const char *s);
void st_strbuf_put_char (struct st_strbuf *b, char c);
/* V in hex, right-aligned in WIDTH columns (0: no padding).  */
void st_strbuf_put_hex (struct st_strbuf *b, uint64_t v, int width);
/* V in decimal, zero-padded to WIDTH digits.  */
void st_strbuf_put_dec (struct st_strbuf *b, uint64_t v, int width);
void st_strbuf_put_signed (struct st_strbuf *b, int64_t v);
