/* Scope-bound release of fds and heap memory, as systemd and bubblewrap do
 * it: a variable declared _cleanup_free_ or _cleanup_close_ is released on
 * every path out of its block, so an early "return -errno" cannot leak.
 * Ownership leaves the variable explicitly, with ST_TAKE_PTR/ST_TAKE_FD.
 *
 *   _cleanup_close_ int fd = open (...);
 *   _cleanup_free_ char *buf = malloc (n);
 *   ...
 *   *out = ST_TAKE_PTR (buf);   (buf is NULL now: nothing is freed)
 *   return 0;
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(fn) __attribute__ ((cleanup (fn)))

/* Defines NAME, a cleanup for a TYPE * variable that calls FREE_FN (which
   takes NULL) on it: _cleanup_ (NAME) TYPE *x = ...; as systemd's
   DEFINE_TRIVIAL_CLEANUP_FUNC.  */
#define ST_DEFINE_CLEANUP(name, type, free_fn) \
  static inline void name (type **p) { free_fn (*p); }

static inline void
st_freep (void *p)
{
  free (*(void **) p);
}

/* close() that keeps errno: the cleanup runs after the code that set the
   errno a caller is about to report.  */
static inline void
st_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

static inline void
st_fclosep (FILE **f)
{
  if (*f != NULL)
    {
      int saved = errno;
      fclose (*f);
      errno = saved;
    }
}

#define _cleanup_free_ _cleanup_ (st_freep)
#define _cleanup_close_ _cleanup_ (st_closep)
#define _cleanup_fclose_ _cleanup_ (st_fclosep)

/* The value of P, leaving NULL behind (the cleanup then frees nothing).  */
#define ST_TAKE_PTR(p) \
  ({ __typeof__ (p) st_take_ptr_ = (p); (p) = NULL; st_take_ptr_; })
/* The fd in FD, leaving -1 behind.  */
#define ST_TAKE_FD(fd) \
  ({ int st_take_fd_ = (fd); (fd) = -1; st_take_fd_; })
