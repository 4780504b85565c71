/* Fuzz target: the perf.data reader and everything a sample reaches.
 *
 * Each input is read as eu-stacktrace reads a recording (fuzz-source.h):
 * pipe-mode streams go through a real pipe one time in two (by size), all
 * else through a mapped memfd, as a perf.data file would.  The sink is
 * picked from the input's size (text, folded, json) so that every writer
 * sees fuzzed names without spending input bytes on a choice.
 *
 * Corpus: tests/fuzz/corpus/perf-source/ (real `perf record` files in file
 * and pipe mode; synth-*-bigendian: three of them rewritten in the other
 * byte order by tests/arch/perf-byteswap.py and four s390x stops written
 * big-endian by tests/arch/arch-check.py, so that the swapping reader,
 * perf-swap.c, is fuzzed too; and every input that once crashed the
 * reader).  */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz-source.h"

/* A pipe-mode stream starts with a 16-byte header (size field 16).  */
static bool
is_pipe_header (const uint8_t *data, size_t size)
{
  uint64_t header_size;
  if (size < 16)
    return false;
  memcpy (&header_size, data + 8, sizeof header_size);
  return header_size == 16;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const sinks[] = { "text", "folded", "json" };
  fuzz_source_run (data, size, is_pipe_header (data, size) && (size / 3) % 2 == 1,
                   sinks[size % 3]);
  return 0;
}
