/* The SIGBUS guard (basic/sigbus-guard.c): a mapped file cut short under
 * us (libelf maps every ELF file it reads, some of them another user's)
 * reads as zeros past its new end, each such page is counted, and the
 * process goes on.  Without the guard the first touch past the end ends
 * the test with "Bus error".  */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/sigbus-guard.h"

#define FILE_SIZE ((8u << 20) + 4321)

static uint8_t
byte_at (uint64_t off)
{
  return (uint8_t) ((off * 2654435761u) >> 13);
}

static void
test_mapping_cut_short (void **state)
{
  (void) state;
  char path[] = "/tmp/eu-stacktrace-sigbus.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  static uint8_t data[FILE_SIZE];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = byte_at (i);
  assert_int_equal (write (fd, data, sizeof data), (ssize_t) sizeof data);
  volatile uint8_t *m = mmap (NULL, FILE_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
  assert_true (m != MAP_FAILED);
  close (fd);
  assert_int_equal (st_sigbus_guard (), 0);
  /* Installed twice: the second finds its own handler and keeps it.  */
  assert_int_equal (st_sigbus_guard (), 0);
  uint64_t before = st_sigbus_zero_pages ();
  assert_int_equal (m[5], byte_at (5));
  assert_int_equal (truncate (path, 4096), 0);
  assert_int_equal (m[5], byte_at (5));
  assert_int_equal (m[3u << 20], 0);
  assert_int_equal (m[(3u << 20) + 1], 0);   /* the same page, mapped now */
  assert_int_equal (m[FILE_SIZE - 1], 0);
  assert_int_equal (st_sigbus_zero_pages () - before, 2);
  munmap ((void *) m, FILE_SIZE);
  unlink (path);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_mapping_cut_short),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
