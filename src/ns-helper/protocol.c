#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "basic/build-id.h"
#include "ns-helper/protocol.h"

static const char *const way_names[ST_NSH_WAY_N] = {
  [ST_NSH_WAY_MAP_FILES] = "map_files",
  [ST_NSH_WAY_OPENAT2] = "openat2",
  [ST_NSH_WAY_SETNS] = "setns",
};

const char *
st_nsh_way_name (enum st_nsh_way way)
{
  return way < ST_NSH_WAY_N ? way_names[way] : "?";
}

int
st_nsh_way_lookup (const char *name)
{
  for (int i = 0; i < ST_NSH_WAY_N; i++)
    if (strcmp (name, way_names[i]) == 0)
      return i;
  return -1;
}

static const char *const op_names[] = {
  [ST_NSH_OP_OPEN] = "open",
  [ST_NSH_OP_DEBUGINFO] = "debuginfo",
  [ST_NSH_OP_DEBUG_SYSCALL] = "debug-syscall",
};

const char *
st_nsh_op_name (enum st_nsh_op op)
{
  return op < sizeof op_names / sizeof op_names[0] ? op_names[op] : "?";
}

int
st_nsh_op_lookup (const char *name)
{
  for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
    if (strcmp (name, op_names[i]) == 0)
      return (int) i;
  return -1;
}

void
st_nsh_hex (const uint8_t *id, size_t n, char *out)
{
  st_hex (id, n, out);
}

/* Encoding.  */

static int
add (struct json_object *obj, const char *key, struct json_object *val)
{
  if (val == NULL)
    return -ENOMEM;
  if (json_object_object_add (obj, key, val) != 0)
    {
      json_object_put (val);
      return -ENOMEM;
    }
  return 0;
}

static struct json_object *
new_u64_hex (uint64_t v)
{
  char s[24];
  snprintf (s, sizeof s, "0x%" PRIx64, v);
  return json_object_new_string (s);
}

static struct json_object *
new_build_id (const uint8_t *id, size_t n)
{
  char hex[2 * ST_NSH_BUILD_ID_MAX + 1];
  st_nsh_hex (id, n, hex);
  return json_object_new_string (hex);
}

/* Writes OBJ into BUF (unless R, an earlier failure, is not 0) and frees
   it.  */
