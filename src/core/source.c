#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/source.h"

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
