/* sysprof-check: reads a Sysprof capture with Debian's libsysprof-capture-4,
 * the reader Sysprof itself uses, and says what it found.
 *
 * Usage: sysprof-check [--samples FILE] CAPTURE
 *
 * Every frame is read twice: with the reader (peek_type, then the read_*
 * call of its type, which checks the frame's own lengths) and with a cursor
 * (sysprof_capture_cursor_foreach); and the file is walked a third time by
 * the frame lengths alone.  The three must agree on the number of frames:
 * the reader stops at the first frame it cannot read, so a frame it cannot
 * read anywhere in the capture shows.  Sample frames must hold their
 * n_addrs addresses exactly; maps, processes, forks and exits must be
 * readable; the header's times must span the frames'.
 *
 * Standard output, one "key value..." line each: frames, by-type counts,
 * times.  --samples writes one line per sample frame, in order:
 *
 *   PID TID TIME CPU KERNEL_ADDRS : USER_ADDR...
 *
 * the number of kernel addresses (after PERF_CONTEXT_KERNEL), then the user
 * addresses (after PERF_CONTEXT_USER, or before any marker) in hex.  Exit
 * status 0 when every check passed.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sysprof-capture.h>

#define CONTEXT_KERNEL ((uint64_t) -128)
#define CONTEXT_MAX ((uint64_t) -4095)

static int failures;

static void
fail (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("sysprof-check: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  failures++;
}

/* The frames of the file by their lengths alone.  */
static long
walk_by_length (const char *path, int64_t *first_time, int64_t *last_time)
{
  FILE *f = fopen (path, "rb");
  if (f == NULL)
    {
      fail ("%s: %s", path, strerror (errno));
      return -1;
    }
  long n = 0;
  SysprofCaptureFrame fr;
  if (fseek (f, sizeof (SysprofCaptureFileHeader), SEEK_SET) != 0)
    n = -1;
  *first_time = *last_time = 0;
  while (n >= 0 && fread (&fr, sizeof fr, 1, f) == 1)
    {
      if (fr.len < sizeof fr || fr.len % 8 != 0)
        {
          fail ("frame %ld has length %u", n, fr.len);
          break;
        }
      if (fr.time > 0 && (*first_time == 0 || fr.time < *first_time))
        *first_time = fr.time;
      if (fr.time > *last_time)
        *last_time = fr.time;
      n++;
      if (fseek (f, fr.len - sizeof fr, SEEK_CUR) != 0)
        break;
    }
  fclose (f);
  return n;
}

static bool
count_frame (const SysprofCaptureFrame *frame, void *arg)
{
  (*(long *) arg)++;
  return true;
}

static void
write_sample (FILE *out, const SysprofCaptureSample *s)
{
  /* Addresses before any context marker count as user addresses, as
     Sysprof takes them; those after PERF_CONTEXT_KERNEL are the kernel's. */
  size_t kernel = 0;
  bool in_kernel = false;
  for (size_t i = 0; i < s->n_addrs; i++)
    if (s->addrs[i] >= CONTEXT_MAX)
      in_kernel = s->addrs[i] == CONTEXT_KERNEL;
    else
      kernel += in_kernel;
  fprintf (out, "%d %d %" PRId64 " %d %zu :", s->frame.pid, s->tid, s->frame.time,
           s->frame.cpu, kernel);
  in_kernel = false;
  for (size_t i = 0; i < s->n_addrs; i++)
    if (s->addrs[i] >= CONTEXT_MAX)
      in_kernel = s->addrs[i] == CONTEXT_KERNEL;
    else if (!in_kernel)
      fprintf (out, " %" PRIx64, s->addrs[i]);
  fputc ('\n', out);
}

