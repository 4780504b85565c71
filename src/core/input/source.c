#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/input/source.h"

static void
fill (struct st_source_error *err, uint64_t offset, const char *fmt, va_list ap)
{
  err->offset = offset;
  vsnprintf (err->message, sizeof err->message, fmt, ap);
}

int
st_source_bad_input (struct st_source_error *err, uint64_t offset, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fill (err, offset, fmt, ap);
  va_end (ap);
  return -EBADMSG;
}

int
st_source_unsupported (struct st_source_error *err, uint64_t offset, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fill (err, offset, fmt, ap);
  va_end (ap);
  return -ENOTSUP;
}

static const struct st_source_ops *const sources[] = {
  &st_source_perf,
  &st_source_sysprof,
};

const struct st_source_ops *
st_source_detect (const uint8_t *magic, size_t len)
{
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
    if (sources[i]->probe (magic, len))
      return sources[i];
  return NULL;
}

const char *
st_source_names (void)
{
  return "a perf.data file or pipe, or a Sysprof capture";
}
