#include "config.h"

#include <stdio.h>

#include "basic/log.h"

static int log_level = ST_LOG_WARNING;

void
st_log_set_level (int level)
{
  log_level = level;
}

int
st_log_get_level (void)
{
  return log_level;
}

void
st_log (enum st_log_level level, const char *fmt, ...)
{
  if ((int) level > log_level)
    return;
  va_list ap;
  va_start (ap, fmt);
  fputs (PACKAGE_NAME ": ", stderr);
  if (level == ST_LOG_WARNING)
    fputs ("warning: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
}
