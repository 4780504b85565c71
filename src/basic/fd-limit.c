/* The descriptor limit: see fd-limit.h.  */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "basic/fd-limit.h"
#include "basic/log.h"

static struct rlimit at_start;
static bool raised;
static atomic_bool warned;

/* fs.nr_open: what setrlimit accepts at most for RLIMIT_NOFILE, which an
   unlimited hard limit (RLIM_INFINITY) cannot be raised to.  */
static rlim_t
kernel_max (void)
{
  unsigned long long n = 0;
  FILE *f = fopen ("/proc/sys/fs/nr_open", "re");
  if (f != NULL)
    {
      if (fscanf (f, "%llu", &n) != 1)
        n = 0;
      fclose (f);
    }
  return n > 0 ? (rlim_t) n : 1024 * 1024;
}

void
st_fd_limit_raise (void)
{
  if (getrlimit (RLIMIT_NOFILE, &at_start) != 0 || at_start.rlim_cur >= at_start.rlim_max)
    return;
  struct rlimit want = at_start;
  want.rlim_cur = at_start.rlim_max;
  if (want.rlim_cur == RLIM_INFINITY)
    want.rlim_cur = kernel_max ();
  /* Above fs.nr_open setrlimit fails: halved until it takes.  */
  while (want.rlim_cur > at_start.rlim_cur && !raised)
    {
      if (setrlimit (RLIMIT_NOFILE, &want) == 0)
        raised = true;
      else if (errno != EPERM && errno != EINVAL)
        break;
      else
        want.rlim_cur /= 2;
    }
}

void
st_fd_limit_restore (void)
{
  if (raised)
    setrlimit (RLIMIT_NOFILE, &at_start);
}

int
st_fd_limit_check (int err, const char *path)
{
  if ((err != EMFILE && err != ENFILE) || atomic_exchange (&warned, true))
    return err;
  const char *name = path != NULL ? path : "a file";
  if (err == ENFILE)
    {
      st_warning ("%s: %s: the system's table of open files is full (fs.file-max): files "
                  "opened from now on may be reported missing",
                  name, strerror (err));
      return err;
    }
  struct rlimit now = { 0, 0 };
  getrlimit (RLIMIT_NOFILE, &now);
  st_warning ("%s: %s: this process may open %llu (RLIMIT_NOFILE, %s): files opened from now "
              "on may be reported missing; raise the hard limit (ulimit -Hn, LimitNOFILE= of "
              "a service)",
              name, strerror (err), (unsigned long long) now.rlim_cur,
              raised ? "raised to its hard limit at start" : "at its hard limit");
  return err;
}
