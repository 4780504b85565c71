/* The resolver's chain on real files (the namespace helper, container
 * storage and debuginfod steps off): the host path with the recorded
 * build-id or inode, the vdso from this process, and the refusals: another
 * build-id, another inode (a file replaced since it was mapped), a missing
 * file, a FIFO in the file's place (never opened for reading, so never
 * blocking), an anonymous mapping.  Each answer is given once per run;
 * of the answers "no file", the ones asked for last are kept.
 * And the debug-file search: never in our current directory.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "core/resolve/debuginfo-host.h"
#include "core/resolve/resolver.h"

static char dir[] = "/tmp/eu-stacktrace-test-resolver.XXXXXX";
static char prog[sizeof dir + 16];
static uint8_t prog_id[ST_BUILD_ID_MAX];
static size_t prog_id_size;

/* A copy of this test's own executable, an ELF file with a build-id.  */
static int
setup (void **state)
{
  if (mkdtemp (dir) == NULL)
    return -1;
  snprintf (prog, sizeof prog, "%s/prog", dir);
  int in = open ("/proc/self/exe", O_RDONLY);
  int out = open (prog, O_WRONLY | O_CREAT | O_EXCL, 0755);
  if (in < 0 || out < 0)
    return -1;
  char buf[65536];
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (write (out, buf, n) != n)
      return -1;
  close (in);
  close (out);
  int fd = open (prog, O_RDONLY);
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  prog_id_size = elf ? st_elf_read_build_id (elf, prog_id) : 0;
  elf_end (elf);
  close (fd);
  return prog_id_size > 0 ? 0 : -1;
}

static int
teardown (void **state)
{
  char path[sizeof dir + 16];
  snprintf (path, sizeof path, "%s/fifo", dir);
  unlink (path);
  unlink (prog);
  rmdir (dir);
  return 0;
}

static struct st_mapping_request
request (const char *path)
{
  struct st_mapping_request req = {
    .pid = getpid (), .path = path, .start = 0x400000, .end = 0x401000, .pgoff = 0,
  };
  return req;
}

struct answer {
  const char *path;
  int found_by;
  char why[256];
  int n;
};

static void
remember (const char *path, int found_by, const char *why, void *arg)
{
  struct answer *a = arg;
  if (strcmp (path, a->path) != 0)
    return;
  a->n++;
  a->found_by = found_by;
  snprintf (a->why, sizeof a->why, "%s", why ? why : "");
}

/* How R answered for PATH, which it must have looked for once.  */
static struct answer
answer_for (const struct st_resolver *r, const char *path)
{
  struct answer a = { .path = path, .found_by = -2 };
  st_resolver_foreach_answer (r, remember, &a);
  assert_int_equal (a.n, 1);
  return a;
}

static void
test_host_path_with_build_id (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_mapping_request req = request (prog);
  req.build_id = prog_id;
  req.build_id_size = prog_id_size;
  struct st_resolution res = { 0 };
  struct st_elf_file *f = st_resolver_resolve (r, &req, &res);
  assert_non_null (f);
  assert_int_equal (f->found_by, ST_FOUND_HOST_PATH);
  assert_string_equal (f->path, prog);
  assert_int_equal (f->build_id_size, prog_id_size);
  assert_memory_equal (f->build_id, prog_id, prog_id_size);
  /* Looked for once: the second request gets the same file.  */
  struct st_elf_file *again = st_resolver_resolve (r, &req, &res);
  assert_ptr_equal (again, f);
  assert_int_equal (answer_for (r, prog).found_by, ST_FOUND_HOST_PATH);
  st_elf_file_unref (again);
  st_elf_file_unref (f);
  st_resolver_free (r);
}

static void
test_other_build_id_refused (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  uint8_t other[ST_BUILD_ID_MAX];
  memcpy (other, prog_id, prog_id_size);
  other[0] ^= 0xff;
  struct st_mapping_request req = request (prog);
  req.build_id = other;
  req.build_id_size = prog_id_size;
  struct st_resolution res = { 0 };
  assert_null (st_resolver_resolve (r, &req, &res));
  assert_non_null (res.why_not);
  print_message ("another build-id: %s\n", res.why_not);
  assert_int_equal (answer_for (r, prog).found_by, -1);
  st_resolver_free (r);
}

