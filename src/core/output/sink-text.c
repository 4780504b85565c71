/* -f text: one block per sample, in the shape of `perf script`, so that
 * people and tools used to perf's output read it without surprise.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/output/sink-lines.h"
#include "basic/strbuf.h"

/* Text is this tool's hot output path: each sample is formatted by hand
   into one buffer and written with one fwrite, without printf's parsing
   (printf was the largest single cost of the whole run).  */
/* V's 16 hex digits, leading zeros included, at P: the nibbles spread to
   one a byte and turned to ASCII all at once (no table, no loop).  */
static inline void
hex16_at (char *p, uint64_t v)
{
#ifdef __SSE2__
  /* Most significant byte first; each byte's high nibble, then its low.  */
  __m128i bytes = _mm_cvtsi64_si128 ((long long) __builtin_bswap64 (v));
  __m128i low4 = _mm_set1_epi8 (0x0f);
  __m128i hi = _mm_and_si128 (_mm_srli_epi16 (bytes, 4), low4);
  __m128i lo = _mm_and_si128 (bytes, low4);
  __m128i nibbles = _mm_unpacklo_epi8 (hi, lo);
  __m128i letters = _mm_and_si128 (_mm_cmpgt_epi8 (nibbles, _mm_set1_epi8 (9)),
                                   _mm_set1_epi8 ('a' - '0' - 10));
  __m128i ascii = _mm_add_epi8 (_mm_add_epi8 (nibbles, _mm_set1_epi8 ('0')), letters);
  _mm_storeu_si128 ((__m128i *) p, ascii);
#else
  uint64_t halves[2] = { v >> 32, v & 0xffffffff };
  for (int i = 0; i < 2; i++)
    {
      uint64_t x = halves[i];
      x = (x | x << 16) & 0x0000ffff0000ffffull;
      x = (x | x << 8) & 0x00ff00ff00ff00ffull;
      x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
      /* Each byte a nibble, the lowest first; 10-15 become a-f.  */
      uint64_t letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
      x += 0x3030303030303030ull + letters * ('a' - '0' - 10);
      x = __builtin_bswap64 (x);
      memcpy (p + 8 * i, &x, 8);
    }
#endif
}

static int
hex_digits (uint64_t v)
{
  return v == 0 ? 1 : (64 - __builtin_clzll (v) + 3) / 4;
}

/* V in hex at P, right-aligned in 16 columns; returns the end.  */
static char *
hex_pad16_at (char *p, uint64_t v)
{
  hex16_at (p, v);
  int n = hex_digits (v);
  memset (p, ' ', 16 - n);
  return p + 16;
}

/* V in hex at P without padding; returns the end.  Writes 16 bytes past
   P whatever V is: P must have room for all of them.  */
static char *
hex_at (char *p, uint64_t v)
{
  char digits[16];
  hex16_at (digits, v);
  int n = hex_digits (v);
  memcpy (p, digits + 16 - n, n);
  return p + n;
}

/* V in decimal at P, at least WIDTH digits (zero-padded); returns the
   end.  */
static char *
dec_at (char *p, uint64_t v, int width)
{
  char tmp[20];
  char *q = tmp + sizeof tmp;
  do
    {
      *--q = '0' + v % 10;
      v /= 10;
    }
  while (v != 0);
  while (tmp + sizeof tmp - q < width)
    *--q = '0';
  size_t n = tmp + sizeof tmp - q;
  memcpy (p, q, n);
  return p + n;
}

static char *
str_at (char *p, const char *s, size_t len)
{
  memcpy (p, s, len);
  return p + len;
}

#define LIT_AT(p, lit) str_at (p, lit, sizeof lit - 1)

static char *
signed_at (char *p, int64_t v)
{
  if (v < 0)
    *p++ = '-';
  return dec_at (p, v < 0 ? -(uint64_t) v : (uint64_t) v, 0);
}

/* Room for N more bytes at the end of B: the test inline, st_strbuf_room
   only when the buffer grows (once or twice a run).  */
