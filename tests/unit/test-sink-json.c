/* -f json is written directly (src/core/output/sink-json.c), byte for byte
 * as json-c writes the same object: this builds that object with json-c,
 * as the sink did before, for chains whose strings hold every byte from 1
 * to 255 (control characters, quotes, backslashes, slashes, invalid UTF-8),
 * empty and missing strings, inlined frames, a container (and one with no
 * fields), a stop detail with every stop reason, the extremes of every
 * number, and compares the bytes.  */
#include "config.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "basic/strbuf.h"
#include "container/label.h"
#include "core/output/sink.h"

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

/* What the sink wrote before, with json-c.  */
static char *
json_c_format (const struct st_callchain *c)
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
  char *s = NULL;
  if (asprintf (&s, "%s\n", json_object_to_json_string_ext (obj, JSON_C_TO_STRING_PLAIN)) < 0)
    s = NULL;
  json_object_put (obj);
  return s;
}

static void
assert_same_as_json_c (const struct st_callchain *c)
{
  struct st_strbuf b = { 0 };
  assert_int_equal (st_sink_json.format (c, &b), 0);
  char *want = json_c_format (c);
  assert_non_null (want);
  st_strbuf_put_char (&b, '\0');
  assert_string_equal (b.data, want);
  free (want);
  st_strbuf_free (&b);
}

static void
test_every_byte (void **state)
{
  (void) state;
  /* Every byte but NUL, in one string and one at a time.  */
  char all[256];
  for (int i = 1; i < 256; i++)
    all[i - 1] = (char) i;
  all[255] = '\0';
  struct st_sample smp = { .pid = 12, .tid = 13, .time = UINT64_MAX, .cpu = UINT32_MAX };
  struct st_frame frames[3] = {
    { .pc = 0x7fffffffffff, .has_elf_address = true, .elf_address = 0, .symbol = all,
      .raw_symbol = NULL, .offset = 0, .module = all, .build_id = "" },
    { .pc = 0, .symbol = NULL, .module = NULL, .build_id = NULL },
    { .pc = 1, .symbol = "f", .raw_symbol = "_Z1fv", .offset = 17, .module = "/a/b.so" },
  };
  struct st_callchain c = {
    .sample = &smp, .comm = all, .frames = frames, .n_frames = 3,
    .stop = ST_STOP_END, .stop_detail = "ignored at the end",
  };
  assert_same_as_json_c (&c);
  for (int i = 1; i < 256; i++)
    {
      char one[4] = { 'x', (char) i, 'y', '\0' };
      frames[0].symbol = one;
      c.comm = one;
      assert_same_as_json_c (&c);
    }
}

static void
test_container_inlined_detail_negative (void **state)
{
  (void) state;
  struct st_container_label ct = { .kind = "podman", .name = "a\"b/c", .id = NULL };
  struct st_sample smp = { .pid = -1, .tid = 0, .time = 0, .cpu = 0 };
  struct st_frame frames[2] = {
    { .pc = 0x401000, .symbol = "inl", .inlined = true, .module = "m" },
    { .pc = 0x401001, .symbol = "outer", .raw_symbol = "outer\n", .offset = 1 },
  };
  struct st_callchain c = {
    .sample = &smp, .comm = NULL, .container = &ct, .frames = frames, .n_frames = 2,
    .stop = ST_STOP_NO_MODULE, .stop_detail = "\\\t/",
  };
  assert_same_as_json_c (&c);
  c.n_frames = 0;
  c.stop_detail = NULL;
  assert_same_as_json_c (&c);
}

static void
test_extremes_and_every_stop (void **state)
{
  (void) state;
  struct st_container_label empty = { 0 };
  struct st_sample smp = { .pid = INT32_MIN, .tid = INT32_MAX, .time = 1, .cpu = 7 };
  struct st_frame frames[2] = {
    { .pc = UINT64_MAX, .has_elf_address = true, .elf_address = UINT64_MAX, .symbol = "",
      .raw_symbol = "", .offset = UINT64_MAX, .module = "", .build_id = "00" },
    { .pc = 0, .symbol = "g", .inlined = true, .offset = 5 },
  };
  struct st_callchain c = {
    .sample = &smp, .comm = "", .container = &empty, .frames = frames, .n_frames = 2,
    .stop_detail = "why\r",
  };
  for (int stop = 0; stop < ST_STOP_N; stop++)
    {
      c.stop = (enum st_stop_reason) stop;
      assert_same_as_json_c (&c);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_byte),
    cmocka_unit_test (test_container_inlined_detail_negative),
    cmocka_unit_test (test_extremes_and_every_stop),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