static void
test_inode_without_build_id (void **state)
{
  struct stat st;
  assert_int_equal (stat (prog, &st), 0);
  struct st_resolution res = { 0 };

  /* The inode that was mapped: the file is the one.  */
  struct st_resolver *r = st_resolver_new ();
  struct st_mapping_request req = request (prog);
  req.has_dev_ino = true;
  req.ino = st.st_ino;
  struct st_elf_file *f = st_resolver_resolve (r, &req, &res);
  assert_non_null (f);
  assert_int_equal (f->found_by, ST_FOUND_HOST_PATH);
  st_elf_file_unref (f);
  st_resolver_free (r);

  /* Another inode: the file was replaced since it was mapped.  */
  r = st_resolver_new ();
  req.ino = st.st_ino + 1;
  res = (struct st_resolution) { 0 };
  assert_null (st_resolver_resolve (r, &req, &res));
  assert_non_null (res.why_not);
  print_message ("another inode: %s\n", res.why_not);
  struct answer a = answer_for (r, prog);
  assert_int_equal (a.found_by, -1);
  assert_non_null (strstr (a.why, "replaced since it was mapped"));
  st_resolver_free (r);
}

static void
test_vdso_from_this_process (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_mapping_request req = request ("[vdso]");
  struct st_resolution res = { 0 };
  struct st_elf_file *f = st_resolver_resolve (r, &req, &res);
  assert_non_null (f);
  assert_int_equal (f->found_by, ST_FOUND_VDSO);
  assert_non_null (f->elf);
  assert_int_equal (elf_kind (f->elf), ELF_K_ELF);
  assert_int_equal (answer_for (r, "[vdso]").found_by, ST_FOUND_VDSO);
  st_elf_file_unref (f);
  st_resolver_free (r);
}

static void
test_missing_fifo_and_anonymous_refused (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_resolution res = { 0 };
  char missing[sizeof dir + 16];
  snprintf (missing, sizeof missing, "%s/missing", dir);
  struct st_mapping_request req = request (missing);
  assert_null (st_resolver_resolve (r, &req, &res));
  assert_non_null (strstr (answer_for (r, missing).why, "No such file"));

  /* A FIFO where the file was: refused without blocking on it.  */
  char fifo[sizeof dir + 16];
  snprintf (fifo, sizeof fifo, "%s/fifo", dir);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  req = request (fifo);
  res = (struct st_resolution) { 0 };
  assert_null (st_resolver_resolve (r, &req, &res));
  print_message ("a FIFO: %s\n", answer_for (r, fifo).why);
  assert_int_equal (answer_for (r, fifo).found_by, -1);

  req = request ("//anon");
  res = (struct st_resolution) { 0 };
  assert_null (st_resolver_resolve (r, &req, &res));
  assert_non_null (res.why_not);
  st_resolver_free (r);
}

static void
count_answer (const char *path, int found_by, const char *why, void *arg)
{
  (*(size_t *) arg)++;
}

/* Paths that are never found, one after another (a user's copies of a
   program, run and deleted before they are resolved): the resolver keeps
   the answers asked for last, not one for every path ever missing; the
   file it found stays; a forgotten path asked again is looked for again.  */