static inline char *
room (struct st_strbuf *b, size_t n)
{
  if (!b->failed && b->cap - b->len >= n)
    return b->data + b->len;
  return st_strbuf_room (b, n);
}

/* "\tPC SYMBOL+0xOFFSET (MODULE)\n", the line of most of the output, written
   with one reservation: the per-piece appends cost more than the rest of
   formatting together.  */
static bool
put_frame (struct st_strbuf *b, const struct st_frame *f)
{
  const char *symbol = f->symbol ? f->symbol : "[unknown]";
  const char *module = f->module ? f->module : "[unknown]";
  size_t symbol_len = strlen (symbol), module_len = strlen (module);
  /* tab, 16 digits, space, symbol, "+0x" and 16 digits (more than
     " (inlined)"), " (", module, ")\n" */
  char *p = room (b, 1 + 16 + 1 + symbol_len + 3 + 16 + 2 + module_len + 2);
  if (p == NULL)
    return false;
  *p++ = '\t';
  p = hex_pad16_at (p, f->pc);
  *p++ = ' ';
  p = str_at (p, symbol, symbol_len);
  if (f->symbol != NULL && f->inlined)
    p = LIT_AT (p, " (inlined)");
  else if (f->symbol != NULL)
    {
      p = LIT_AT (p, "+0x");
      p = hex_at (p, f->offset);
    }
  p = LIT_AT (p, " (");
  p = str_at (p, module, module_len);
  p = LIT_AT (p, ")\n");
  st_strbuf_end_at (b, p);
  return true;
}

static int
text_format (const struct st_callchain *c, struct st_strbuf *b)
{
  const struct st_sample *smp = c->sample;
  /* COMM PID/TID SECONDS.NANOSECONDS cpu CPU:  */
  const char *comm = c->comm ? c->comm : "[unknown]";
  size_t comm_len = strlen (comm);
  /* comm, " -PID/-TID " (11 characters each), SECONDS (20 digits), ".",
     9 digits, " cpu ", CPU (10 digits) */
  char *p = room (b, comm_len + 2 * 12 + 20 + 1 + 9 + 5 + 10);
  if (p == NULL)
    return -ENOMEM;
  p = str_at (p, comm, comm_len);
  *p++ = ' ';
  p = signed_at (p, smp->pid);
  *p++ = '/';
  p = signed_at (p, smp->tid);
  *p++ = ' ';
  p = dec_at (p, smp->time / 1000000000, 0);
  *p++ = '.';
  p = dec_at (p, smp->time % 1000000000, 9);
  p = LIT_AT (p, " cpu ");
  p = dec_at (p, smp->cpu, 0);
  st_strbuf_end_at (b, p);
  if (c->container != NULL)
    {
      /* Host processes' lines stay as perf script writes them.  */
      st_strbuf_put_str (b, " container ");
      st_strbuf_put_str (b, c->container->kind);
      st_strbuf_put_char (b, ':');
      st_strbuf_put_str (b, c->container->name);
      st_strbuf_put_str (b, " id ");
      st_strbuf_put_str (b, c->container->id);
    }
  st_strbuf_put_str (b, ":\n");
  /* One line per frame: PC SYMBOL+0xOFFSET (MODULE)  */
  for (size_t i = 0; i < c->n_frames; i++)
    if (!put_frame (b, &c->frames[i]))
      return -ENOMEM;
  if (c->stop != ST_STOP_END)
    {
      st_strbuf_put_str (b, "\t                 (unwind stopped: ");
      st_strbuf_put_str (b, st_stop_reason_name (c->stop));
      if (c->stop_detail != NULL && c->stop == ST_STOP_UNWIND_ERROR)
        {
          st_strbuf_put_str (b, ": ");
          st_strbuf_put_str (b, c->stop_detail);
        }
      st_strbuf_put_str (b, ")\n");
    }
  st_strbuf_put_char (b, '\n');
  return st_strbuf_failed (b) ? -ENOMEM : 0;
}

ST_DEFINE_LINE_SINK (st_sink_text, "text", "one block per sample, like perf script", text_format);
