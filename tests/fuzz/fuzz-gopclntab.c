/* Fuzz target: Go's function table, .gopclntab (st_gopclntab_parse in
 * src/core/resolve/gopclntab.c), read from every Go program without a
 * symbol table that a profiled process maps: a file its user chose.
 *
 * The input is the section's bytes; its text address is taken as 0x401000
 * (the header's own is used when not 0).  Checks: every function is a
 * non-empty range whose name is a string inside the input.
 *
 * Corpus: tests/fuzz/corpus/gopclntab/ (the whole .gopclntab of a Go 1.19
 * program, tests/workloads/gowork built with -ldflags=-s; and a small one
 * in Go 1.16's layout, made by hand).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/resolve/gopclntab.h"
#include "fuzz.h"

struct input {
  const uint8_t *data;
  size_t size;
};

static int
check_function (const char *name, uint64_t start, uint64_t end, void *arg)
{
  const struct input *in = arg;
  const uint8_t *p = (const uint8_t *) name;
  if (start >= end || p < in->data || p >= in->data + in->size
      || memchr (p, '\0', (size_t) (in->data + in->size - p)) == NULL)
    {
      fprintf (stderr, "bad function [%#llx, %#llx)\n", (unsigned long long) start,
               (unsigned long long) end);
      abort ();
    }
  if (fuzz_verbose >= 2)
    fprintf (stderr, "%llx-%llx %s\n", (unsigned long long) start, (unsigned long long) end,
             name);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  uint8_t *copy = malloc (size ? size : 1);
  if (copy == NULL)
    abort ();
  memcpy (copy, data, size);
  struct input in = { copy, size };
  struct st_why why = { 0 };
  int r = st_gopclntab_parse (copy, size, 0x401000, check_function, &in, &why);
  if (r < 0 && fuzz_verbose)
    fprintf (stderr, "refused: %s\n", why.text);
  free (copy);
  return 0;
}
