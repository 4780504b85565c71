/* Fuzz target: the /proc/PID/maps line parser (st_proc_parse_maps_line in
 * src/basic/procfs.c), which the live source (source-live.c, maps of the
 * processes already running) and the Sysprof reader (source-sysprof.c,
 * maps of a pid the stream has none for) use.  The kernel writes every
 * field but the file name, which any process chooses: a name with spaces,
 * brackets, " (deleted)", 4095 bytes, bytes that are not UTF-8.
 *
 * Each input is a whole maps file, read line by line as getline gives
 * them (the last line may lack its newline); a line is parsed in a copy of
 * exactly its length plus the NUL.  What the parser accepts must hold what
 * its callers rely on: START below END, four permission characters, a name
 * without its newline, inside the line.
 *
 * Corpus: tests/fuzz/corpus/proc-maps/ (real maps of host processes, of a
 * podman container's process and of a flatpak sandbox's).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/procfs.h"
#include "fuzz.h"

static void
parse_line (const uint8_t *data, size_t len)
{
  char *line = fuzz_strndup (data, len);
  struct st_proc_map m;
  if (st_proc_parse_maps_line (line, &m))
    {
      if (m.start >= m.end || strlen (m.perms) != 4 || m.name < line || m.name > line + len
          || strchr (m.name, '\n') != NULL)
        {
          fprintf (stderr, "bad parse of maps line `%.*s'\n", (int) len, (const char *) data);
          abort ();
        }
      if (fuzz_verbose >= 2)
        fprintf (stderr, "%llx-%llx %s %llx %x:%x %llu `%s'\n", (unsigned long long) m.start,
                 (unsigned long long) m.end, m.perms, (unsigned long long) m.pgoff, m.maj, m.min,
                 (unsigned long long) m.inode, m.name);
    }
  else if (fuzz_verbose)
    fprintf (stderr, "not a maps line: `%.*s'\n", (int) len, (const char *) data);
  free (line);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  /* getline's lines: up to and with each newline.  A NUL inside a line
     ends it for sscanf, as it would for the readers.  */
  for (size_t at = 0; at < size;)
    {
      const uint8_t *nl = memchr (data + at, '\n', size - at);
      size_t len = nl ? (size_t) (nl - (data + at)) + 1 : size - at;
      parse_line (data + at, len);
      at += len;
    }
  return 0;
}
