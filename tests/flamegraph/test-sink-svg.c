/* -f svg on synthetic call chains: a million samples with a long tail of
   distinct stacks still make a small file with every sample under the
   root; the size budget merges more when --minwidth would not; names from
   files anyone can write stay well-formed XML.  */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/output/sink.h"

static char names[5000][48];

/* Writes N samples of a program whose time goes to 200 hot paths (95%)
   and to a tail of distinct random paths, 10 to 39 frames deep, as -f svg
   with MIN_WIDTH; returns the file (free it) and its size.  */
static char *
million (long n, double min_width, size_t *size)
{
  char *buf = NULL;
  FILE *out = open_memstream (&buf, size);
  struct st_sink_options o = { .width = 1200, .min_width = min_width };
  struct st_sink *s = st_sink_svg.new (out, &o);
  assert_non_null (s);
  for (int i = 0; i < 5000; i++)
    snprintf (names[i], sizeof names[i], "function_number_%d_of_the_program", i);
  struct st_frame frames[40];
  struct st_sample smp = { .pid = 1, .tid = 1, .period = 1000000 };
  srand (1);
  for (long k = 0; k < n; k++)
    {
      int depth = 10 + rand () % 30;
      unsigned seed = (unsigned) (rand () % 20 == 0 ? rand () : rand () % 200);
      for (int d = 0; d < depth; d++)
        {
          seed = seed * 1103515245 + 12345;
          int f = (seed >> 8) % (d < 3 ? 5 : 5000);
          frames[depth - 1 - d] = (struct st_frame) {
            .pc = 0x400000 + f * 64 + d, .symbol = names[f], .module = "/usr/bin/prog",
            .has_elf_address = true, .elf_address = f * 64 + d,
          };
        }
      struct st_callchain c = { .sample = &smp, .comm = "prog", .frames = frames,
                                .n_frames = depth };
      assert_int_equal (st_sink_svg.sample (s, &c), 0);
    }
  assert_int_equal (st_sink_svg.finish (s), 0);
  st_sink_svg.free (s);
  fclose (out);
  return buf;
}

static void
test_a_million_samples_make_a_small_file (void **state)
{
  size_t size;
  char *svg = million (1000000, 0.1, &size);
  assert_true (size < 2000000);
  /* The root holds every sample.  */
  assert_non_null (strstr (svg, "data-x=\"0\" data-s=\"1000000\" data-d=\"0\"><title>all\n"));
  assert_non_null (strstr (svg, "small frames]"));
  assert_null (strstr (svg, "Frames under"));
  free (svg);
}

static void
test_the_size_budget_merges_more (void **state)
{
  size_t size;
  char *svg = million (300000, 0.0001, &size);
  assert_true (size < 2000000);
  assert_non_null (strstr (svg, "Frames under "));
  assert_non_null (strstr (svg, "data-x=\"0\" data-s=\"300000\" data-d=\"0\"><title>all\n"));
  free (svg);
}

/* Whether BUF holds only valid UTF-8 and no control characters but
   newlines (what an XML parser takes).  */
static bool
clean_utf8 (const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n;)
    {
      unsigned char c = p[i];
      size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      if (len == 0 || i + len > n || (c < 0x20 && c != '\n' && c != '\t'))
        return false;
      for (size_t k = 1; k < len; k++)
        if ((p[i + k] & 0xc0) != 0x80)
          return false;
      i += len;
    }
  return true;
}

static void
test_names_are_escaped (void **state)
{
  char *buf = NULL;
  size_t size;
  FILE *out = open_memstream (&buf, &size);
  struct st_sink_options o = { .width = 1200, .min_width = 0, .title = "a <title> & \"more\"" };
  struct st_sink *s = st_sink_svg.new (out, &o);
  struct st_frame frames[3] = {
    { .symbol = "operator<< <std::string&>", .module = "/usr/lib/libx.so" },
    { .symbol = "bad\xff\xfe utf8\x01\x1b[31m", .module = "/usr/bin/p]]>q" },
    { .symbol = "ünïcödé_ok", .module = "/usr/bin/p]]>q" },
  };
  struct st_sample smp = { .pid = 1, .tid = 1 };
  struct st_callchain c = { .sample = &smp, .comm = "p<&>", .frames = frames, .n_frames = 3 };
  assert_int_equal (st_sink_svg.sample (s, &c), 0);
  assert_int_equal (st_sink_svg.finish (s), 0);
  st_sink_svg.free (s);
  fclose (out);
  assert_true (clean_utf8 ((const unsigned char *) buf, size));
  assert_non_null (strstr (buf, "operator&lt;&lt; &lt;std::string&amp;&gt;"));
  assert_non_null (strstr (buf, "bad?? utf8??[31m"));
  assert_non_null (strstr (buf, "ünïcödé_ok"));
  assert_non_null (strstr (buf, "a &lt;title&gt; &amp; &quot;more&quot;"));
  assert_non_null (strstr (buf, "<title>p&lt;&amp;&gt;\n"));
  /* "]]>" is harmless in character data, but must not end the script.  */
  assert_non_null (strstr (buf, "/usr/bin/p]]&gt;q"));
  free (buf);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_a_million_samples_make_a_small_file),
    cmocka_unit_test (test_the_size_budget_merges_more),
    cmocka_unit_test (test_names_are_escaped),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