static int
finish_encoding (struct json_object *obj, int r, char *buf, size_t size)
{
  if (r == 0)
    {
      size_t len;
      const char *s = json_object_to_json_string_length (
          obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
      if (s == NULL)
        r = -ENOMEM;
      else if (len >= size || len > ST_NSH_MAX_MESSAGE)
        r = -ENOSPC;
      else
        {
          memcpy (buf, s, len + 1);
          r = (int) len;
        }
    }
  json_object_put (obj);
  return r;
}

/* A message's object, with the version and ID.  Returns 0 or -errno;
   either way *OUT goes to finish_encoding (NULL when it could not be
   made).  */
static int
new_message (uint64_t id, struct json_object **out)
{
  struct json_object *obj = json_object_new_object ();
  *out = obj;
  if (obj == NULL)
    return -ENOMEM;
  int r = add (obj, "v", json_object_new_int (ST_NSH_VERSION));
  if (r == 0)
    r = add (obj, "id", json_object_new_int64 ((int64_t) (id & INT64_MAX)));
  return r;
}

int
st_nsh_encode_request (const struct st_nsh_request *req, char *buf, size_t size)
{
  struct json_object *obj;
  int r = new_message (req->id, &obj);
  if (r == 0)
    r = add (obj, "op", json_object_new_string (op_names[req->op]));
  if (r == 0 && req->pid > 0)
    r = add (obj, "pid", json_object_new_int (req->pid));
  if (r == 0 && req->has_start_time)
    r = add (obj, "start_time", json_object_new_int64 ((int64_t) (req->start_time & INT64_MAX)));
  if (r == 0 && req->path[0] != '\0')
    r = add (obj, "path", json_object_new_string (req->path));
  if (r == 0 && req->has_range)
    {
      r = add (obj, "start", new_u64_hex (req->start));
      if (r == 0)
        r = add (obj, "end", new_u64_hex (req->end));
    }
  if (r == 0 && req->has_ino)
    r = add (obj, "ino", new_u64_hex (req->ino));
  if (r == 0 && req->build_id_size > 0)
    r = add (obj, "build_id", new_build_id (req->build_id, req->build_id_size));
  if (r == 0 && req->debuglink[0] != '\0')
    r = add (obj, "debuglink", json_object_new_string (req->debuglink));
  if (r == 0 && req->ways != 0 && req->ways != ST_NSH_WAYS_ALL)
    {
      struct json_object *ways = json_object_new_array ();
      r = add (obj, "ways", ways);
      for (int i = 0; r == 0 && i < ST_NSH_WAY_N; i++)
        if (req->ways & (1u << i))
          {
            struct json_object *name = json_object_new_string (way_names[i]);
            if (name == NULL || json_object_array_add (ways, name) != 0)
              {
                json_object_put (name);
                r = -ENOMEM;
              }
          }
    }
  if (r == 0 && req->ns_fd)
    r = add (obj, "ns_fd", json_object_new_boolean (1));
  if (r == 0 && req->syscall[0] != '\0')
    r = add (obj, "syscall", json_object_new_string (req->syscall));
  if (r == 0 && req->in[0] != '\0')
    r = add (obj, "in", json_object_new_string (req->in));
  return finish_encoding (obj, r, buf, size);
}

/* The length of the valid UTF-8 sequence at S (at most N bytes), or 0.  */
static size_t
utf8_sequence (const unsigned char *s, size_t n)
{
  size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
  if (len == 0 || len > n || (len == 2 && s[0] < 0xc2) || (len == 4 && s[0] > 0xf4))
    return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  /* No overlong forms, no surrogates, nothing above U+10FFFF.  */
  if ((len == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (len == 3 && s[0] == 0xed && s[1] >= 0xa0)
      || (len == 4 && s[0] == 0xf0 && s[1] < 0x90) || (len == 4 && s[0] == 0xf4 && s[1] >= 0x90))
    return 0;
  return len;
}

/* A copy of S that is valid UTF-8: what a client sent comes back in
   messages, and a JSON reader may insist on UTF-8.  Bytes that are not
   become '?'.  */
static struct json_object *
new_utf8_string (const char *s)
{
  size_t n = strlen (s);
  char *copy = malloc (n + 1);
  if (copy == NULL)
    return NULL;
  for (size_t i = 0; i < n;)
    {
      size_t len = utf8_sequence ((const unsigned char *) s + i, n - i);
      if (len == 0)
        {
          copy[i++] = '?';
          continue;
        }
      memcpy (copy + i, s + i, len);
      i += len;
    }
  copy[n] = '\0';
  struct json_object *obj = json_object_new_string (copy);
  free (copy);
  return obj;
}

int
st_nsh_encode_reply (const struct st_nsh_reply *reply, char *buf, size_t size)
{
  struct json_object *obj;
  int r = new_message (reply->id, &obj);
  if (r == 0)
    r = add (obj, "ok", json_object_new_boolean (reply->ok));
  if (r == 0 && reply->ok)
    {
      r = add (obj, "way", json_object_new_string (st_nsh_way_name (reply->way)));
      if (r == 0 && reply->path[0] != '\0')
        r = add (obj, "path", new_utf8_string (reply->path));
      if (r == 0 && reply->build_id_size > 0)
        r = add (obj, "build_id", new_build_id (reply->build_id, reply->build_id_size));
    }
  else if (r == 0)
    {
      r = add (obj, "errno", json_object_new_int (reply->error));
      if (r == 0)
        r = add (obj, "message", new_utf8_string (reply->message));
    }
  return finish_encoding (obj, r, buf, size);
}

/* Messages.  */

int
st_nsh_send (int sock, const void *buf, size_t len, const int *fds, size_t n_fds)
{
  return st_nsh_send_flags (sock, buf, len, fds, n_fds, 0);
}

int
st_nsh_send_flags (int sock, const void *buf, size_t len, const int *fds, size_t n_fds,
                   int flags)
{
  assert (n_fds <= ST_NSH_MAX_FDS);
  struct iovec iov = { (void *) buf, len };
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE (sizeof (int) * ST_NSH_MAX_FDS)];
  } control;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (n_fds > 0)
    {
      memset (&control, 0, sizeof control);
      msg.msg_control = control.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * n_fds);
    }
  ssize_t r;
  do
    r = sendmsg (sock, &msg, MSG_NOSIGNAL | flags);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  return (size_t) r == len ? 0 : -EMSGSIZE;
}

