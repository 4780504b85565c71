/* Reading a whole range of a file.  Header and code depend on nothing but
 * libc: the privileged helper links io.c too (src/ns-helper/local.mk).  */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads N bytes of FD at OFFSET into BUF, again after a short read or an
   EINTR: a pread may return less than asked without being at the end.
   Returns the bytes read (less than N only at the end of the file), or
   -errno.  */
ssize_t st_pread_full (int fd, void *buf, size_t n, uint64_t offset);
