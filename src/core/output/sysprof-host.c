/* The capture's time and CPU model (see sysprof-host.h).  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "basic/cleanup.h"
#include "core/output/sysprof-host.h"

static int64_t
clock_ns (clockid_t id)
{
  struct timespec ts;
  clock_gettime (id, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The wall-clock time of the samples' clock's TIME: as perf's CLOCK_DATA
   says it; else, for a recording of this boot (live, a pipe, a file
   written since the machine started), from this machine's clocks now
   (perf's clock and Sysprof's are CLOCK_MONOTONIC); else from the file's
   time at its last sample (a copy of the file has a later one, so it comes
   last); else now.  */
static int64_t
wall_of (const struct st_sysprof_clock *c, int64_t time)
{
  if (c->wall_ns > 0 && !c->from_file)
    return (int64_t) c->wall_ns + (time - (int64_t) c->wall_at);
  int64_t real = clock_ns (CLOCK_REALTIME);
  int64_t booted_at = real - clock_ns (CLOCK_BOOTTIME);
  int64_t mono = clock_ns (CLOCK_MONOTONIC);
  if (time > 0 && time <= mono && (c->wall_ns == 0 || (int64_t) c->wall_ns >= booted_at))
    return real - (mono - time);
  if (c->wall_ns > 0)
    return (int64_t) c->wall_ns + (time - (int64_t) c->wall_at);
  return real;
}

void
st_sysprof_capture_time (const struct st_sysprof_clock *clock, int64_t time, char *out,
                         size_t size)
{
  time_t t = (time_t) (wall_of (clock, time) / 1000000000);
  struct tm tm;
  memset (out, 0, size);
  strftime (out, size, "%Y-%m-%dT%H:%M:%SZ", gmtime_r (&t, &tm));
}

int
st_sysprof_cpuinfo_text (const char *model, char **text, size_t *len)
{
  *text = NULL;
  *len = 0;
  if (model != NULL && model[0] != '\0')
    {
      int n = asprintf (text, "model name\t: %s\n", model);
      if (n < 0)
        {
          *text = NULL;
          return -ENOMEM;
        }
      *len = n;
      return 0;
    }
  _cleanup_fclose_ FILE *f = fopen ("/proc/cpuinfo", "re");
  if (f == NULL)
    return 0;   /* no CPU model shown: not worth failing a capture */
  _cleanup_free_ char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;)
    {
      if (n + 4096 > cap)
        {
          char *t = realloc (buf, cap = n + 65536);
          if (t == NULL)
            return -ENOMEM;
          buf = t;
        }
      size_t got = fread (buf + n, 1, cap - n, f);
      n += got;
      if (got == 0 || n > (4u << 20))
        break;
    }
  *len = n;
  *text = ST_TAKE_PTR (buf);
  return 0;
}
