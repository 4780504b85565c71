/* -f sysprof's byte path (see sink-sysprof.h): the buffer every frame
 * reaches the output through, the header it holds back until the first
 * write, and the relay of the frames libsysprof-capture's writer encodes
 * into a memfd.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/output/sink-sysprof.h"

void
st_sysprof_fail (struct st_sink *s, int r)
{
  if (s->error == 0)
    s->error = r;
}

void
st_sysprof_note_time (struct st_sink *s, int64_t time)
{
  if (time <= 0)
    return;
  if (s->first_time == 0 || time < s->first_time)
    s->first_time = time;
  if (time > s->last_time)
    s->last_time = time;
}

static int64_t
monotonic_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
write_all (struct st_sink *s, const uint8_t *p, size_t n)
{
  while (n > 0 && s->error == 0)
    {
      ssize_t w = write (s->fd, p, n);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          st_sysprof_fail (s, -errno);
          break;
        }
      p += w;
      n -= w;
    }
  return s->error;
}

/* "Recorded At" in Sysprof: the wall-clock time of the first frame.  */
void
st_sysprof_set_capture_time (struct st_sink *s, int64_t time)
{
  st_sysprof_capture_time (&s->clock, time, s->header.capture_time,
                           sizeof s->header.capture_time);
}

/* Writes out the buffer.  The header is held at its start until then, so
   that a new capture starts at its first frame's time.  */
int
st_sysprof_flush_buf (struct st_sink *s)
{
  if (!s->header_written)
    {
      s->header_written = true;
      if (!s->capture_input)
        {
          s->header.time = s->first_time > 0 ? s->first_time : monotonic_now ();
          st_sysprof_set_capture_time (s, s->header.time);
        }
      if (!s->capture_input && s->header.end_time < s->header.time)
        s->header.end_time = s->header.time;   /* a capture never ends before it starts */
      memcpy (s->buf, &s->header, sizeof s->header);
    }
  int r = write_all (s, s->buf, s->len);
  s->len = 0;
  return r;
}

/* The writer leaves whatever its buffer held before in the padding of the
   frames it writes: zero it, so that the same input always gives the same
   bytes.  */
static void
scrub_padding (uint8_t *p, size_t n)
{
  struct st_sysprof_frame h;
  for (size_t at = 0; at + sizeof h <= n; at += h.len)
    {
      memcpy (&h, p + at, sizeof h);
      if (h.len < sizeof h || h.len > n - at)
        break;
      uint8_t *f = p + at;
      size_t used = h.len;
      switch (ST_SYSPROF_FRAME_TYPE (h.type))
        {
        case ST_SYSPROF_SAMPLE:
          memset (f + offsetof (struct st_sysprof_sample, n_addrs) + 2, 0, 2);
          break;
        case ST_SYSPROF_MAP:
          used = sizeof (struct st_sysprof_map);
          used += strnlen ((const char *) f + used, h.len - used) + 1;
          break;
        case ST_SYSPROF_PROCESS:
          used = sizeof (struct st_sysprof_process);
          used += strnlen ((const char *) f + used, h.len - used) + 1;
          break;
        case ST_SYSPROF_FORK:
          used = offsetof (struct st_sysprof_fork, child_pid) + 4;
          break;
        default:
          break;
        }
      if (used < h.len)
        memset (f + used, 0, h.len - used);
    }
}

/* Moves the writer's frames into the buffer, in order.  */
int
st_sysprof_relay (struct st_sink *s)
{
  if (s->lib_pending == 0 || s->error < 0)
    return s->error;
  s->lib_pending = 0;
  errno = 0;
  if (!sysprof_capture_writer_flush (s->writer))
    {
      st_sysprof_fail (s, errno ? -errno : -EIO);
      return s->error;
    }
  const off_t start = sizeof (struct st_sysprof_file_header);  /* after its header */
  off_t end = lseek (s->relay_fd, 0, SEEK_CUR);
  if (end < start)
    {
      st_sysprof_fail (s, end < 0 ? -errno : -EIO);
      return s->error;
    }
  for (off_t at = start; at < end;)
    {
      if (s->len == BUF_SIZE && st_sysprof_flush_buf (s) < 0)
        return s->error;
      size_t want = BUF_SIZE - s->len;
      if ((off_t) want > end - at)
        want = end - at;
      ssize_t got = pread (s->relay_fd, s->buf + s->len, want, at);
      if (got <= 0)
        {
          st_sysprof_fail (s, got < 0 ? -errno : -EIO);
          return s->error;
        }
      /* Whole frames only, so that each can be scrubbed.  */
      size_t whole = 0;
      struct st_sysprof_frame h;
      while (whole + sizeof h <= (size_t) got)
        {
          memcpy (&h, s->buf + s->len + whole, sizeof h);
          if (h.len < sizeof h || h.len > (size_t) got - whole)
            break;
          whole += h.len;
        }
      if (whole == 0)
        {
          if (s->len == 0)
            {
              st_sysprof_fail (s, -EIO);   /* not a frame: the writer and this disagree */
              return s->error;
            }
          if (st_sysprof_flush_buf (s) < 0)
            return s->error;
          continue;
        }
      scrub_padding (s->buf + s->len, whole);
      s->len += whole;
      at += whole;
    }
  if (lseek (s->relay_fd, start, SEEK_SET) != start || ftruncate (s->relay_fd, start) != 0)
    st_sysprof_fail (s, -errno);
  return s->error;
}

/* Room for a hand-written frame of LEN bytes, zeroed, after every frame
   the writer holds.  */
uint8_t *
st_sysprof_reserve (struct st_sink *s, size_t len)
{
  if (st_sysprof_relay (s) < 0)
    return NULL;
  if (s->len + len > BUF_SIZE && st_sysprof_flush_buf (s) < 0)
    return NULL;
  uint8_t *p = s->buf + s->len;
  memset (p, 0, len);
  s->len += len;
  return p;
}

/* After a frame given to the writer, of LEN bytes unaligned.  */
int
st_sysprof_wrote (struct st_sink *s, bool ok, size_t len)
{
  if (!ok)
    {
      st_sysprof_fail (s, errno ? -errno : -EIO);
      return s->error;
    }
  s->lib_pending += st_sysprof_align (len);
  return s->lib_pending >= RELAY_EVERY ? st_sysprof_relay (s) : s->error;
}

/* The first event decides the header: the input's, or a new one.  */
void
st_sysprof_start (struct st_sink *s, const struct st_event *ev)
{
  if (s->started)
    return;
  s->started = true;
  if (ev != NULL && ev->kind == ST_EVENT_RAW && ev->raw.type == ST_SYSPROF_RAW_FILE_HEADER
      && ev->raw.size == sizeof s->header)
    {
      s->capture_input = true;
      memcpy (&s->header, ev->raw.data, sizeof s->header);
    }
  else
    {
      s->header.magic = ST_SYSPROF_MAGIC;
      s->header.flags = 1 | ST_SYSPROF_LITTLE_ENDIAN;
    }
  /* Held at the start of the buffer until its first write.  */
  s->len = sizeof s->header;
}

