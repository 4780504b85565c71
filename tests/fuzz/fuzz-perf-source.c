/* Fuzz target: the perf.data reader and everything a sample reaches.
 *
 * Each input is written to a memfd (or, for half of the pipe-mode streams,
 * to a pipe) and read through the same sequence as eu-stacktrace's run() in
 * src/core/main.c: st_input_open on /proc/self/fd/N, st_source_detect, the
 * source's open, the architecture lookup, then its run feeding
 * st_session_handle_event (one job, no threads), the output going to
 * /dev/null.  The sink is picked from the input's size (text, folded, json)
 * so that every writer sees fuzzed names without spending input bytes on a
 * choice.
 *
 * Built two ways:
 *   - with clang -fsanitize=fuzzer (tests/fuzz/run-fuzzer.sh), which defines
 *     FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION: libFuzzer's main drives it;
 *   - without, by make check (tests/fuzz/fuzz-perf-source-replay, with
 *     ASan/UBSan): the main() below replays files and directories given as
 *     arguments, so the corpus runs as a regression test without libFuzzer.
 *
 * FUZZ_VERBOSE=1 in the environment shows the tool's warnings and debug
 * messages, FUZZ_VERBOSE=error the error a malformed input gets.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/input.h"
#include "core/log.h"
#include "core/session.h"
#include "core/sink.h"
#include "core/source.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static FILE *devnull;
static int verbose;  /* 0 quiet, 1 print the input's error, 2 debug log */

static void
init_once (void)
{
  if (devnull != NULL)
    return;
  elf_version (EV_CURRENT);
  /* Never the network: a fuzzed build-id must not become a query.  */
  unsetenv ("DEBUGINFOD_URLS");
  const char *v = getenv ("FUZZ_VERBOSE");
  verbose = v == NULL || *v == '\0' || strcmp (v, "0") == 0 ? 0
            : strcmp (v, "error") == 0 ? 1 : 2;
  st_log_set_level (verbose >= 2 ? ST_LOG_DEBUG : ST_LOG_ERROR);
  devnull = fopen ("/dev/null", "we");
  if (devnull == NULL)
    {
      perror ("/dev/null");
      abort ();
    }
}

static void
report (const char *what, int r, const struct st_source_error *err)
{
  if (verbose == 0 || r == 0)
    return;
  if (r == -EBADMSG || r == -ENOTSUP)
    fprintf (stderr, "%s: byte offset %" PRIu64 ": %s\n", what, err->offset, err->message);
  else
    fprintf (stderr, "%s: %s\n", what, strerror (-r));
}

/* The part of main.c's run() after the input is open.  */
static void
run_source (struct st_input *in, size_t size)
{
  const uint8_t *magic;
  ssize_t got = st_input_peek (in, 8, &magic);
  if (got < 0)
    return;
  const struct st_source_ops *source = st_source_detect (magic, got);
  if (source == NULL)
    return;

  struct st_source_error err = { 0 };
  void *src = NULL;
  int r = source->open (in, &src, &err);
  report ("open", r, &err);
  if (r < 0)
    return;

  const struct st_regs_arch *arch = st_regs_arch_lookup (source->arch (src));
  if (arch == NULL)
    {
      source->free (src);
      return;
    }

  static const char *const formats[] = { "text", "folded", "json" };
  const struct st_sink_ops *sink_ops = st_sink_lookup (formats[size % 3]);
  struct st_sink_options sink_opts = { .output_name = NULL };
  struct st_sink *sink = sink_ops->new (devnull, &sink_opts);
  struct st_session_options sopts = {
    .mode = ST_MODE_NAIVE,
    .max_frames = 256,
    .inline_frames = false,
    .arch = arch,
    .jobs = 1,
  };
  struct st_session *session = sink ? st_session_new (&sopts, sink, sink_ops) : NULL;
  if (session != NULL)
    {
      r = source->run (src, st_session_handle_event, session, NULL, &err);
      report ("run", r, &err);
      st_session_finish (session);
      if (source->report != NULL)
        source->report (src);
      if (verbose >= 2)
        st_session_print_summary (session, stderr);
    }
  st_session_free (session);
  if (sink != NULL)
    sink_ops->free (sink);
  fflush (devnull);
  source->free (src);
}

