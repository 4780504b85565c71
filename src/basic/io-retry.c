/* See io-retry.h.  */
#include "config.h"

#include <errno.h>
#include <unistd.h>

#include "basic/io-retry.h"

ssize_t
st_read_retry (int fd, void *buf, size_t n)
{
  ssize_t r;
  do
    r = read (fd, buf, n);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : r;
}
