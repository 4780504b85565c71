/* Fuzz target: how src/container/podman.c finds a process's container id:
 * the libpod-<id> name in /proc/PID/cgroup (cgroup names below a user's
 * delegated subtree are the user's choice) and the id="..." line of
 * /run/.containerenv (written by whoever controls the container).  Both
 * run on every input.  What they accept must be an id: 64 lowercase hex
 * digits, so that it is safe in the paths podman.c builds from it.
 *
 * Corpus: tests/fuzz/corpus/podman-ids/ (the cgroup files of rootful and
 * rootless podman processes, a toolbox-like container's .containerenv, and
 * every input that once crashed a parser).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container/podman-storage.h"
#include "fuzz.h"

static void
check_id (const char *what, const char *id)
{
  size_t n = strlen (id);
  bool ok = n == 64;
  for (size_t i = 0; ok && i < n; i++)
    ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
  if (!ok)
    {
      fprintf (stderr, "%s gave `%s', not an id\n", what, id);
      abort ();
    }
  if (fuzz_verbose)
    fprintf (stderr, "%s: %s\n", what, id);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  char *text = fuzz_strndup (data, size);
  char id[65];
  if (st_podman_id_from_cgroup_text (text, id))
    check_id ("cgroup", id);
  if (st_podman_id_from_containerenv_text (text, id))
    check_id ("containerenv", id);
  free (text);
  return 0;
}
