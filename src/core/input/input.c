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
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "basic/array.h"
#include "basic/cleanup.h"
#include "basic/io-retry.h"
#include "basic/io.h"
#include "basic/log.h"
#include "basic/why.h"
#include "core/input/input.h"
#include "core/input/input-sigbus.h"

/* One transparent huge page: see buffer_new.  */
#define BUFFER_SIZE (2u << 20)
/* Released buffers kept for reuse: a fresh one costs its page faults.  */
#define SPARES 8

/* A buffer, aligned so that the kernel can back it with one huge page:
   on this project's VMs every page fault costs 15-40 us (a read(2) into a
   fresh 1 MiB buffer: 256 of them, more than the copy), a huge page one
   fault for 512 pages.  Where huge pages are off it is an ordinary
   mapping.  */
static uint8_t *
buffer_new (void)
{
#ifdef __SANITIZE_ADDRESS__
  /* The sanitizer sees overruns of the heap's blocks, not of mappings.  */
  return malloc (BUFFER_SIZE);
#else
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
buffer_free (uint8_t *b)
{
#ifdef __SANITIZE_ADDRESS__
  free (b);
#else
  if (b != NULL)
    munmap (b, BUFFER_SIZE);
#endif
}

/* A regular file that only we can change is mapped, not read: the reader
   then walks the page cache itself, where read(2) copied all of it (a -j 1
   run on a 202 MB recording spent 40.8% of its time in the kernel's
   _copy_to_iter; touching every page of the mapping, 16 pages per fault
   with the kernel's fault-around, costs 2-3 ms against read(2)'s 25-32 ms,
   quiet machine).  Pages behind the reader (behind what st_input_keep's
   holders still use) are given back in steps of DROP_STEP, so that the
   resident set stays flat: for a private mapping of a file that is never
   written, MADV_DONTNEED only unmaps, and a page touched again is faulted
   in from the page cache, so a late reader is never wrong, only slower.

   Every other input is read through buffers with read(2).  A source that
   keeps records until it says it is done with them (st_input_keep) gets
   them where they were read: a full buffer is then set aside whole, not
   moved, and a new one is read, so that a sample's 8 KiB is neither
   copied nor allocated once more.  */
#define DROP_STEP (4u << 20)

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
  /* buffered stream, or the whole mapped file (buf_offset 0, buf_end the
     size) */
  uint8_t *buf;
  size_t buf_start, buf_end;  /* valid bytes in buf */
  uint64_t buf_offset;        /* input offset of buf[0] */
  bool mapped;
  bool sigbus_said;           /* mapped: a SIGBUS, reported */
  uint64_t dropped;           /* mapped: pages before it given back */
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

/* Whether the file open on FD may be mapped: a mapping whose file is cut
   short raises SIGBUS at the next touch, so only a file that no one but
   us (and root) can truncate, on a filesystem whose pages are its own:
   ours, not writable by group or others (an ACL's mask is the group
   bits), open for writing nowhere (a writer that opened it before a chmod
   could still cut it: a read lease is refused while any process has it
   open for writing), on a disk or memory filesystem (not FUSE or a
   network filesystem, whose server can change it, nor an overlay, whose
   file may be any of those underneath).  Anything else is read.  An I/O
   error still raises SIGBUS: input-sigbus.c turns it into an error.  On a
   32-bit system only a small file: a large one would take the address
   space the unwinding needs.  */
static bool
map_safe (int fd, const struct stat *st)
{
  uint64_t most = sizeof (void *) < 8 ? (256u << 20) : SIZE_MAX;
  if (st->st_size <= 0 || (uint64_t) st->st_size > most
      || st->st_uid != geteuid () || (st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return false;
  struct statfs fs;
  if (fstatfs (fd, &fs) != 0)
    return false;
  switch ((unsigned long) fs.f_type)
    {
    case EXT4_SUPER_MAGIC:      /* ext2, ext3 and ext4 */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
      break;
    default:
      return false;
    }
  /* A writer's open between the two calls breaks the lease with a
     signal, SIGIO by default, which would end the run: SIGURG, which is
     ignored unless handled, is asked for instead.  */
  if (fcntl (fd, F_SETSIG, SIGURG) != 0 || fcntl (fd, F_SETLEASE, F_RDLCK) != 0)
    return false;
  fcntl (fd, F_SETLEASE, F_UNLCK);
  return true;
}

int
st_input_open (const char *path, struct st_input **out)
{
  _cleanup_ (input_freep) struct st_input *in = calloc (1, sizeof *in);
  if (in == NULL)
    return -ENOMEM;
  in->hold = UINT64_MAX;
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
  if (S_ISREG (st.st_mode))
    {
      /* Read ahead of us, twice the default window.  */
      posix_fadvise (in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
      in->seekable = lseek (in->fd, 0, SEEK_CUR) == 0;
      in->size = st.st_size;
      if (in->seekable && map_safe (in->fd, &st))
        {
          void *m = mmap (NULL, in->size, PROT_READ, MAP_PRIVATE, in->fd, 0);
          if (m != MAP_FAILED && st_sigbus_watch (m, in->size) < 0)
            {
              munmap (m, in->size);
              m = MAP_FAILED;
            }
          if (m != MAP_FAILED)
            {
              in->buf = m;
              in->buf_end = in->size;
              in->mapped = true;
              *out = ST_TAKE_PTR (in);
              return 0;
            }
          /* No address space for it, or no SIGBUS guard: read it.  */
        }
    }
  in->buf = buffer_new ();
  if (in->buf == NULL)
    return -ENOMEM;
  *out = ST_TAKE_PTR (in);
  return 0;
}

/* Mapped: whether a page of the file went missing under us (see
   input-sigbus.c); said once.  */
static bool
sigbus_caught (struct st_input *in)
{
  if (!st_sigbus_caught (in->buf))
    return false;
  if (!in->sigbus_said)
    st_warning ("%s: the file was cut short, or a page of it could not be read, while it "
                "was mapped: what was read of it since may be zeros", in->name);
  in->sigbus_said = true;
  return true;
}

void
st_input_free (struct st_input *in)
{
  if (in == NULL)
    return;
  if (in->owns_fd)
    close (in->fd);
  for (size_t i = 0; i < in->n_kept; i++)
    buffer_free (in->kept[i].buf);
  free (in->kept);
  for (size_t i = 0; i < in->n_spare; i++)
    buffer_free (in->spare[i]);
  if (in->mapped)
    {
      sigbus_caught (in);   /* said, if the reader did not meet it */
      st_sigbus_unwatch (in->buf);
      munmap (in->buf, in->size);
    }
  else
    buffer_free (in->buf);
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
    if (b >= in->kept[i].buf && b < in->kept[i].buf + BUFFER_SIZE)
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

/* Mapped: gives back the pages before the first byte that may still be
   used: the reader's position, or the oldest kept record.  */
static void
drop_behind (struct st_input *in)
{
  uint64_t used = in->keep ? in->released : in->buf_start;
  if (used > in->buf_start)
    used = in->buf_start;
  used -= used % DROP_STEP;
  if (used <= in->dropped)
    return;
  madvise (in->buf + in->dropped, used - in->dropped, MADV_DONTNEED);
  in->dropped = used;
}

/* Tops up the buffer until it holds N bytes (at most BUFFER_SIZE, either
   way) or the input ends.  */
static ssize_t
fill (struct st_input *in, size_t n)
{
  if (n > BUFFER_SIZE)
    n = BUFFER_SIZE;
  if (in->mapped)
    {
      if (sigbus_caught (in))
        return -EIO;   /* what the fault left is zeros, not the file */
      drop_behind (in);
      size_t left = in->buf_end - in->buf_start;
      return left < n ? left : n;
    }
  if (in->buf_end - in->buf_start >= n)
    return n;
  if (in->buf_start > 0 && in->keep && in->released < in->buf_offset + in->buf_start)
    {
      /* Records in this buffer are still held: set it aside and carry
         the unconsumed tail over to a fresh one.  */
      if (ST_GROW (in->kept, in->cap_kept, in->n_kept, 16) < 0)
        return -ENOMEM;
      uint8_t *fresh = in->n_spare > 0 ? in->spare[--in->n_spare] : buffer_new ();
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
      ssize_t r = st_read_retry (in->fd, in->buf + in->buf_end, BUFFER_SIZE - in->buf_end);
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
  if (in->mapped)
    {
      /* Kept records stay where they are; the pages before the new
         position are given back as the reader passes them.  */
      in->buf_start = offset < in->size ? offset : in->size;
      if (in->dropped > in->buf_start)
        in->dropped = in->buf_start - in->buf_start % DROP_STEP;
      return 0;
    }
  /* Offsets before a seek mean other bytes: kept records, if any, go
     with the input (sources seek only while reading headers).  */
  if (in->keep && in->released < in->buf_offset + in->buf_start)
    {
      if (ST_GROW (in->kept, in->cap_kept, in->n_kept, 16) < 0)
        return -ENOMEM;
      uint8_t *fresh = buffer_new ();
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
        buffer_free (in->kept[done].buf);
      done++;
    }
  if (done == 0)
    return;
  memmove (in->kept, in->kept + done, (in->n_kept - done) * sizeof *in->kept);
  in->n_kept -= done;
}
