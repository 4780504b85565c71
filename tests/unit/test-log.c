/* Messages reach stderr with what a user chose (a path, a process's or a
 * function's name) unable to act on root's terminal: control characters
 * as \xNN, UTF-8 names as they are.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/log.h"

/* What st_warning ("%s", ARG) writes to stderr, in BUF.  */
static void
warning_of (const char *arg, char *buf, size_t size)
{
  FILE *tmp = tmpfile ();
  assert_non_null (tmp);
  fflush (stderr);
  int saved = dup (STDERR_FILENO);
  assert_true (saved >= 0);
  assert_true (dup2 (fileno (tmp), STDERR_FILENO) >= 0);
  st_warning ("file %s: gone", arg);
  fflush (stderr);
  assert_true (dup2 (saved, STDERR_FILENO) >= 0);
  close (saved);
  rewind (tmp);
  size_t n = fread (buf, 1, size - 1, tmp);
  buf[n] = '\0';
  fclose (tmp);
}

static void
test_controls_escaped (void **state)
{
  (void) state;
  char buf[512];
  /* An escape sequence, a newline faking a message of ours, a carriage
     return, DEL, and U+009B (CSI as a C1 control).  */
  warning_of ("/tmp/a\x1b[2Jb\n" PACKAGE_NAME ": all fine\rc\x7f\xc2\x9b" "d", buf, sizeof buf);
  assert_string_equal (buf, PACKAGE_NAME ": warning: file /tmp/a\\x1b[2Jb\\x0a" PACKAGE_NAME
                            ": all fine\\x0dc\\x7f\\xc2\\x9bd: gone\n");
}

static void
test_names_kept (void **state)
{
  (void) state;
  char buf[512];
  /* UTF-8 (é, 日本, U+00A0) and printable ASCII go as they are.  */
  warning_of ("/home/r\xc3\xa9my/\xe6\x97\xa5\xe6\x9c\xac\xc2\xa0~x", buf, sizeof buf);
  assert_string_equal (buf, PACKAGE_NAME ": warning: file /home/r\xc3\xa9my/\xe6\x97\xa5\xe6\x9c\xac"
                            "\xc2\xa0~x: gone\n");
  /* A 0xc2 not followed by a C1 control is kept.  */
  warning_of ("x\xc2", buf, sizeof buf);
  assert_string_equal (buf, PACKAGE_NAME ": warning: file x\xc2: gone\n");
}

/* A name of LEN bytes, as --stats and the progress line write them.  */
static void
test_lengths_kept (void **state)
{
  (void) state;
  char *buf = NULL;
  size_t size = 0;
  FILE *out = open_memstream (&buf, &size);
  assert_non_null (out);
  st_log_write_escaped (out, "a\x1b" "b", 1);
  fputc ('|', out);
  st_log_write_escaped (out, "\x1b[0m", 3);
  fputc ('|', out);
  /* A C1 control cut in two at LEN: its first byte only, as it is.  */
  st_log_write_escaped (out, "x\xc2\x9b", 2);
  assert_int_equal (fclose (out), 0);
  assert_string_equal (buf, "a|\\x1b[0|x\xc2");
  free (buf);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_controls_escaped),
    cmocka_unit_test (test_names_kept),
    cmocka_unit_test (test_lengths_kept),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
