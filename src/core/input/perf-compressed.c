#include "config.h"

#include <byteswap.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "basic/why.h"
#include "core/input/perf-compressed.h"

/* A record is at most 64 KiB (its size is a u16): the stream never needs
   more than that plus one output step pending.  */
#define STEP (1u << 17)

struct st_perf_decompressor {
  ZSTD_DStream *stream;
  uint8_t *buf;            /* decompressed bytes not yet handed out */
  size_t len, cap;
  bool swapped;            /* the records are of the other byte order */
};

int
st_perf_decompressor_new (struct st_perf_decompressor **out)
{
  struct st_perf_decompressor *d = calloc (1, sizeof *d);
  if (d == NULL)
    return -ENOMEM;
  d->stream = ZSTD_createDStream ();
  d->cap = 2 * STEP;
  d->buf = malloc (d->cap);
  if (d->stream == NULL || d->buf == NULL)
    {
      st_perf_decompressor_free (d);
      return -ENOMEM;
    }
  ZSTD_initDStream (d->stream);
  *out = d;
  return 0;
}

void
st_perf_decompressor_free (struct st_perf_decompressor *d)
{
  if (d == NULL)
    return;
  ZSTD_freeDStream (d->stream);
  free (d->buf);
  free (d);
}

void
st_perf_decompressor_set_swapped (struct st_perf_decompressor *d, bool swapped)
{
  d->swapped = swapped;
}

size_t
st_perf_decompressor_pending (const struct st_perf_decompressor *d)
{
  return d->len;
}

/* Hands out the whole records at the start of the buffer and keeps the
   rest.  */
static int
drain (struct st_perf_decompressor *d, st_perf_record_fn fn, void *arg, struct st_why *why)
{
  size_t at = 0;
  int r = 0;
  while (d->len - at >= 8)
    {
      uint16_t size;
      memcpy (&size, d->buf + at + 6, sizeof size);
      if (d->swapped)
        size = bswap_16 (size);
      if (size < 8)
        {
          r = st_why_set (why, EBADMSG, "a decompressed record of %u bytes, smaller than "
                          "its header", size);
          break;
        }
      if (d->len - at < size)
        break;
      r = fn (d->buf + at, size, arg);
      if (r < 0)
        break;
      at += size;
    }
  memmove (d->buf, d->buf + at, d->len - at);
  d->len -= at;
  return r;
}

/* Decompresses what fits after the buffered bytes, then hands out the
   records it completed.  *OUT says how much room there was and how much
   was filled.  */
static int
step (struct st_perf_decompressor *d, ZSTD_inBuffer *in, ZSTD_outBuffer *out,
      st_perf_record_fn fn, void *arg, struct st_why *why)
{
  *out = (ZSTD_outBuffer) { d->buf + d->len, d->cap - d->len, 0 };
  size_t ret = ZSTD_decompressStream (d->stream, out, in);
  if (ZSTD_isError (ret))
    return st_why_set (why, EBADMSG, "zstd: %s", ZSTD_getErrorName (ret));
  d->len += out->pos;
  return drain (d, fn, arg, why);
}

int
st_perf_decompress (struct st_perf_decompressor *d, const uint8_t *payload, size_t len,
                    st_perf_record_fn fn, void *arg, struct st_why *why)
{
  ZSTD_inBuffer in = { payload, len, 0 };
  ZSTD_outBuffer out;
  while (in.pos < in.size)
    {
      /* d->len < 64 KiB after drain, so a step always fits.  */
      int r = step (d, &in, &out, fn, arg, why);
      if (r < 0)
        return r;
      if (out.pos == 0 && in.pos < in.size && d->len == d->cap)
        return st_why_set (why, EBADMSG, "zstd: no progress");
    }
  /* What the last step left in zstd's own window.  */
  for (;;)
    {
      int r = step (d, &in, &out, fn, arg, why);
      if (r < 0)
        return r;
      if (out.pos < out.size || out.pos == 0)
        return 0;
    }
}
