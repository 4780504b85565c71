#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/input.h"

#define BUFFER_SIZE (1u << 20)

struct st_input {
  int fd;
  bool owns_fd;
  bool seekable;
  uint64_t size;
  char *name;
  uint8_t *buf;
  size_t buf_start, buf_end;  /* valid bytes in buf */
  uint64_t buf_offset;        /* input offset of buf[0] */
};

int
st_input_open (const char *path, struct st_input **out)
{
  struct st_input *in = calloc (1, sizeof *in);
  if (in == NULL)
    return -ENOMEM;
  in->buf = malloc (BUFFER_SIZE);
  in->name = strdup (strcmp (path, "-") == 0 ? "<stdin>" : path);
  if (in->buf == NULL || in->name == NULL)
    {
      st_input_free (in);
      return -ENOMEM;
    }
  if (strcmp (path, "-") == 0)
    in->fd = STDIN_FILENO;
  else
    {
      in->fd = open (path, O_RDONLY | O_CLOEXEC);
      if (in->fd < 0)
        {
          int r = -errno;
          st_input_free (in);
          return r;
        }
      in->owns_fd = true;
    }
  struct stat st;
  if (fstat (in->fd, &st) == 0 && S_ISREG (st.st_mode))
    {
      in->seekable = lseek (in->fd, 0, SEEK_CUR) == 0;
      in->size = st.st_size;
    }
  if (S_ISDIR (st.st_mode))
    {
      st_input_free (in);
      return -EISDIR;
    }
  *out = in;
  return 0;
}

void
st_input_free (struct st_input *in)
{
  if (in == NULL)
    return;
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

uint64_t
st_input_size (const struct st_input *in)
{
  return in->size;
}

uint64_t
st_input_offset (const struct st_input *in)
{
  return in->buf_offset + in->buf_start;
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

ssize_t
st_input_peek (struct st_input *in, size_t n, const uint8_t **data)
{
  ssize_t r = fill (in, n);
  if (r >= 0)
    *data = in->buf + in->buf_start;
  return r;
}

ssize_t
st_input_read (struct st_input *in, void *buf, size_t n)
{
  size_t done = 0;
  while (done < n)
    {
      ssize_t r = fill (in, n - done);
      if (r < 0)
        return r;
      if (r == 0)
        break;
      memcpy ((uint8_t *) buf + done, in->buf + in->buf_start, r);
      in->buf_start += r;
      done += r;
    }
  return done;
}

ssize_t
st_input_skip (struct st_input *in, uint64_t n)
{
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
