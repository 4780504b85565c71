/* Fuzz target: a perf.data directory (perf record --threads), read by
 * src/core/input/perf-dir.c: its data.N files merged by time.
 *
 * An input packs the directory's files: one byte N (1 to 8 files are
 * used), N little-endian u32 sizes, then the files' bytes one after the
 * other; the first is "data" (the header), the next data.0, data.1 and so
 * on.  A size past the input's end is cut to what is there.
 * tests/fuzz/pack-perf-dir.py packs a real directory that way.  The files
 * are written to a fresh temporary directory, read as `eu-stacktrace -i
 * DIR` reads them (fuzz-source.h), and removed.
 *
 * Corpus: tests/fuzz/corpus/perf-dir/ (real `perf record --threads`
 * directories of the threads workload, plain and -z, packed).  */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz-source.h"

#define MAX_FILES 8

static void
write_file (const char *path, const uint8_t *data, size_t size)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      perror (path);
      abort ();
    }
  for (size_t done = 0; done < size;)
    {
      ssize_t n = write (fd, data + done, size - done);
      if (n <= 0)
        {
          perror (path);
          abort ();
        }
      done += n;
    }
  close (fd);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const sinks[] = { "text", "folded", "json" };
  if (size < 1)
    return 0;
  size_t n = data[0] % MAX_FILES + 1;
  size_t pos = 1;
  if (size < pos + 4 * n)
    return 0;
  uint32_t sizes[MAX_FILES];
  memcpy (sizes, data + pos, 4 * n);
  pos += 4 * n;

  char dir[] = "/tmp/fuzz-perf-dir.XXXXXX";
  if (mkdtemp (dir) == NULL)
    {
      perror ("mkdtemp");
      abort ();
    }
  char path[sizeof dir + 16];
  for (size_t i = 0; i < n; i++)
    {
      size_t len = sizes[i] < size - pos ? sizes[i] : size - pos;
      if (i == 0)
        snprintf (path, sizeof path, "%s/data", dir);
      else
        snprintf (path, sizeof path, "%s/data.%zu", dir, i - 1);
      write_file (path, data + pos, len);
      pos += len;
    }
  snprintf (path, sizeof path, "%s/data", dir);
  fuzz_source_run_file (path, sinks[size % 3]);
  for (size_t i = 0; i < n; i++)
    {
      if (i == 0)
        snprintf (path, sizeof path, "%s/data", dir);
      else
        snprintf (path, sizeof path, "%s/data.%zu", dir, i - 1);
      unlink (path);
    }
  rmdir (dir);
  return 0;
}
