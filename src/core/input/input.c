#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "core/input/input.h"

#define BUFFER_SIZE (1u << 20)

/* Regular files are mapped: records are then read in place, without a copy
   through read(2) and into the ordering queue.  Pipes go through a buffer.  */
struct st_input {
  int fd;
  bool owns_fd;
  bool seekable;
  uint64_t size;
  char *name;
  /* mapped file */
  const uint8_t *map;
  uint64_t pos;
  uint64_t released;          /* pages before this left memory */
  uint64_t populated;         /* pages before this are mapped in */
  /* buffered stream */
  uint8_t *buf;
  size_t buf_start, buf_end;  /* valid bytes in buf */
  uint64_t buf_offset;        /* input offset of buf[0] */
  volatile sig_atomic_t *interrupt;  /* st_input_set_interrupt */
};

void
st_input_set_interrupt (struct st_input *in, volatile sig_atomic_t *flag)
{
  in->interrupt = flag;
}

static void
input_freep (struct st_input **in)
{
  st_input_free (*in);
}

int
st_input_open (const char *path, struct st_input **out)
{
  _cleanup_ (input_freep) struct st_input *in = calloc (1, sizeof *in);
  if (in == NULL)
    return -ENOMEM;
  in->name = strdup (strcmp (path, "-") == 0 ? "<stdin>" : path);
  if (in->name == NULL)
    return -ENOMEM;
  if (strcmp (path, "-") == 0)
    in->fd = STDIN_FILENO;
  else
    {
      in->fd = open (path, O_RDONLY | O_CLOEXEC);
      if (in->fd < 0)
        return -errno;
      in->owns_fd = true;
    }
  struct stat st;
  if (fstat (in->fd, &st) != 0)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (S_ISREG (st.st_mode) && st.st_size > 0 && lseek (in->fd, 0, SEEK_CUR) == 0)
    {
      void *map = mmap (NULL, st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
      if (map != MAP_FAILED)
        {
          in->map = map;
          in->seekable = true;
          in->size = st.st_size;
          madvise (map, st.st_size, MADV_SEQUENTIAL);
          *out = ST_TAKE_PTR (in);
          return 0;
        }
    }
  if (S_ISREG (st.st_mode))
    {
      in->seekable = lseek (in->fd, 0, SEEK_CUR) == 0;
      in->size = st.st_size;
    }
  in->buf = malloc (BUFFER_SIZE);
  if (in->buf == NULL)
    return -ENOMEM;
  *out = ST_TAKE_PTR (in);
  return 0;
}

void
st_input_free (struct st_input *in)
{
  if (in == NULL)
    return;
  if (in->map != NULL)
    munmap ((void *) in->map, in->size);
  if (in->owns_fd)
    close (in->fd);
  free (in->buf);
  free (in->name);
  free (in);
}

const char *
st_input_name (const struct st_input *in)
{
  return in->name;
}

bool
st_input_seekable (const struct st_input *in)
{
  return in->seekable;
}

bool
st_input_stable (const struct st_input *in)
{
  return in->map != NULL;
}

uint64_t
st_input_size (const struct st_input *in)
{
  return in->size;
}

uint64_t
st_input_offset (const struct st_input *in)
{
  return in->map ? in->pos : in->buf_offset + in->buf_start;
}

/* Mapped input: how many of the next N bytes exist.  */
static size_t
map_avail (const struct st_input *in, uint64_t n)
{
  uint64_t left = in->pos < in->size ? in->size - in->pos : 0;
  return n < left ? n : left;
}

/* Waits until the stream has bytes or its end.  -EINTR when *INTERRUPT is
   set: before the wait, or by the signal that ends it.  The signals are
   blocked from the check until ppoll waits, so that one arriving in
   between is not slept through.  */
static int
wait_readable (struct st_input *in)
{
  sigset_t block, old;
  sigemptyset (&block);
  sigaddset (&block, SIGINT);
  sigaddset (&block, SIGTERM);
  pthread_sigmask (SIG_BLOCK, &block, &old);
  int r = 0;
  for (;;)
    {
      if (*in->interrupt)
        {
          r = -EINTR;
          break;
        }
      struct pollfd p = { .fd = in->fd, .events = POLLIN };
      if (ppoll (&p, 1, NULL, &old) >= 0)
        break;
      if (errno != EINTR)
        {
          r = -errno;
          break;
        }
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  return r;
}

/* Tops up the buffer until it holds N bytes or the input ends.  */
static ssize_t
fill (struct st_input *in, size_t n)
{
  if (n > BUFFER_SIZE)
    n = BUFFER_SIZE;
  if (in->buf_end - in->buf_start >= n)
    return n;
  if (in->buf_start > 0)
    {
      memmove (in->buf, in->buf + in->buf_start, in->buf_end - in->buf_start);
      in->buf_offset += in->buf_start;
      in->buf_end -= in->buf_start;
      in->buf_start = 0;
    }
  while (in->buf_end < n)
    {
      if (in->interrupt != NULL)
        {
          int w = wait_readable (in);
          if (w < 0)
            return w;
        }
      ssize_t r = read (in->fd, in->buf + in->buf_end, BUFFER_SIZE - in->buf_end);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      if (r == 0)
        break;
      in->buf_end += r;
    }
  return in->buf_end - in->buf_start < n ? in->buf_end - in->buf_start : n;
}

/* Maps the pages ahead of POS in, a few MiB at a time: one madvise
   instead of a page fault every 16 pages, which in a virtual machine cost
   more than reading the records (a tenth of a run's CPU time).  */
static void
map_populate (struct st_input *in)
{
  const uint64_t chunk = 2u << 20;
  if (in->pos + chunk / 2 < in->populated || in->populated >= in->size)
    return;
  uint64_t page = (uint64_t) getpagesize ();
  uint64_t start = in->pos > in->populated ? in->pos & ~(page - 1) : in->populated;
  uint64_t end = start + chunk < in->size ? start + chunk : in->size;
  /* Only a hint: before Linux 5.14 it fails, and the pages fault in.  */
  madvise ((void *) (in->map + start), end - start, MADV_POPULATE_READ);
  in->populated = end;
}

ssize_t
st_input_peek (struct st_input *in, size_t n, const uint8_t **data)
{
  if (in->map)
    {
      map_populate (in);
      *data = in->map + in->pos;
      return map_avail (in, n);
    }
  ssize_t r = fill (in, n);
  if (r >= 0)
    *data = in->buf + in->buf_start;
  return r;
}

ssize_t
st_input_next (struct st_input *in, size_t n, const uint8_t **data)
{
  ssize_t r = st_input_peek (in, n, data);
  if (r > 0)
    {
      if (in->map)
        in->pos += r;
      else
        in->buf_start += r;
    }
  return r;
}

ssize_t
st_input_read (struct st_input *in, void *buf, size_t n)
{
  size_t done = 0;
  while (done < n)
    {
      const uint8_t *p;
      ssize_t r = st_input_next (in, n - done, &p);
      if (r < 0)
        return r;
      if (r == 0)
        break;
      memcpy ((uint8_t *) buf + done, p, r);
      done += r;
    }
  return done;
}

ssize_t
st_input_skip (struct st_input *in, uint64_t n)
{
  if (in->map)
    {
      size_t r = map_avail (in, n);
      in->pos += r;
      return r;
    }
  uint64_t done = 0;
  while (done < n)
    {
      uint64_t want = n - done;
      ssize_t r = fill (in, want > BUFFER_SIZE ? BUFFER_SIZE : want);
      if (r < 0)
        return r;
      if (r == 0)
        break;
      in->buf_start += r;
      done += r;
    }
  return done;
}

int
st_input_seek (struct st_input *in, uint64_t offset)
{
  if (!in->seekable)
    return -ESPIPE;
  if (in->map)
    {
      in->pos = offset;
      return 0;
    }
  if (lseek (in->fd, offset, SEEK_SET) < 0)
    return -errno;
  in->buf_start = in->buf_end = 0;
  in->buf_offset = offset;
  return 0;
}

ssize_t
st_input_pread (struct st_input *in, void *buf, size_t n, uint64_t offset)
{
  if (!in->seekable)
    return -ESPIPE;
  if (in->map)
    {
      /* OFFSET comes from the file: past its end, not even the pointer
         map + OFFSET may be formed.  */
      if (offset >= in->size)
        return 0;
      uint64_t left = in->size - offset;
      size_t r = n < left ? n : left;
      memcpy (buf, in->map + offset, r);
      return r;
    }
  size_t done = 0;
  while (done < n)
    {
      ssize_t r = pread (in->fd, (uint8_t *) buf + done, n - done, offset + done);
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

void
st_input_release_before (struct st_input *in, uint64_t offset)
{
  if (in->map == NULL)
    return;
  const uint64_t chunk = 4u << 20;  /* give memory back in steps of 4 MiB */
  uint64_t page = (uint64_t) getpagesize ();
  uint64_t end = offset & ~(page - 1);
  if (end < in->released + chunk)
    return;
  madvise ((void *) (in->map + in->released), end - in->released, MADV_DONTNEED);
  in->released = end;
}
