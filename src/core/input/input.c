#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/array.h"
#include "basic/cleanup.h"
#include "basic/io-retry.h"
#include "basic/io.h"
#include "basic/why.h"
#include "core/input/input.h"

/* One transparent huge page: see buffer_new.  */
#define BUFFER_SIZE (2u << 20)
/* st_input_open_small's: one of many inputs read side by side, each at
   least a record's 64 KiB, and an ordinary mapping whose pages are only
   there once read into.  */
#define SMALL_BUFFER_SIZE (128u << 10)
/* Released buffers kept for reuse: a fresh one costs its page faults.  */
#define SPARES 8

/* A buffer, aligned so that the kernel can back it with one huge page:
   on this project's VMs every page fault costs 15-40 us (a read(2) into a
   fresh 1 MiB buffer: 256 of them, more than the copy), a huge page one
   fault for 512 pages.  Where huge pages are off it is an ordinary
   mapping.  */
static uint8_t *
buffer_new (size_t size)
{
#ifdef __SANITIZE_ADDRESS__
  /* The sanitizer sees overruns of the heap's blocks, not of mappings.  */
  return malloc (size);
#else
  if (size != BUFFER_SIZE)
    {
      uint8_t *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      return p == MAP_FAILED ? NULL : p;
    }
  size_t n = 2 * BUFFER_SIZE;
  uint8_t *p = mmap (NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  uint8_t *b = (uint8_t *) (((uintptr_t) p + BUFFER_SIZE - 1) & ~((uintptr_t) BUFFER_SIZE - 1));
  if (b > p)
    munmap (p, b - p);
  if (b + BUFFER_SIZE < p + n)
    munmap (b + BUFFER_SIZE, p + n - (b + BUFFER_SIZE));
#ifdef MADV_HUGEPAGE
  madvise (b, BUFFER_SIZE, MADV_HUGEPAGE);
#endif
  return b;
#endif
}

static void
buffer_free (uint8_t *b, size_t size)
{
#ifdef __SANITIZE_ADDRESS__
  free (b);
#else
  if (b != NULL)
    munmap (b, size);
#endif
}

/* Every input, a regular file too, is read through a buffer with read(2),
   not mapped: on this project's VMs the first touch of each page of a
   mapped recording cost more than copying it (a -j 1 run on a 268 MB
   recording: 196-265 ms of CPU read, 411-435 ms mapped, even with the
   mapping populated ahead by MADV_POPULATE_READ), and the reader's buffer
   stays in the CPU's caches.  How much a page fault costs depends on the
   host: one VM of this project's kind faulted cheaply, and mapping won
   there (0.048 s against 0.070 s on a 202 MB recording), so it was tried
   for a while; on the next (a PVM guest, where a fault traps to the
   hypervisor) the same recording took 0.14-0.17 s mapped and 0.06-0.07 s
   read, and touching each page of a mapping took 100-145 ms whether
   faulted, populated ahead (MADV_POPULATE_READ) or given back behind,
   against 26 ms to read(2) the whole file.  A read costs the same
   everywhere; and a mapped file can be cut short under the reader (a
   SIGBUS), a read one cannot.  A source that keeps records until it says
   it is done with them (st_input_keep) gets them where they were read: a
   full buffer is then set aside whole, not moved, and a new one is read,
   so that a sample's 8 KiB is neither copied nor allocated once more.  */
struct kept {
  uint8_t *buf;
  uint64_t end;               /* input offset past its last consumed byte */
};

struct st_input {
  int fd;
  bool owns_fd;
  bool seekable;
  uint64_t size;
  char *name;
  /* buffered stream */
  uint8_t *buf;
  size_t buf_size;            /* of buf, the kept buffers and the spares */
  size_t buf_start, buf_end;  /* valid bytes in buf */
  uint64_t buf_offset;        /* input offset of buf[0] */
  volatile sig_atomic_t *interrupt;  /* st_input_set_interrupt */
  /* st_input_keep: buffers set aside, oldest first, until released */
  bool keep;
  uint64_t released;          /* st_input_release_before's highest offset */
  uint64_t hold;              /* st_input_hold: nothing from here on goes */
  struct kept *kept;
  size_t n_kept, cap_kept;
  uint8_t *spare[SPARES];     /* released buffers, for the next ones */
  size_t n_spare;
};

void
st_input_set_interrupt (struct st_input *in, volatile sig_atomic_t *flag)
{
  in->interrupt = flag;
}

ST_DEFINE_CLEANUP (input_freep, struct st_input, st_input_free)

/* The rest of opening IN, whose fd is set: what kind of file it is.  */
static int
input_set_up (struct st_input *in)
{
  struct stat st;
  if (fstat (in->fd, &st) != 0)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (S_ISREG (st.st_mode))
    {
      /* Read ahead of us, twice the default window.  */
      posix_fadvise (in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      in->seekable = lseek (in->fd, 0, SEEK_CUR) == 0;
      in->size = st.st_size;
    }
  in->buf = buffer_new (in->buf_size);
  if (in->buf == NULL)
    return -ENOMEM;
  return 0;
}

/* An input reading FD, which it closes at the end when OWNS_FD (also when
   this fails); NAME is for messages.  */
static int
input_from_fd (int fd, bool owns_fd, const char *name, size_t buf_size, struct st_input **out)
{
  _cleanup_ (input_freep) struct st_input *in = calloc (1, sizeof *in);
  if (in == NULL)
    {
      if (owns_fd)
        close (fd);
      return -ENOMEM;
    }
  in->fd = fd;
  in->owns_fd = owns_fd;
  in->hold = UINT64_MAX;
  in->buf_size = buf_size;
  in->name = strdup (name);
  if (in->name == NULL)
    return -ENOMEM;
  int r = input_set_up (in);
  if (r < 0)
    return r;
  *out = ST_TAKE_PTR (in);
  return 0;
}

int
st_input_open (const char *path, struct st_input **out)
{
  if (strcmp (path, "-") == 0)
    return input_from_fd (STDIN_FILENO, false, "<stdin>", BUFFER_SIZE, out);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  return input_from_fd (fd, true, path, BUFFER_SIZE, out);
}

int
st_input_open_fd (int fd, const char *name, struct st_input **out)
{
  return input_from_fd (fd, true, name, BUFFER_SIZE, out);
}

int
st_input_open_small (int fd, const char *name, struct st_input **out)
{
  return input_from_fd (fd, true, name, SMALL_BUFFER_SIZE, out);
}

void
st_input_free (struct st_input *in)
{
  if (in == NULL)
    return;
  if (in->owns_fd)
    close (in->fd);
  for (size_t i = 0; i < in->n_kept; i++)
    buffer_free (in->kept[i].buf, in->buf_size);
  free (in->kept);
  for (size_t i = 0; i < in->n_spare; i++)
    buffer_free (in->spare[i], in->buf_size);
  buffer_free (in->buf, in->buf_size);
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
  return in->keep;
}

void
st_input_keep (struct st_input *in)
{
  in->keep = true;
  in->released = in->buf_offset + in->buf_start;
}

void
st_input_hold (struct st_input *in, uint64_t offset)
{
  in->hold = offset;
}

bool
st_input_holds (const struct st_input *in, const void *p)
{
  const uint8_t *b = p;
  if (!in->keep)
    return false;
  if (b >= in->buf && b < in->buf + in->buf_end)
    return true;
  for (size_t i = 0; i < in->n_kept; i++)
    if (b >= in->kept[i].buf && b < in->kept[i].buf + in->buf_size)
      return true;
  return false;
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
  if (n > in->buf_size)
    n = in->buf_size;
  if (in->buf_end - in->buf_start >= n)
    return n;
  if (in->buf_start > 0 && in->keep && in->released < in->buf_offset + in->buf_start)
    {
      /* Records in this buffer are still held: set it aside and carry
         the unconsumed tail over to a fresh one.  */
      if (ST_GROW (in->kept, in->cap_kept, in->n_kept, 16) < 0)
        return -ENOMEM;
      uint8_t *fresh = in->n_spare > 0 ? in->spare[--in->n_spare] : buffer_new (in->buf_size);
      if (fresh == NULL)
        return -ENOMEM;
      memcpy (fresh, in->buf + in->buf_start, in->buf_end - in->buf_start);
      in->kept[in->n_kept++] = (struct kept) { in->buf, in->buf_offset + in->buf_start };
      in->buf = fresh;
      in->buf_offset += in->buf_start;
      in->buf_end -= in->buf_start;
      in->buf_start = 0;
    }
  else if (in->buf_start > 0)
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
      ssize_t r = st_read_retry (in->fd, in->buf + in->buf_end, in->buf_size - in->buf_end);
      if (r < 0)
        return r;
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
st_input_next (struct st_input *in, size_t n, const uint8_t **data)
{
  ssize_t r = st_input_peek (in, n, data);
  if (r > 0)
    in->buf_start += r;
  return r;
}

int
st_input_next_record (struct st_input *in, size_t n, const uint8_t **data,
                      const char *what, uint32_t type, uint64_t offset,
                      struct st_why *err)
{
  ssize_t r = st_input_next (in, n, data);
  if (r < 0)
    return r;
  if ((size_t) r < n)
    return st_why_at (err, EBADMSG, offset, "truncated %s: type %" PRIu32 " says %zu bytes, "
                      "the input has %zd", what, type, n, r);
  return 0;
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
  uint64_t done = 0;
  while (done < n)
    {
      uint64_t want = n - done;
      ssize_t r = fill (in, want > in->buf_size ? in->buf_size : want);
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
  /* Offsets before a seek mean other bytes: kept records, if any, go
     with the input (sources seek only while reading headers).  */
  if (in->keep && in->released < in->buf_offset + in->buf_start)
    {
      if (ST_GROW (in->kept, in->cap_kept, in->n_kept, 16) < 0)
        return -ENOMEM;
      uint8_t *fresh = buffer_new (in->buf_size);
      if (fresh == NULL)
        return -ENOMEM;
      in->kept[in->n_kept++] = (struct kept) { in->buf, UINT64_MAX };
      in->buf = fresh;
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
  return st_pread_full (in->fd, buf, n, offset);
}

void
st_input_release_before (struct st_input *in, uint64_t offset)
{
  if (offset > in->hold)
    offset = in->hold;
  if (!in->keep || offset <= in->released)
    return;
  in->released = offset;
  size_t done = 0;
  while (done < in->n_kept && in->kept[done].end <= offset)
    {
      if (in->n_spare < SPARES)
        in->spare[in->n_spare++] = in->kept[done].buf;
      else
        buffer_free (in->kept[done].buf, in->buf_size);
      done++;
    }
  if (done == 0)
    return;
  memmove (in->kept, in->kept + done, (in->n_kept - done) * sizeof *in->kept);
  in->n_kept -= done;
}
