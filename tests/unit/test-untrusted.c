#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "container/container.h"
#include "basic/untrusted.h"

static char dir[] = "/tmp/test-untrusted.XXXXXX";

static void
path_in (char *out, size_t size, const char *name)
{
  snprintf (out, size, "%s/%s", dir, name);
}

/* A FIFO with no writer would block open(2) for good: refused at once.  */
static void
test_fifo_device_proc_refused (void **state)
{
  char p[256];
  path_in (p, sizeof p, "fifo");
  assert_int_equal (mkfifo (p, 0600), 0);
  unsigned before = st_untrusted_refused_count ();
  assert_int_equal (st_open_untrusted (AT_FDCWD, p, 0, NULL), -EINVAL);
  assert_int_equal (st_untrusted_refused_count (), before + 1);
  /* Said once.  */
  assert_int_equal (st_open_untrusted (AT_FDCWD, p, 0, NULL), -EINVAL);
  assert_int_equal (st_untrusted_refused_count (), before + 1);
  assert_int_equal (st_open_untrusted (AT_FDCWD, "/dev/null", 0, NULL), -EINVAL);
  /* /proc files are S_ISREG, and some block on read.  */
  assert_int_equal (st_open_untrusted (AT_FDCWD, "/proc/self/status", 0, NULL), -ENODEV);
  assert_int_equal (st_open_untrusted (AT_FDCWD, p, ST_UNTRUSTED_QUIET, NULL), -EINVAL);
  assert_int_equal (st_open_untrusted (AT_FDCWD, "/nonexistent/x", 0, NULL), -ENOENT);
}

static void
test_regular_file_bounded_read (void **state)
{
  char p[256];
  path_in (p, sizeof p, "data");
  FILE *f = fopen (p, "w");
  assert_non_null (f);
  fputs ("0123456789", f);
  fclose (f);
  struct stat st;
  int fd = st_open_untrusted (AT_FDCWD, p, ST_UNTRUSTED_NOFOLLOW, &st);
  assert_true (fd >= 0);
  assert_int_equal (st.st_size, 10);
  assert_true (fcntl (fd, F_GETFL) & O_NONBLOCK);
  char *text;
  size_t len;
  assert_int_equal (st_read_untrusted (fd, 9, &text, &len), -EFBIG);
  assert_null (text);
  assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
  assert_int_equal (st_read_untrusted (fd, 10, &text, &len), 0);
  assert_int_equal (len, 10);
  assert_string_equal (text, "0123456789");
  free (text);
  close (fd);
  /* A symlink, when the caller said no: O_PATH|O_NOFOLLOW holds the link itself.  */
  char l[256];
  path_in (l, sizeof l, "link");
  assert_int_equal (symlink (p, l), 0);
  assert_int_equal (st_open_untrusted (AT_FDCWD, l, ST_UNTRUSTED_NOFOLLOW, NULL), -EINVAL);
}

/* The look before an open: false only where the open would say ENOENT,
   resolving the same way (inside a root, an absolute symlink stays in it). */
static void
test_may_exist_agrees_with_open (void **state)
{
  char p[256], root[256];
  path_in (root, sizeof root, "root");
  assert_int_equal (mkdir (root, 0700), 0);
  int rfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true (rfd >= 0);
  assert_int_equal (mkdirat (rfd, "var", 0700), 0);
  assert_int_equal (symlinkat ("/var", rfd, "tmp"), 0);
  int fd = openat (rfd, "var/perf-1.map", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  assert_true (fd >= 0);
  close (fd);
  assert_true (st_untrusted_may_exist (rfd, "/tmp/perf-1.map", ST_UNTRUSTED_IN_ROOT));
  fd = st_open_untrusted (rfd, "/tmp/perf-1.map", ST_UNTRUSTED_IN_ROOT, NULL);
  assert_true (fd >= 0);
  close (fd);
  assert_false (st_untrusted_may_exist (rfd, "/tmp/perf-2.map", ST_UNTRUSTED_IN_ROOT));
  assert_int_equal (st_open_untrusted (rfd, "/tmp/perf-2.map", ST_UNTRUSTED_IN_ROOT, NULL),
                    -ENOENT);
  /* Not a regular file: there, so the open is what refuses it.  */
  path_in (p, sizeof p, "fifo2");
  assert_int_equal (mkfifo (p, 0600), 0);
  assert_true (st_untrusted_may_exist (AT_FDCWD, p, ST_UNTRUSTED_NOFOLLOW));
  assert_false (st_untrusted_may_exist (AT_FDCWD, "/nonexistent/x", ST_UNTRUSTED_NOFOLLOW));
  close (rfd);
}

static void
test_json_prescan (void **state)
{
  const char *ok = "[{\"id\":\"a,b:[{\",\"names\":[\"x\"]}]";
  assert_int_equal (st_json_prescan (ok, strlen (ok), 10, 4), 0);
  assert_int_equal (st_json_prescan (ok, strlen (ok), 3, 4), -E2BIG);
  assert_int_equal (st_json_prescan (ok, strlen (ok), 10, 2), -ELOOP);
  const char *escaped = "[\"\\\"[[[[\"]";
  assert_int_equal (st_json_prescan (escaped, strlen (escaped), 10, 1), 0);
  size_t n = 1 << 20;
  char *ones = malloc (n);
  for (size_t i = 0; i < n; i++)
    ones[i] = i == 0 ? '[' : i == n - 1 ? ']' : i % 2 ? '1' : ',';
  assert_int_equal (st_json_prescan (ones, n, 200000, 32), -E2BIG);
  free (ones);
}

/* Storage JSON: parsed once per file version, refused unread over the
   cap, a user's budget charged once per version.  */
static void
test_storage_json (void **state)
{
  char p[256];
  path_in (p, sizeof p, "containers.json");
  FILE *f = fopen (p, "w");
  fputs ("[{\"id\":\"x\"}]", f);
  fclose (f);
  int dfd = open (dir, O_PATH | O_DIRECTORY);
  assert_true (dfd >= 0);
  json_object *a = st_storage_json_load (dfd, "containers.json", 4242, "user t");
  json_object *b = st_storage_json_load (dfd, "containers.json", 4242, "user t");
  assert_non_null (a);
  assert_ptr_equal (a, b);   /* the cached parse */
  json_object_put (a);
  json_object_put (b);

  path_in (p, sizeof p, "big.json");
  f = fopen (p, "w");
  assert_int_equal (ftruncate (fileno (f), ST_STORAGE_JSON_MAX + 1), 0);
  fclose (f);
  unsigned before = st_untrusted_refused_count ();
  assert_null (st_storage_json_load (dfd, "big.json", 4242, "user t"));
  assert_int_equal (st_untrusted_refused_count (), before + 1);
  close (dfd);

  int key = 1, other = 2;
  assert_true (st_untrusted_budget_take (77, 600, 1000, &key, sizeof key));
  assert_true (st_untrusted_budget_take (77, 600, 1000, &key, sizeof key));   /* paid */
  assert_false (st_untrusted_budget_take (77, 600, 1000, &other, sizeof other));
}

int
main (void)
{
  if (mkdtemp (dir) == NULL)
    return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fifo_device_proc_refused),
    cmocka_unit_test (test_regular_file_bounded_read),
    cmocka_unit_test (test_may_exist_agrees_with_open),
    cmocka_unit_test (test_json_prescan),
    cmocka_unit_test (test_storage_json),
  };
  int r = cmocka_run_group_tests (tests, NULL, NULL);
  char cmd[300];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    r = 1;
  return r;
}
