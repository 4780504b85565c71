/* Fuzz target: podman's storage files as src/container/podman.c reads
 * them (containers.json, layers.json, images.json and their volatile-
 * twins), which a rootless user writes and root's profiler reads.
 *
 * An input holds up to five files' contents separated by NUL bytes (no
 * JSON text has one), in the order of enum st_podman_storage_file:
 * containers, layers, volatile-containers, volatile-layers, images.  A
 * part that is empty or missing is a missing file.  The storage is then
 * walked as st_podman_foreach_stored walks it: every container and image,
 * its top layer and the chain of parents, the id-mapped layers.  Layer
 * directories are looked for beneath an empty directory, so every open
 * fails (ENOENT) after the id checks: the fuzzing is of the parsing and
 * the walk, never of this host's storage.  The driver (overlay or vfs) is
 * picked by the input's size.
 *
 * Corpus: tests/fuzz/corpus/podman-storage/ (the JSON files of real rootful
 * and rootless podman storages on Debian 12, alone and joined by NULs).  */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/podman-storage.h"
#include "fuzz.h"

static char empty_dir[] = "/tmp/fuzz-podman-storage.XXXXXX";
static int graph_fd = -1;

static void
remove_empty_dir (void)
{
  rmdir (empty_dir);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  if (graph_fd < 0)
    {
      if (mkdtemp (empty_dir) == NULL
          || (graph_fd = open (empty_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        {
          perror (empty_dir);
          abort ();
        }
      atexit (remove_empty_dir);
    }
  char *text = fuzz_strndup (data, size);
  const char *texts[ST_PODMAN_STORAGE_N] = { NULL };
  const char *p = text, *end = text + size;
  for (int i = 0; i < ST_PODMAN_STORAGE_N && p <= end; i++)
    {
      if (*p != '\0')
        texts[i] = p;
      p += strlen (p) + 1;
    }
  struct st_container **cache = NULL;
  size_t n = 0;
  int r = st_podman_storage_collect (graph_fd, size % 2 ? "vfs" : "overlay", texts, &cache, &n);
  if (fuzz_verbose)
    fprintf (stderr, "%s: %zu containers and images\n", r < 0 ? "no layers" : "storage", n);
  for (size_t i = 0; i < n; i++)
    {
      /* What the rest of the tool reads of each: its label.  */
      if (fuzz_verbose >= 2)
        fprintf (stderr, "  %s %s (%zu dirs)\n", cache[i]->name ? cache[i]->name : "-",
                 cache[i]->id ? cache[i]->id : "-", cache[i]->n_dirs);
      st_container_free (cache[i]);
    }
  free (cache);
  free (text);
  return 0;
}
