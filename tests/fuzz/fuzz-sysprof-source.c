/* Fuzz target: the Sysprof capture reader (src/core/input/source-sysprof.c) and
 * everything its frames reach: the session, the unwinder on stack-user
 * frames, and the writers, the Sysprof one included (it copies the frames
 * it does not know byte for byte).
 *
 * The first four bytes are always the capture magic, so that every mutation
 * reaches the Sysprof reader rather than the perf one (fuzz-perf-source
 * covers that): a corpus of real captures needs no prefix of ours.  Half of
 * the inputs (by size) go through a pipe, as Sysprof hands its stream to
 * `eu-stacktrace --container auto` in a pipeline; the others through a
 * mapped memfd, as a capture file.
 *
 * A stream without MAP frames for a pid makes the reader look at
 * /proc/PID/maps of the live process with that pid, only when it started
 * before the capture's time (see source-sysprof.h): fuzzed pids and times
 * may reach real processes of this machine, read-only.
 *
 * Corpus: tests/fuzz/corpus/sysprof-source/ (captures written by
 * `eu-stacktrace -f sysprof`, directly and from perf.data; synth-aarch64-*:
 * six aarch64 stops as an aarch64 machine's sink writes them, 33 registers
 * a frame, from tests/arch/arch-check.py; and every input that once
 * crashed the reader).  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz-source.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const sinks[] = { "sysprof", "text", "folded", "json" };
  static const uint8_t magic[4] = { 0x5e, 0x97, 0xca, 0xfd };  /* 0xFDCA975E LE */
  if (size < sizeof magic)
    return 0;
  uint8_t *copy = malloc (size);
  if (copy == NULL)
    abort ();
  memcpy (copy, data, size);
  memcpy (copy, magic, sizeof magic);
  fuzz_source_run (copy, size, (size / 4) % 2 == 1, sinks[size % 4]);
  free (copy);
  return 0;
}
