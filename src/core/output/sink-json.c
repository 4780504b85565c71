/* -f json: JSON Lines, one object per sample, so that a stream of any
 * length can be processed line by line (jq -c, pandas.read_json(lines=True)).
 *
 * Written directly, byte for byte as json-c 0.16 writes the same objects
 * (json_object_to_json_string_ext with JSON_C_TO_STRING_PLAIN: no spaces,
 * members in the order added, "/" escaped), which is what this sink did
 * until building a json-c object per frame turned out to cost 8 times the
 * text format's time (bench/README).  tests/unit/test-sink-json.c checks
 * the bytes against json-c's on every kind of string.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/output/sink-lines.h"
#include "basic/strbuf.h"

/* A literal piece of the output (a member's name, with its quotes, colon
   and the comma before it): no escaping to look for.  */
#define PUT(b, lit) st_strbuf_put ((b), (lit), sizeof (lit) - 1)

/* S as a JSON string, escaped as json-c escapes it: the two-character
   escapes for \b \n \r \t \f " \ and /, \u00xx (lower-case hex) for the
   other control characters, every other byte as it is (invalid UTF-8
   too).  NULL: null.  */
static void
put_string (struct st_strbuf *b, const char *s)
{
  static const char hex[] = "0123456789abcdef";
  if (s == NULL)
    {
      PUT (b, "null");
      return;
    }
  st_strbuf_put_char (b, '"');
  const char *run = s;
  for (const char *p = s; *p != '\0'; p++)
    {
      unsigned char c = (unsigned char) *p;
      char esc[6] = { '\\', 0 };
      size_t n = 2;
      switch (c)
        {
        case '\b': esc[1] = 'b'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\f': esc[1] = 'f'; break;
        case '"': case '\\': case '/': esc[1] = (char) c; break;
        default:
          if (c >= 0x20)
            continue;
          memcpy (esc + 1, "u00", 3);
          esc[4] = hex[c >> 4];
          esc[5] = hex[c & 15];
          n = 6;
        }
      st_strbuf_put (b, run, (size_t) (p - run));
      st_strbuf_put (b, esc, n);
      run = p + 1;
    }
  st_strbuf_put_str (b, run);
  st_strbuf_put_char (b, '"');
}

/* 64-bit addresses as hex strings: JSON numbers lose them in JavaScript.  */
static void
put_address (struct st_strbuf *b, uint64_t v)
{
  PUT (b, "\"0x");
  st_strbuf_put_hex (b, v, 0);
  st_strbuf_put_char (b, '"');
}

static void
put_frame (struct st_strbuf *b, const struct st_frame *f)
{
  PUT (b, "{\"address\":");
  put_address (b, f->pc);
  PUT (b, ",\"elf_address\":");
  if (f->has_elf_address)
    put_address (b, f->elf_address);
  else
    PUT (b, "null");
  PUT (b, ",\"symbol\":");
  put_string (b, f->symbol);
  /* The name in the symbol table, before demangling.  */
  PUT (b, ",\"raw_symbol\":");
  put_string (b, f->symbol ? (f->raw_symbol ? f->raw_symbol : f->symbol) : NULL);
  PUT (b, ",\"offset\":");
  if (f->symbol && !f->inlined)
    st_strbuf_put_dec (b, f->offset, 0);
  else
    PUT (b, "null");
  PUT (b, ",\"module\":");
  put_string (b, f->module);
  PUT (b, ",\"build_id\":");
  put_string (b, f->build_id);
  if (f->inlined)
    PUT (b, ",\"inlined\":true");
  st_strbuf_put_char (b, '}');
}

static int
json_format (const struct st_callchain *c, struct st_strbuf *b)
{
  const struct st_sample *smp = c->sample;
  PUT (b, "{\"comm\":");
  put_string (b, c->comm);
  PUT (b, ",\"pid\":");
  st_strbuf_put_signed (b, smp->pid);
  PUT (b, ",\"tid\":");
  st_strbuf_put_signed (b, smp->tid);
  PUT (b, ",\"time\":");
  st_strbuf_put_dec (b, smp->time, 0);
  PUT (b, ",\"cpu\":");
  st_strbuf_put_dec (b, smp->cpu, 0);
  if (c->container != NULL)
    {
      PUT (b, ",\"container\":");
      PUT (b, "{\"kind\":");
      put_string (b, c->container->kind);
      PUT (b, ",\"name\":");
      put_string (b, c->container->name);
      PUT (b, ",\"id\":");
      put_string (b, c->container->id);
      st_strbuf_put_char (b, '}');
    }
  PUT (b, ",\"frames\":[");
  for (size_t i = 0; i < c->n_frames; i++)
    {
      if (i > 0)
        st_strbuf_put_char (b, ',');
      put_frame (b, &c->frames[i]);
    }
  PUT (b, "],\"stop\":");
  put_string (b, st_stop_reason_name (c->stop));
  if (c->stop_detail != NULL && c->stop != ST_STOP_END)
    {
      PUT (b, ",\"stop_detail\":");
      put_string (b, c->stop_detail);
    }
  PUT (b, "}\n");
  return st_strbuf_failed (b) ? -ENOMEM : 0;
}

ST_DEFINE_LINE_SINK (st_sink_json, "json", "JSON Lines, one object per sample", json_format);
