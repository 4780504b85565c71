/* -f json: JSON Lines, one object per sample, so that a stream of any
 * length can be processed line by line (jq -c, pandas.read_json(lines=True)).  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/output/sink-lines.h"
#include "basic/strbuf.h"

/* 64-bit addresses as hex strings: JSON numbers lose them in JavaScript.  */
static json_object *
hex (uint64_t v)
{
  char buf[24];
  snprintf (buf, sizeof buf, "0x%" PRIx64, v);
  return json_object_new_string (buf);
}

static json_object *
string_or_null (const char *s)
{
  return s != NULL ? json_object_new_string (s) : NULL;
}

static int
json_format (const struct st_callchain *c, struct st_strbuf *b)
{
  const struct st_sample *smp = c->sample;
  json_object *obj = json_object_new_object ();
  json_object_object_add (obj, "comm", string_or_null (c->comm));
  json_object_object_add (obj, "pid", json_object_new_int (smp->pid));
  json_object_object_add (obj, "tid", json_object_new_int (smp->tid));
  json_object_object_add (obj, "time", json_object_new_uint64 (smp->time));
  json_object_object_add (obj, "cpu", json_object_new_int64 (smp->cpu));
  if (c->container != NULL)
    {
      json_object *ct = json_object_new_object ();
      json_object_object_add (ct, "kind", string_or_null (c->container->kind));
      json_object_object_add (ct, "name", string_or_null (c->container->name));
      json_object_object_add (ct, "id", string_or_null (c->container->id));
      json_object_object_add (obj, "container", ct);
    }
  json_object *frames = json_object_new_array_ext (c->n_frames);
  for (size_t i = 0; i < c->n_frames; i++)
    {
      const struct st_frame *f = &c->frames[i];
      json_object *fo = json_object_new_object ();
      json_object_object_add (fo, "address", hex (f->pc));
      json_object_object_add (fo, "elf_address", f->has_elf_address ? hex (f->elf_address) : NULL);
      json_object_object_add (fo, "symbol", string_or_null (f->symbol));
      /* The name in the symbol table, before demangling.  */
      json_object_object_add (fo, "raw_symbol",
                              string_or_null (f->symbol ? (f->raw_symbol ? f->raw_symbol
                                                                         : f->symbol)
                                                        : NULL));
      json_object_object_add (fo, "offset", f->symbol && !f->inlined
                                              ? json_object_new_uint64 (f->offset) : NULL);
      json_object_object_add (fo, "module", string_or_null (f->module));
      json_object_object_add (fo, "build_id", string_or_null (f->build_id));
      if (f->inlined)
        json_object_object_add (fo, "inlined", json_object_new_boolean (1));
      json_object_array_add (frames, fo);
    }
  json_object_object_add (obj, "frames", frames);
  json_object_object_add (obj, "stop", json_object_new_string (st_stop_reason_name (c->stop)));
  if (c->stop_detail != NULL && c->stop != ST_STOP_END)
    json_object_object_add (obj, "stop_detail", json_object_new_string (c->stop_detail));
  st_strbuf_put_str (b, json_object_to_json_string_ext (obj, JSON_C_TO_STRING_PLAIN));
  st_strbuf_put_char (b, '\n');
  json_object_put (obj);
  return st_strbuf_failed (b) ? -ENOMEM : 0;
}

ST_DEFINE_LINE_SINK (st_sink_json, "json", "JSON Lines, one object per sample", json_format);
