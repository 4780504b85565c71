/* The input (input.c): every file, pipe or FIFO is read with read(2),
 * never mapped, and gives the right bytes through st_input_next,
 * st_input_skip, st_input_seek and the keep, hold and release contract;
 * a file cut short under the reader ends the input there, no SIGBUS.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/input/input.h"

/* 40 MiB and a bit: twenty of the input's 2 MiB buffers, ending off a
   page.  */
#define FILE_SIZE ((40u << 20) + 4321)

static uint8_t
byte_at (uint64_t off)
{
  return (uint8_t) ((off * 2654435761u) >> 13);
}

/* A file of FILE_SIZE known bytes with MODE; its path in PATH.  */
static void
make_file (char *path, mode_t mode)
{
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  static uint8_t chunk[1 << 16];
  for (uint64_t at = 0; at < FILE_SIZE; at += sizeof chunk)
    {
      size_t n = FILE_SIZE - at < sizeof chunk ? FILE_SIZE - at : sizeof chunk;
      for (size_t i = 0; i < n; i++)
        chunk[i] = byte_at (at + i);
      assert_int_equal (write (fd, chunk, n), (ssize_t) n);
    }
  assert_int_equal (fchmod (fd, mode), 0);
  close (fd);
}

/* Whether PATH is mapped in this process (/proc/self/maps): the input
   never maps, seen from outside.  */
static bool
mapped_here (const char *path)
{
  FILE *f = fopen ("/proc/self/maps", "r");
  assert_non_null (f);
  char line[4096];
  bool found = false;
  size_t n = strlen (path);
  while (!found && fgets (line, sizeof line, f) != NULL)
    {
      line[strcspn (line, "\n")] = '\0';
      size_t len = strlen (line);
      found = len >= n && strcmp (line + len - n, path) == 0 && line[len - n - 1] == ' ';
    }
  fclose (f);
  return found;
}

static void
assert_bytes (const uint8_t *p, size_t n, uint64_t off)
{
  for (size_t i = 0; i < n; i++)
    if (p[i] != byte_at (off + i))
      fail_msg ("byte %" PRIu64 " is %u, not %u", off + i, p[i], byte_at (off + i));
}

/* Reads the whole file in records of varying sizes, keeping every record
   of the last 5 MiB (as a source keeps what its queue holds) and holding
   the oldest, then checks every kept record after the reader has passed
   them and released what it no longer holds.  */
static void
read_all (struct st_input *in)
{
  st_input_keep (in);
  assert_true (st_input_stable (in));
  struct { const uint8_t *p; size_t n; uint64_t off; } kept[4096];
  size_t n_kept = 0, first = 0;
  uint64_t off = 0;
  for (unsigned i = 0; off < FILE_SIZE; i++)
    {
      size_t want = 8 + (i * 977u) % 12000;
      const uint8_t *p;
      ssize_t r = st_input_next (in, want, &p);
      assert_true (r > 0);
      assert_int_equal (st_input_offset (in), off + r);
      assert_bytes (p, r, off);
      if (n_kept == 4096)
        {
          memmove (kept, kept + 2048, 2048 * sizeof kept[0]);
          n_kept -= 2048;
          first = first > 2048 ? first - 2048 : 0;
        }
      kept[n_kept].p = p;
      kept[n_kept].n = r;
      kept[n_kept].off = off;
      n_kept++;
      assert_true (st_input_holds (in, p));
      off += r;
      /* Let go of everything more than 5 MiB behind, and hold the first
         record still kept.  */
      while (first < n_kept && kept[first].off + (5u << 20) < off)
        first++;
      if (first < n_kept)
        {
          st_input_hold (in, kept[first].off);
          st_input_release_before (in, off);
          for (size_t k = first; k < n_kept; k += 97)
            assert_bytes (kept[k].p, kept[k].n, kept[k].off);
        }
    }
  assert_int_equal (off, FILE_SIZE);
  const uint8_t *p;
  assert_int_equal (st_input_next (in, 8, &p), 0);
  for (size_t k = first; k < n_kept; k++)
    assert_bytes (kept[k].p, kept[k].n, kept[k].off);
}

/* Skips, seeks back, reads at an offset.  */
static void
skip_and_seek (struct st_input *in)
{
  const uint8_t *p;
  assert_int_equal (st_input_skip (in, 9u << 20), 9u << 20);
  assert_int_equal (st_input_next (in, 100, &p), 100);
  assert_bytes (p, 100, 9u << 20);
  assert_int_equal (st_input_seek (in, 4097), 0);
  assert_int_equal (st_input_offset (in), 4097);
  assert_int_equal (st_input_next (in, 5000, &p), 5000);
  assert_bytes (p, 5000, 4097);
  assert_int_equal (st_input_seek (in, FILE_SIZE - 10), 0);
  assert_int_equal (st_input_next (in, 100, &p), 10);
  assert_bytes (p, 10, FILE_SIZE - 10);
  uint8_t b[64];
  assert_int_equal (st_input_pread (in, b, sizeof b, 12345), (ssize_t) sizeof b);
  assert_bytes (b, sizeof b, 12345);
}