int
main (int argc, char **argv)
{
  const char *samples_path = NULL;
  int argi = 1;
  if (argi + 1 < argc && strcmp (argv[argi], "--samples") == 0)
    {
      samples_path = argv[argi + 1];
      argi += 2;
    }
  if (argi + 1 != argc)
    {
      fprintf (stderr, "usage: sysprof-check [--samples FILE] CAPTURE\n");
      return 64;
    }
  const char *path = argv[argi];
  FILE *samples = NULL;
  if (samples_path != NULL && (samples = fopen (samples_path, "w")) == NULL)
    {
      fprintf (stderr, "sysprof-check: %s: %s\n", samples_path, strerror (errno));
      return 1;
    }

  SysprofCaptureReader *reader = sysprof_capture_reader_new (path);
  if (reader == NULL)
    {
      fprintf (stderr, "sysprof-check: the reader cannot open %s\n", path);
      return 1;
    }

  long counts[SYSPROF_CAPTURE_FRAME_LAST] = { 0 };
  long frames = 0, other = 0;
  SysprofCaptureFrameType type;
  while (sysprof_capture_reader_peek_type (reader, &type))
    {
      frames++;
      bool ok = true;
      switch (type)
        {
        case SYSPROF_CAPTURE_FRAME_SAMPLE:
          {
            const SysprofCaptureSample *s = sysprof_capture_reader_read_sample (reader);
            if ((ok = s != NULL))
              {
                if (s->frame.len != sizeof *s + s->n_addrs * sizeof s->addrs[0])
                  fail ("sample frame %ld: length %u for %u addresses", frames, s->frame.len,
                        s->n_addrs);
                if (samples != NULL)
                  write_sample (samples, s);
              }
            break;
          }
        case SYSPROF_CAPTURE_FRAME_MAP:
          {
            const SysprofCaptureMap *m = sysprof_capture_reader_read_map (reader);
            if ((ok = m != NULL) && (m->end < m->start || m->filename[0] == '\0'))
              fail ("map frame %ld: [%#" PRIx64 ", %#" PRIx64 ") `%s'", frames, m->start,
                    m->end, m->filename);
            break;
          }
        case SYSPROF_CAPTURE_FRAME_PROCESS:
          ok = sysprof_capture_reader_read_process (reader) != NULL;
          break;
        case SYSPROF_CAPTURE_FRAME_FORK:
          ok = sysprof_capture_reader_read_fork (reader) != NULL;
          break;
        case SYSPROF_CAPTURE_FRAME_EXIT:
          ok = sysprof_capture_reader_read_exit (reader) != NULL;
          break;
        default:
          other++;
          ok = sysprof_capture_reader_skip (reader);
          break;
        }
      if (!ok)
        {
          fail ("the reader cannot read frame %ld (type %d)", frames, type);
          break;
        }
      if (type < SYSPROF_CAPTURE_FRAME_LAST)
        counts[type]++;
    }

  /* A second pass through the cursor API.  */
  long cursor_frames = 0;
  sysprof_capture_reader_reset (reader);
  SysprofCaptureCursor *cursor = sysprof_capture_cursor_new (reader);
  sysprof_capture_cursor_foreach (cursor, count_frame, &cursor_frames);
  sysprof_capture_cursor_unref (cursor);

  int64_t first_time = 0, last_time = 0;
  long walked = walk_by_length (path, &first_time, &last_time);
  if (walked != frames)
    fail ("the reader read %ld frames, the file has %ld", frames, walked);
  if (cursor_frames != frames)
    fail ("the cursor visited %ld frames, the reader read %ld", cursor_frames, frames);

  int64_t start = sysprof_capture_reader_get_start_time (reader);
  int64_t end = sysprof_capture_reader_get_end_time (reader);
  /* Frames without a time (a run stopped before its first sample has only
     the maps of what was running, at time 0) say nothing of the span.  */
  if (walked > 0 && last_time > 0 && (start > first_time || end < last_time))
    fail ("header times [%" PRId64 ", %" PRId64 "] do not span the frames' [%" PRId64
          ", %" PRId64 "]", start, end, first_time, last_time);

  printf ("frames %ld\n", frames);
  printf ("samples %ld\n", counts[SYSPROF_CAPTURE_FRAME_SAMPLE]);
  printf ("maps %ld\n", counts[SYSPROF_CAPTURE_FRAME_MAP]);
  printf ("processes %ld\n", counts[SYSPROF_CAPTURE_FRAME_PROCESS]);
  printf ("forks %ld\n", counts[SYSPROF_CAPTURE_FRAME_FORK]);
  printf ("exits %ld\n", counts[SYSPROF_CAPTURE_FRAME_EXIT]);
  printf ("other %ld\n", other);
  printf ("start_time %" PRId64 "\nend_time %" PRId64 "\n", start, end);
  printf ("first_frame_time %" PRId64 "\nlast_frame_time %" PRId64 "\n", first_time,
          last_time);
  sysprof_capture_reader_unref (reader);
  if (samples != NULL && fclose (samples) != 0)
    fail ("%s: %s", samples_path, strerror (errno));
  return failures == 0 ? 0 : 1;
}
