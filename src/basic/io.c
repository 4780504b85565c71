/* See io.h.  */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "basic/io.h"

ssize_t
st_pread_full (int fd, void *buf, size_t n, uint64_t offset)
{
  size_t done = 0;
  while (done < n)
    {
      ssize_t r = pread (fd, (char *) buf + done, n - done, offset + done);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      if (r == 0)
        break;
      done += r;
    }
  return done;
}
