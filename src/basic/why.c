/* See why.h.  */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "basic/why.h"

static int why_vset_at (struct st_why *why, int err, uint64_t offset, const char *fmt,
                        va_list ap) __attribute__ ((format (printf, 4, 0)));

static int
why_vset_at (struct st_why *why, int err, uint64_t offset, const char *fmt, va_list ap)
{
  if (why != NULL)
    {
      why->offset = offset;
      why->input = NULL;
      vsnprintf (why->text, sizeof why->text, fmt, ap);
    }
  return -err;
}

int
st_why_at (struct st_why *why, int err, uint64_t offset, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int ret = why_vset_at (why, err, offset, fmt, ap);
  va_end (ap);
  return ret;
}

int
st_why_vset (struct st_why *why, int err, const char *fmt, va_list ap)
{
  return why_vset_at (why, err, ST_WHY_NO_OFFSET, fmt, ap);
}

void
st_why_clear (struct st_why *why)
{
  if (why != NULL)
    {
      why->offset = ST_WHY_NO_OFFSET;
      why->input = NULL;
      why->text[0] = '\0';
    }
}
