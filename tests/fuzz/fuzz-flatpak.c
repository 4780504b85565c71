/* Fuzz target: what src/container/flatpak.c parses of files a sandboxed
 * app or its user writes: the /.flatpak-info keyfile (read inside the
 * sandbox, or as an instance directory's "info"), bwrapinfo.json, and the
 * app id in an app-flatpak-ID-N.scope line of /proc/PID/cgroup.
 *
 * Every input goes through all three parsers (each is cheap, and a seed of
 * one kind is a fine mutation source for the others).  The keyfile is read
 * twice: as /.flatpak-info, and as an instance's info checked against the
 * app id the same input gives as a cgroup (or a fixed one), so that the
 * agree/disagree path runs too.  An app-path or runtime-path that names a
 * real deployment on this host is opened read-only (O_PATH), as
 * flatpak.c would.
 *
 * Corpus: tests/fuzz/corpus/flatpak/ (.flatpak-info and bwrapinfo.json of
 * real sandboxes started by flatpak 1.14 on Debian 12, and the cgroup file
 * of a sandboxed process).  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "container/flatpak-parse.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_init ();
  char *text = fuzz_strndup (data, size);

  char app[256];
  bool have_app = st_flatpak_app_from_cgroup_text (text, app, sizeof app);
  if (fuzz_verbose)
    fprintf (stderr, "cgroup app: %s\n", have_app ? app : "(none)");

  long long mnt_ns, child;
  st_flatpak_parse_bwrapinfo (text, &mnt_ns, &child);
  if (fuzz_verbose)
    fprintf (stderr, "bwrapinfo: mnt-namespace %lld child-pid %lld\n", mnt_ns, child);

  struct st_container *c = st_flatpak_from_info_text (text, NULL, NULL);
  if (fuzz_verbose)
    fprintf (stderr, "info: %s (%zu dirs)\n", c ? c->name : "(none)", c ? c->n_dirs : 0);
  st_container_free (c);
  c = st_flatpak_from_info_text (text, "1234567890", have_app ? app : "org.example.App");
  st_container_free (c);

  free (text);
  return 0;
}
