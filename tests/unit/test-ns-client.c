/* The namespace helper's client against the real helper of this build
 * (spawned; map_files only): its cache of answers keeps the ones asked
 * for last, each with its descriptor, not one for every distinct path
 * ever asked.  Each request names a path never asked before for this
 * test's own program (map_files finds it by its range, whatever the path
 * says): the test process's descriptors stay bounded, the summary counts
 * the answers forgotten, and a forgotten path asked again is found again.
 * Root, as in CI (a user's helper has no map_files of other processes,
 * and this one is its own child's parent).  */
#include "config.h"

#include <dirent.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "core/resolve/elf-file.h"
#include "core/resolve/ns-client.h"

static int
count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  int n = 0;
  for (struct dirent *e; d != NULL && (e = readdir (d)) != NULL;)
    n += e->d_name[0] != '.';
  if (d != NULL)
    closedir (d);
  return n;
}

/* This program's first executable mapping.  */
static bool
own_text (uint64_t *start, uint64_t *end, uint64_t *pgoff)
{
  char exe[4096];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return false;
  exe[n] = '\0';
  FILE *f = fopen ("/proc/self/maps", "re");
  char line[8192];
  bool found = false;
  while (f != NULL && !found && fgets (line, sizeof line, f) != NULL)
    {
      char perms[8], path[4096] = "";
      unsigned long long s, e, off;
      if (sscanf (line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off, path) >= 4
          && perms[2] == 'x' && strcmp (path, exe) == 0)
        {
          *start = s;
          *end = e;
          *pgoff = off;
          found = true;
        }
    }
  if (f != NULL)
    fclose (f);
  return found;
}

static void
test_cache_keeps_the_answers_asked_last (void **state)
{
  (void) state;
  if (geteuid () != 0)
    fail_msg ("run as root: the spawned helper opens this process's map_files");
  const char *top = getenv ("TOP_BUILDDIR");
  char helper[4096];
  snprintf (helper, sizeof helper, "%s/eu-stacktrace-ns-helper", top != NULL ? top : ".");
  assert_int_equal (access (helper, X_OK), 0);
  setenv ("EU_STACKTRACE_NS_HELPER", helper, 1);
  setenv ("EU_STACKTRACE_NS_HELPER_WAYS", "map_files", 1);

  uint64_t start = 0, end = 0, pgoff = 0;
  assert_true (own_text (&start, &end, &pgoff));
  struct st_ns_client *c = NULL;
  assert_int_equal (st_ns_client_new ("spawn", &c), 0);
  assert_non_null (c);

  int before = count_fds ();
  enum { N = 3 * ST_NS_CACHE_KEPT };
  char path[64];
  int most = 0;
  for (int i = 0; i < N; i++)
    {
      snprintf (path, sizeof path, "/ns-client-test/path-%d", i);
      struct st_mapping_request req = {
        .pid = getpid (), .path = path, .start = start, .end = end, .pgoff = pgoff,
      };
      const char *way = NULL;
      struct st_why why = { 0 };
      int fd = st_ns_client_open (c, &req, &way, &why);
      if (fd < 0)
        fail_msg ("request %d: %s", i, why.text);
      assert_string_equal (way, "map_files");
      close (fd);
      int n = count_fds ();
      if (n > most)
        most = n;
    }
  print_message ("%d distinct paths: descriptors %d before, at most %d during, %d after\n", N,
                 before, most, count_fds ());
  /* The helper's socket, and at most two sweeps' worth of answers.  */
  assert_true (most - before <= 1 + 2 * ST_NS_CACHE_KEPT);

  /* Forgotten long ago: asked of the helper again, and found.  */
  snprintf (path, sizeof path, "/ns-client-test/path-0");
  struct st_mapping_request req = {
    .pid = getpid (), .path = path, .start = start, .end = end, .pgoff = pgoff,
  };
  const char *way = NULL;
  struct st_why why = { 0 };
  int fd = st_ns_client_open (c, &req, &way, &why);
  assert_true (fd >= 0);
  close (fd);

  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  st_ns_client_print_summary (c, out);
  fclose (out);
  print_message ("%s", text);
  /* Every path asked of the helper, the forgotten one twice.  */
  unsigned long requests = 0, found = 0, forgotten = 0;
  assert_int_equal (sscanf (text, "namespace helper: %lu requests, %lu found", &requests, &found),
                    2);
  assert_int_equal (requests, N + 1);
  assert_int_equal (found, N + 1);
  const char *f = strstr (text, "answers forgotten: ");
  assert_non_null (f);
  assert_int_equal (sscanf (f, "answers forgotten: %lu", &forgotten), 1);
  assert_true (forgotten >= N - 2 * ST_NS_CACHE_KEPT);
  free (text);
  st_ns_client_free (c);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_cache_keeps_the_answers_asked_last),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