int
st_nsh_send_reply (int sock, const struct st_nsh_reply *reply, int fd, int flags)
{
  static char buf[ST_NSH_MAX_MESSAGE];
  int len = st_nsh_encode_reply (reply, buf, sizeof buf);
  if (len < 0)
    {
      /* Only an overlong message can fail: say so in a short one.  */
      static struct st_nsh_reply e;
      e = (struct st_nsh_reply) { .id = reply->id, .error = EMSGSIZE };
      snprintf (e.message, sizeof e.message, "the reply did not fit in a message");
      len = st_nsh_encode_reply (&e, buf, sizeof buf);
      fd = -1;
      if (len < 0)
        return len;
    }
  return st_nsh_send_flags (sock, buf, (size_t) len, &fd, fd >= 0 ? 1 : 0, flags);
}

ssize_t
st_nsh_recv (int sock, void *buf, size_t size, int *fds, size_t max_fds, size_t *n_fds,
             unsigned *flags)
{
  struct iovec iov = { buf, size };
  union {
    struct cmsghdr align;
    /* Room for more than we accept, so that extra descriptors arrive and
       are closed here rather than truncated away unseen.  */
    char buf[CMSG_SPACE (sizeof (int) * (ST_NSH_MAX_FDS + 4))];
  } control;
  struct msghdr msg = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.buf,
    .msg_controllen = sizeof control.buf,
  };
  *n_fds = 0;
  *flags = 0;
  ssize_t r;
  do
    r = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  if (msg.msg_flags & MSG_TRUNC)
    *flags |= ST_NSH_RECV_TRUNCATED;
  if (msg.msg_flags & MSG_CTRUNC)
    *flags |= ST_NSH_RECV_FDS_DROPPED;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
    {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
        continue;
      size_t n = (c->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < n; i++)
        {
          int fd;
          memcpy (&fd, CMSG_DATA (c) + i * sizeof (int), sizeof fd);
          if (*n_fds < max_fds)
            fds[(*n_fds)++] = fd;
          else
            {
              close (fd);
              *flags |= ST_NSH_RECV_FDS_DROPPED;
            }
        }
    }
  return r;
}

void
st_nsh_spin_readable (int sock, unsigned spin_us)
{
  struct timespec start;
  if (clock_gettime (CLOCK_MONOTONIC, &start) != 0)
    return;
  for (;;)
    {
      struct pollfd p = { .fd = sock, .events = POLLIN };
      if (poll (&p, 1, 0) != 0)
        return;   /* readable, hung up, or an error: the receive says */
      struct timespec now;
      if (clock_gettime (CLOCK_MONOTONIC, &now) != 0)
        return;
      int64_t us = (int64_t) (now.tv_sec - start.tv_sec) * 1000000
                   + (now.tv_nsec - start.tv_nsec) / 1000;
      if (us >= spin_us)
        return;
      /* Whatever else waits for this CPU runs first (the helper's own
         processes may): spinning keeps it awake, not to itself.  */
      sched_yield ();
    }
}

bool
st_nsh_peer_closed (int sock)
{
  struct pollfd p = { .fd = sock, .events = POLLIN | POLLRDHUP };
  if (poll (&p, 1, 0) < 0)
    return true;
  return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}
