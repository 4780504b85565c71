/* See fuzz-source.h.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/input/input.h"
#include "core/session.h"
#include "core/output/sink.h"
#include "core/input/source.h"
#include "fuzz.h"
#include "fuzz-source.h"

static FILE *devnull;

static void
init_once (void)
{
  fuzz_init ();
  if (devnull != NULL)
    return;
  elf_version (EV_CURRENT);
  devnull = fopen ("/dev/null", "we");
  if (devnull == NULL)
    {
      perror ("/dev/null");
      abort ();
    }
}

static void
report (const char *what, int r, const struct st_why *err)
{
  if (fuzz_verbose == 0 || r == 0)
    return;
  if (r == -EBADMSG || r == -ENOTSUP)
    fprintf (stderr, "%s: byte offset %" PRIu64 ": %s\n", what, err->offset, err->text);
  else
    fprintf (stderr, "%s: %s\n", what, strerror (-r));
}

/* The part of main.c's run() after the input is open.  */
static void
run_source (struct st_input *in, const char *sink_name)
{
  const uint8_t *magic;
  ssize_t got = st_input_peek (in, 8, &magic);
  if (got < 0)
    return;
  const struct st_source_ops *source = st_source_detect (magic, got);
  if (source == NULL)
    return;

  struct st_why err = { 0 };
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

  const struct st_sink_ops *sink_ops = st_sink_lookup (sink_name);
  struct st_sink_options sink_opts = { .output_name = NULL };
  struct st_sink *sink = sink_ops->new (devnull, &sink_opts);
  struct st_session_options sopts = {
    .mode = ST_MODE_NAIVE,
    .max_frames = 256,
    .inline_frames = false,
    .arch = arch,
    .jobs = 1,
  };
  struct st_session *session = NULL;
  if (sink != NULL && st_session_new (&sopts, sink, sink_ops, &session) < 0)
    session = NULL;
  if (session != NULL)
    {
      r = source->run (src, st_session_handle_event, session, NULL, &err);
      report ("run", r, &err);
      st_session_finish (session);
      if (source->report != NULL)
        source->report (src);
      if (fuzz_verbose >= 2)
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

void
fuzz_source_run (const uint8_t *data, size_t size, bool as_pipe, const char *sink)
{
  init_once ();
  int fd = as_pipe ? pipe_with (data, size) : -1;
  if (fd < 0)
    {
      fd = memfd_create ("fuzz-source", MFD_CLOEXEC);
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
  fuzz_source_run_file (path, sink);
  close (fd);
}

void
fuzz_source_run_file (const char *path, const char *sink)
{
  init_once ();
  struct st_input *in = NULL;
  int r = st_input_open (path, &in);
  if (r < 0)
    {
      fprintf (stderr, "st_input_open %s: %s\n", path, strerror (-r));
      abort ();
    }
  run_source (in, sink);
  st_input_free (in);
}