static void
check_file (mode_t mode, bool chown_away)
{
  char path[] = "/tmp/eu-stacktrace-input.XXXXXX";
  make_file (path, mode);
  if (chown_away)
    assert_int_equal (chown (path, 65534, 65534), 0);
  for (int pass = 0; pass < 2; pass++)
    {
      struct st_input *in;
      assert_int_equal (st_input_open (path, &in), 0);
      assert_false (mapped_here (path));
      assert_true (st_input_seekable (in));
      assert_int_equal (st_input_size (in), FILE_SIZE);
      if (pass == 0)
        read_all (in);
      else
        skip_and_seek (in);
      st_input_free (in);
    }
  unlink (path);
}

/* A file of any mode and owner is read, the same way: ours and no one
   else's to write (the previous way mapped those), writable by others,
   open for writing elsewhere, someone else's.  */
static void
test_files_are_read (void **state)
{
  (void) state;
  check_file (0600, false);
  check_file (0644, false);
  check_file (0620, false);
  check_file (0602, false);
  if (geteuid () == 0)
    check_file (0644, true);
}

static void
test_open_for_writing_is_read (void **state)
{
  (void) state;
  char path[] = "/tmp/eu-stacktrace-input.XXXXXX";
  make_file (path, 0600);
  int writer = open (path, O_WRONLY | O_CLOEXEC);
  assert_true (writer >= 0);
  struct st_input *in;
  assert_int_equal (st_input_open (path, &in), 0);
  assert_false (mapped_here (path));
  read_all (in);
  st_input_free (in);
  close (writer);
  unlink (path);
}

/* A pipe is read, and ends where the writer stops.  */
static void
test_pipe_is_read (void **state)
{
  (void) state;
  int fds[2];
  assert_int_equal (pipe (fds), 0);
  static uint8_t data[50000];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = byte_at (i);
  assert_int_equal (write (fds[1], data, sizeof data), (ssize_t) sizeof data);
  close (fds[1]);
  int saved = dup (STDIN_FILENO);
  assert_int_equal (dup2 (fds[0], STDIN_FILENO), STDIN_FILENO);
  close (fds[0]);
  struct st_input *in;
  assert_int_equal (st_input_open ("-", &in), 0);
  assert_false (st_input_seekable (in));
  const uint8_t *p;
  assert_int_equal (st_input_next (in, 30000, &p), 30000);
  assert_bytes (p, 30000, 0);
  assert_int_equal (st_input_next (in, 30000, &p), 20000);
  assert_bytes (p, 20000, 30000);
  st_input_free (in);
  dup2 (saved, STDIN_FILENO);
  close (saved);
}

/* A file cut short under the reader (its owner may): the input ends
   where the file now ends, the process goes on, and the records read
   before stay right (they are in our buffers, not the file's pages).  */
static void
test_cut_short (void **state)
{
  (void) state;
  char path[] = "/tmp/eu-stacktrace-input.XXXXXX";
  make_file (path, 0600);
  struct st_input *in;
  assert_int_equal (st_input_open (path, &in), 0);
  st_input_keep (in);
  const uint8_t *first;
  assert_int_equal (st_input_next (in, 4096, &first), 4096);
  assert_int_equal (truncate (path, 3u << 20), 0);
  ssize_t r = 0;
  uint64_t off = 4096;
  const uint8_t *p;
  while ((r = st_input_next (in, 60000, &p)) > 0)
    off += r;
  assert_int_equal (r, 0);
  /* The first buffer read before the cut, then up to the new end.  */
  assert_int_equal (off, 3u << 20);
  assert_bytes (first, 4096, 0);
  st_input_free (in);
  unlink (path);
}

/* An empty file: reading it ends at once.  */
static void
test_empty_file (void **state)
{
  (void) state;
  char path[] = "/tmp/eu-stacktrace-input.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  close (fd);
  struct st_input *in;
  assert_int_equal (st_input_open (path, &in), 0);
  assert_false (mapped_here (path));
  const uint8_t *p;
  assert_int_equal (st_input_next (in, 8, &p), 0);
  st_input_free (in);
  unlink (path);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_files_are_read),
    cmocka_unit_test (test_open_for_writing_is_read),
    cmocka_unit_test (test_pipe_is_read),
    cmocka_unit_test (test_empty_file),
    cmocka_unit_test (test_cut_short),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