/* A pipe holding DATA, for pipe-mode streams: the reader then takes its
   streaming path (a buffer, records copied before they are queued) rather
   than the mapped one.  -1 when the pipe cannot hold it all.  */
static int
pipe_with (const uint8_t *data, size_t size)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) != 0)
    return -1;
  if (fcntl (p[1], F_SETPIPE_SZ, (int) (size < 4096 ? 4096 : size)) < (long) size)
    goto fail;
  for (size_t done = 0; done < size;)
    {
      ssize_t n = write (p[1], data + done, size - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        goto fail;
      done += n;
    }
  close (p[1]);
  return p[0];

fail:
  close (p[0]);
  close (p[1]);
  return -1;
}

static bool
is_pipe_header (const uint8_t *data, size_t size)
{
  uint64_t header_size;
  if (size < 16)
    return false;
  memcpy (&header_size, data + 8, sizeof header_size);
  return header_size == 16;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  init_once ();
  /* Pipe-mode streams go through a real pipe one time in two (by size),
     everything else through a mapped memfd, as a perf.data file would.  */
  int fd = -1;
  if (is_pipe_header (data, size) && (size / 3) % 2 == 1)
    fd = pipe_with (data, size);
  if (fd < 0)
    {
      fd = memfd_create ("fuzz-perf-source", MFD_CLOEXEC);
      if (fd < 0)
        {
          perror ("memfd_create");
          abort ();
        }
      for (size_t done = 0; done < size;)
        {
          ssize_t n = write (fd, data + done, size - done);
          if (n < 0)
            {
              if (errno == EINTR)
                continue;
              perror ("write to memfd");
              abort ();
            }
          done += n;
        }
    }
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);

  struct st_input *in = NULL;
  int r = st_input_open (path, &in);
  if (r < 0)
    {
      fprintf (stderr, "st_input_open %s: %s\n", path, strerror (-r));
      abort ();
    }
  run_source (in, size);
  st_input_free (in);
  close (fd);
  return 0;
}

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* Replay: each argument is an input file or a directory of them.  */

static int
replay_file (const char *path)
{
  FILE *f = fopen (path, "rbe");
  if (f == NULL)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  uint8_t *data = NULL;
  size_t size = 0, cap = 0;
  for (;;)
    {
      if (size == cap)
        {
          cap = cap ? 2 * cap : 65536;
          uint8_t *d = realloc (data, cap);
          if (d == NULL)
            {
              fprintf (stderr, "%s: out of memory\n", path);
              free (data);
              fclose (f);
              return -1;
            }
          data = d;
        }
      size_t n = fread (data + size, 1, cap - size, f);
      size += n;
      if (n == 0)
        break;
    }
  int bad = ferror (f);
  fclose (f);
  if (bad)
    {
      fprintf (stderr, "%s: read error\n", path);
      free (data);
      return -1;
    }
  if (verbose)
    fprintf (stderr, "replaying %s (%zu bytes)\n", path, size);
  LLVMFuzzerTestOneInput (data, size);
  free (data);
  return 0;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
replay_path (const char *path, size_t *count)
{
  struct stat st;
  if (stat (path, &st) != 0)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  if (!S_ISDIR (st.st_mode))
    {
      int r = replay_file (path);
      if (r == 0)
        ++*count;
      return r;
    }
  struct dirent **names;
  int n = scandir (path, &names, NULL, NULL);
  if (n < 0)
    {
      fprintf (stderr, "%s: %s\n", path, strerror (errno));
      return -1;
    }
  qsort (names, n, sizeof *names, compare_names);
  int r = 0;
  for (int i = 0; i < n; i++)
    {
      if (names[i]->d_name[0] != '.')
        {
          char *p;
          if (asprintf (&p, "%s/%s", path, names[i]->d_name) < 0)
            r = -1;
          else
            {
              if (replay_path (p, count) < 0)
                r = -1;
              free (p);
            }
        }
      free (names[i]);
    }
  free (names);
  return r;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE|DIR...\n"
               "Runs each input through the perf.data fuzz target "
               "(FUZZ_VERBOSE=1 for messages).\n", argv[0]);
      return 64;
    }
  init_once ();
  size_t count = 0;
  int status = 0;
  for (int i = 1; i < argc; i++)
    if (replay_path (argv[i], &count) < 0)
      status = 1;
  fprintf (stderr, "replayed %zu inputs\n", count);
  return status;
}
#endif
