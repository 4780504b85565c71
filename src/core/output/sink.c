#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/output/sink.h"

static const struct st_sink_ops *const sinks[] = {
  &st_sink_text,
  &st_sink_folded,
  &st_sink_json,
  &st_sink_svg,
  &st_sink_pprof,
  &st_sink_sysprof,
};

const struct st_sink_ops *
st_sink_lookup (const char *name)
{
  for (size_t i = 0; i < sizeof sinks / sizeof sinks[0]; i++)
    if (strcmp (sinks[i]->name, name) == 0)
      return sinks[i];
  return NULL;
}

const char *
st_sink_names (void)
{
  return "text, folded, json, svg, pprof, sysprof";
}

const char *
st_frame_display_name (const struct st_frame *f, char *buf, size_t size)
{
  if (f->symbol != NULL)
    return f->symbol;
  if (f->module != NULL)
    {
      const char *slash = strrchr (f->module, '/');
      snprintf (buf, size, "[%s]", slash ? slash + 1 : f->module);
      return buf;
    }
  return "[unknown]";
}

int
st_sink_write (FILE *out, const void *data, size_t n)
{
  errno = 0;
  if (fwrite_unlocked (data, 1, n, out) == n)
    return 0;
  return errno != 0 ? -errno : -EIO;
}

int
st_sink_flush (FILE *out)
{
  /* An error of an earlier write the sink did not check (fputs in a
     loop) left errno set, and stdio retries the buffer at the flush,
     which fails the same way: its errno is the one to tell.  */
  errno = 0;
  if (fflush (out) != 0)
    return errno != 0 ? -errno : -EIO;
  return ferror (out) ? -EIO : 0;
}
