/* One read(2) that a signal does not cut short: the loop every reader of
 * a descriptor would otherwise repeat around read.  Depends on nothing but
 * libc.  */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Reads up to N bytes of FD into BUF, again after EINTR.  Returns the
   bytes read (0 at the end), or -errno.  */
ssize_t st_read_retry (int fd, void *buf, size_t n);
