/* Fuzz target: the JIT symbol map parsers (src/core/resolve/jit-map.c):
 * perf's text maps (/tmp/perf-PID.map, st_perf_map_parse) and jitdump files
 * (jit-PID.dump, st_jitdump_parse).  Any process writes these, in its own
 * /tmp, and root's profiler reads them: a line of megabytes, numbers of 17
 * digits, records whose sizes lie, names without their NUL.
 *
 * An input that starts with the jitdump magic ("DTiJ") is a jitdump, any
 * other a perf map; both are also parsed in two pieces split at the
 * input's last byte's value (as a file read while it grows), which must
 * give the same ranges as one piece.  Checks: what is consumed lies inside
 * the input, every range is non-empty and does not wrap, every name is a
 * non-empty string of at most ST_JIT_NAME_MAX bytes.
 *
 * Corpus: tests/fuzz/corpus/jit-map/ (the head of a map node 20 wrote with
 * --perf-basic-prof, the head of a jitdump of node --perf-prof).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/resolve/jit-map.h"
#include "fuzz.h"

struct tally {
  uint64_t n, sum;
};

static int
check_range (uint64_t start, uint64_t size, const char *name, void *arg)
{
  struct tally *t = arg;
  size_t len = strlen (name);
  if (size == 0 || start + size < start || len == 0 || len > ST_JIT_NAME_MAX)
    {
      fprintf (stderr, "bad range %#llx+%#llx `%s'\n", (unsigned long long) start,
               (unsigned long long) size, name);
      abort ();
    }
  if (fuzz_verbose >= 2)
    fprintf (stderr, "%llx %llx %s\n", (unsigned long long) start, (unsigned long long) size,
             name);
  t->n++;
  t->sum += start ^ size ^ len;
  return 0;
}

static int
check_load (uint64_t start, uint64_t size, uint64_t code_index, const char *name, void *arg)
{
  (void) code_index;
  return check_range (start, size, name, arg);
}

static int
check_move (uint64_t code_index, uint64_t old_addr, uint64_t new_addr, uint64_t size,
            void *arg)
{
  struct tally *t = arg;
  if (size == 0 || new_addr + size < new_addr)
    {
      fprintf (stderr, "bad move %#llx+%#llx\n", (unsigned long long) new_addr,
               (unsigned long long) size);
      abort ();
    }
  t->n++;
  t->sum += code_index ^ old_addr ^ new_addr ^ size;
  return 0;
}

static const struct st_jitdump_fns check_fns = { .load = check_load, .move = check_move };

static long
parse (const uint8_t *data, size_t size, bool dump, struct tally *t)
{
  /* A copy of exactly SIZE bytes: ASan sees any read past it.  */
  uint8_t *copy = malloc (size ? size : 1);
  if (copy == NULL)
    abort ();
  memcpy (copy, data, size);
  struct st_why why = { 0 };
  long used = dump ? st_jitdump_parse (copy, size, &check_fns, t, &why)
                   : st_perf_map_parse ((const char *) copy, size, check_range, t);
  free (copy);
  if (used > (long) size)
    {
      fprintf (stderr, "consumed %ld of %zu bytes\n", used, size);
      abort ();
    }
  if (used < 0 && fuzz_verbose)
    fprintf (stderr, "refused: %s\n", why.text);
  return used;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  bool dump = size >= 4 && memcmp (data, "DTiJ", 4) == 0;
  struct tally whole = { 0 }, pieces = { 0 };
  long used = parse (data, size, dump, &whole);
  if (dump || size == 0)
    return 0;
  /* A perf map read in two reads, the second from where the first
     stopped, names the same ranges.  */
  size_t split = data[size - 1] % (size + 1);
  long first = parse (data, split, false, &pieces);
  long second = parse (data + first, size - (size_t) first, false, &pieces);
  if (first + second != used || pieces.n != whole.n || pieces.sum != whole.sum)
    {
      fprintf (stderr, "split at %zu: %ld+%ld bytes, %llu ranges; whole: %ld, %llu\n", split,
               first, second, (unsigned long long) pieces.n, used,
               (unsigned long long) whole.n);
      abort ();
    }
  return 0;
}
