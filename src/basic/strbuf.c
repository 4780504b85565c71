#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "basic/strbuf.h"

void
st_strbuf_free (struct st_strbuf *b)
{
  free (b->data);
  *b = (struct st_strbuf) { 0 };
}

static bool
reserve (struct st_strbuf *b, size_t n)
{
  if (b->failed)
    return false;
  if (b->len + n <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 4096;
  while (b->len + n > cap)
    cap *= 2;
  char *p = realloc (b->data, cap);
  if (p == NULL)
    {
      b->failed = true;
      return false;
    }
  b->data = p;
  b->cap = cap;
  return true;
}

char *
st_strbuf_room (struct st_strbuf *b, size_t n)
{
  return reserve (b, n) ? b->data + b->len : NULL;
}

void
st_strbuf_put (struct st_strbuf *b, const void *data, size_t n)
{
  if (n > 0 && reserve (b, n))
    {
      memcpy (b->data + b->len, data, n);
      b->len += n;
    }
}

void
st_strbuf_put_str (struct st_strbuf *b, const char *s)
{
  st_strbuf_put (b, s, strlen (s));
}

void
st_strbuf_put_char (struct st_strbuf *b, char c)
{
  if (reserve (b, 1))
    b->data[b->len++] = c;
}

void
st_strbuf_put_hex (struct st_strbuf *b, uint64_t v, int width)
{
  static const char digits[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  do
    {
      tmp[n++] = digits[v & 15];
      v >>= 4;
    }
  while (v != 0);
  if (!reserve (b, width > n ? width : n))
    return;
  for (int i = n; i < width; i++)
    b->data[b->len++] = ' ';
  while (n > 0)
    b->data[b->len++] = tmp[--n];
}

void
st_strbuf_put_dec (struct st_strbuf *b, uint64_t v, int width)
{
  char tmp[24];
  int n = 0;
  do
    {
      tmp[n++] = '0' + v % 10;
      v /= 10;
    }
  while (v != 0);
  while (n < width && n < (int) sizeof tmp)
    tmp[n++] = '0';
  if (!reserve (b, n))
    return;
  while (n > 0)
    b->data[b->len++] = tmp[--n];
}

void
st_strbuf_put_signed (struct st_strbuf *b, int64_t v)
{
  if (v < 0)
    {
      st_strbuf_put_char (b, '-');
      st_strbuf_put_dec (b, -(uint64_t) v, 0);
    }
  else
    st_strbuf_put_dec (b, v, 0);
}
