/* The helper's hand-written build-id reader agrees with libelf's on real
 * files, and refuses what is not ELF.  */
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
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>

#include "ns-helper/elf-build-id.h"

static void
check_against_libelf (const char *path)
{
  int fd = open (path, O_RDONLY);
  if (fd < 0)
    fail_msg ("cannot open %s", path);
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  assert_non_null (elf);
  const void *want;
  ssize_t want_size = dwelf_elf_gnu_build_id (elf, &want);
  uint8_t got[ST_ELF_BUILD_ID_MAX];
  int got_size = st_elf_fd_build_id (fd, got);
  print_message ("%s: libelf %zd bytes, ours %d bytes\n", path, want_size, got_size);
  assert_true (want_size > 0);
  assert_int_equal (got_size, want_size);
  assert_memory_equal (got, want, want_size);
  elf_end (elf);
  close (fd);
}

static void
test_matches_libelf_on_real_binaries (void **state)
{
  check_against_libelf ("/proc/self/exe");
  check_against_libelf ("/usr/lib/x86_64-linux-gnu/libc.so.6");
  check_against_libelf ("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
}

static int
temp_file (const void *data, size_t size)
{
  char path[] = "/tmp/test-elf-build-id.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  unlink (path);
  assert_int_equal (write (fd, data, size), (ssize_t) size);
  return fd;
}

static void
test_refuses_non_elf_and_survives_truncation (void **state)
{
  int fd = temp_file ("root:x:0:0:root:/root:/bin/bash\n", 32);
  uint8_t id[ST_ELF_BUILD_ID_MAX];
  assert_int_equal (st_elf_fd_build_id (fd, id), -ENOEXEC);
  close (fd);

  /* Every prefix of a real ELF file: no crash, and no build-id claimed
     from bytes that are not there.  */
  int exe = open ("/proc/self/exe", O_RDONLY);
  uint8_t head[8192];
  ssize_t n = pread (exe, head, sizeof head, 0);
  close (exe);
  assert_true (n > 64);
  for (ssize_t len = 0; len < n; len += 61)
    {
      fd = temp_file (head, len);
      int r = st_elf_fd_build_id (fd, id);
      assert_true (r == 0 || r == -ENOEXEC || r > 0);
      close (fd);
    }
}

static void
test_garbage_phdr_table_is_harmless (void **state)
{
  int exe = open ("/proc/self/exe", O_RDONLY);
  uint8_t head[8192];
  ssize_t n = pread (exe, head, sizeof head, 0);
  close (exe);
  srand (1);
  for (int round = 0; round < 500; round++)
    {
      uint8_t copy[8192];
      memcpy (copy, head, n);
      for (int k = 0; k < 8; k++)
        copy[64 + rand () % (n - 64)] = rand ();
      int fd = temp_file (copy, n);
      uint8_t id[ST_ELF_BUILD_ID_MAX];
      int r = st_elf_fd_build_id (fd, id);
      assert_true (r >= 0 && r <= ST_ELF_BUILD_ID_MAX);
      close (fd);
    }
}

int
main (void)
{
  elf_version (EV_CURRENT);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_matches_libelf_on_real_binaries),
    cmocka_unit_test (test_refuses_non_elf_and_survives_truncation),
    cmocka_unit_test (test_garbage_phdr_table_is_harmless),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