static void
test_missing_answers_bounded (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_mapping_request req = request (prog);
  req.build_id = prog_id;
  req.build_id_size = prog_id_size;
  struct st_resolution res = { 0 };
  struct st_elf_file *f = st_resolver_resolve (r, &req, &res);
  assert_non_null (f);
  enum { N = 10 * ST_RESOLVER_MISSING_KEPT };
  char path[sizeof dir + 32];
  size_t most = 0;
  for (unsigned i = 0; i < N; i++)
    {
      snprintf (path, sizeof path, "%s/gone-%u", dir, i);
      req = request (path);
      res = (struct st_resolution) { 0 };
      assert_null (st_resolver_resolve (r, &req, &res));
      assert_non_null (res.why_not);
      size_t n = 0;
      if (i % 64 == 0 || i == N - 1)
        {
          st_resolver_foreach_answer (r, count_answer, &n);
          if (n > most)
            most = n;
        }
    }
  size_t n = 0;
  st_resolver_foreach_answer (r, count_answer, &n);
  uint64_t forgotten = st_resolver_missing_forgotten (r);
  print_message ("%u paths missing: %zu answers kept (at most %zu), %llu forgotten\n", N, n,
                 most, (unsigned long long) forgotten);
  /* The file, and the missing paths not forgotten.  */
  assert_int_equal (n, 1 + N - forgotten);
  assert_true (most <= 1 + 2 * ST_RESOLVER_MISSING_KEPT);
  assert_true (forgotten >= N - 2 * ST_RESOLVER_MISSING_KEPT);
  /* The ones asked for last are kept, and the file found first.  */
  for (unsigned i = N - ST_RESOLVER_MISSING_KEPT; i < N; i++)
    {
      snprintf (path, sizeof path, "%s/gone-%u", dir, i);
      assert_int_equal (answer_for (r, path).found_by, -1);
    }
  assert_int_equal (answer_for (r, prog).found_by, ST_FOUND_HOST_PATH);
  /* The first path, forgotten long ago: looked for again, still missing.  */
  snprintf (path, sizeof path, "%s/gone-0", dir);
  req = request (path);
  res = (struct st_resolution) { 0 };
  assert_null (st_resolver_resolve (r, &req, &res));
  assert_non_null (strstr (res.why_not, "No such file"));
  assert_int_equal (answer_for (r, path).found_by, -1);
  st_elf_file_unref (f);
  st_resolver_free (r);
}

/* A module named without an absolute directory ("[vdso]", a relative
   path in a recording) has its debug file searched only under
   /usr/lib/debug, never in our current directory or its .debug; the same
   file beside an absolute name is found.  */
static void
test_debug_file_never_in_cwd (void **state)
{
  (void) state;
  char old[4096];
  assert_non_null (getcwd (old, sizeof old));
  assert_int_equal (chdir (dir), 0);
  static const char body[] = "a debug file, as far as its CRC can tell";
  uint32_t crc = (uint32_t) crc32 (0L, (const Bytef *) body, sizeof body - 1);
  assert_int_equal (mkdir (".debug", 0755), 0);
  const char *files[] = { "cwd-prog.debug", ".debug/cwd-prog.debug" };
  for (size_t i = 0; i < 2; i++)
    {
      FILE *f = fopen (files[i], "w");
      assert_non_null (f);
      assert_int_equal (fwrite (body, 1, sizeof body - 1, f), sizeof body - 1);
      assert_int_equal (fclose (f), 0);
    }
  struct st_debuginfo_want w = { .file_name = "cwd-prog", .debuglink = "cwd-prog.debug",
                                 .crc = crc };
  char *path = NULL;
  int fd = st_debuginfo_host_find (&w, &path);
  assert_int_equal (fd, -1);
  assert_null (path);
  w.debuglink = NULL;   /* the invented NAME.debug: never taken without a CRC */
  assert_int_equal (st_debuginfo_host_find (&w, &path), -1);

  char abs[sizeof dir + 16];
  snprintf (abs, sizeof abs, "%s/cwd-prog", dir);
  w = (struct st_debuginfo_want) { .file_name = abs, .debuglink = "cwd-prog.debug", .crc = crc };
  fd = st_debuginfo_host_find (&w, &path);
  assert_true (fd >= 0);
  assert_non_null (path);
  print_message ("beside %s: %s\n", abs, path);
  close (fd);
  free (path);
  for (size_t i = 0; i < 2; i++)
    unlink (files[i]);
  rmdir (".debug");
  assert_int_equal (chdir (old), 0);
}

int
main (void)
{
  elf_version (EV_CURRENT);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_host_path_with_build_id),
    cmocka_unit_test (test_other_build_id_refused),
    cmocka_unit_test (test_inode_without_build_id),
    cmocka_unit_test (test_vdso_from_this_process),
    cmocka_unit_test (test_missing_fifo_and_anonymous_refused),
    cmocka_unit_test (test_missing_answers_bounded),
    cmocka_unit_test (test_debug_file_never_in_cwd),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
