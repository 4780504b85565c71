/* -f text: one block per sample, in the shape of `perf script`, so that
 * people and tools used to perf's output read it without surprise.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/output/sink-lines.h"
#include "basic/strbuf.h"

/* Text is this tool's hot output path: each sample is formatted by hand
   into one buffer and written with one fwrite, without printf's parsing
   (printf was the largest single cost of the whole run).  */
/* V in hex at P, right-aligned in WIDTH columns; returns the end.  Two
   digits a step: a frame line has two numbers, most of them 12 digits.  */
static char *
hex_at (char *p, uint64_t v, int width)
{
  static const char pairs[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  int n = v == 0 ? 1 : (64 - __builtin_clzll (v) + 3) / 4;
  for (; width > n; width--)
    *p++ = ' ';
  char *end = p + n;
  char *q = end;
  for (; q - p >= 2; v >>= 8)
    {
      q -= 2;
      memcpy (q, &pairs[2 * (v & 0xff)], 2);
    }
  if (q > p)
    *p = pairs[2 * (v & 0xf) + 1];
  return end;
}

static char *
str_at (char *p, const char *s, size_t len)
{
  memcpy (p, s, len);
  return p + len;
}

#define LIT_AT(p, lit) str_at (p, lit, sizeof lit - 1)

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
  char *p = st_strbuf_room (b, 1 + 16 + 1 + symbol_len + 3 + 16 + 2 + module_len + 2);
  if (p == NULL)
    return false;
  *p++ = '\t';
  p = hex_at (p, f->pc, 16);
  *p++ = ' ';
  p = str_at (p, symbol, symbol_len);
  if (f->symbol != NULL && f->inlined)
    p = LIT_AT (p, " (inlined)");
  else if (f->symbol != NULL)
    {
      p = LIT_AT (p, "+0x");
      p = hex_at (p, f->offset, 0);
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
  st_strbuf_put_str (b, c->comm ? c->comm : "[unknown]");
  st_strbuf_put_char (b, ' ');
  st_strbuf_put_signed (b, smp->pid);
  st_strbuf_put_char (b, '/');
  st_strbuf_put_signed (b, smp->tid);
  st_strbuf_put_char (b, ' ');
  st_strbuf_put_dec (b, smp->time / 1000000000, 0);
  st_strbuf_put_char (b, '.');
  st_strbuf_put_dec (b, smp->time % 1000000000, 9);
  st_strbuf_put_str (b, " cpu ");
  st_strbuf_put_dec (b, smp->cpu, 0);
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
