#include "config.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "basic/build-id.h"
#include "ns-helper/protocol.h"

/* Nesting deeper than a request's one level of arrays is refused by the
   parser itself, before anything is allocated for it.  */
#define MAX_DEPTH 3

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

void
st_nsh_hex (const uint8_t *id, size_t n, char *out)
{
  st_hex (id, n, out);
}

static int
hex_digit (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
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

/* Writes OBJ into BUF and frees it.  */
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

int
st_nsh_encode_request (const struct st_nsh_request *req, char *buf, size_t size)
{
  struct json_object *obj = json_object_new_object ();
  if (obj == NULL)
    return -ENOMEM;
  int r = add (obj, "v", json_object_new_int (ST_NSH_VERSION));
  if (r == 0)
    r = add (obj, "id", json_object_new_int64 ((int64_t) (req->id & INT64_MAX)));
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
  struct json_object *obj = json_object_new_object ();
  if (obj == NULL)
    return -ENOMEM;
  int r = add (obj, "v", json_object_new_int (ST_NSH_VERSION));
  if (r == 0)
    r = add (obj, "id", json_object_new_int64 ((int64_t) (reply->id & INT64_MAX)));
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

/* Decoding: every field is checked for its type and range; a message with
   an unknown key is refused rather than half understood.  */

struct decoder {
  char *why;
  size_t why_size;
};

static int __attribute__ ((format (printf, 2, 3)))
fail (struct decoder *d, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (d->why, d->why_size, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

static struct json_object *
parse (struct decoder *d, const char *buf, size_t len, int *r)
{
  if (len == 0 || len > ST_NSH_MAX_MESSAGE)
    {
      *r = fail (d, "message of %zu bytes (1 to %d expected)", len, ST_NSH_MAX_MESSAGE);
      return NULL;
    }
  struct json_tokener *tok = json_tokener_new_ex (MAX_DEPTH);
  if (tok == NULL)
    {
      *r = -ENOMEM;
      return NULL;
    }
  json_tokener_set_flags (tok, JSON_TOKENER_STRICT);
  struct json_object *obj = json_tokener_parse_ex (tok, buf, (int) len);
  enum json_tokener_error err = json_tokener_get_error (tok);
  size_t end = json_tokener_get_parse_end (tok);
  json_tokener_free (tok);
  if (obj == NULL || err != json_tokener_success)
    {
      *r = fail (d, "not JSON: %s at byte %zu",
                 err == json_tokener_continue ? "unexpected end"
                                              : json_tokener_error_desc (err), end);
      json_object_put (obj);
      return NULL;
    }
  for (size_t i = end; i < len; i++)
    if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' && buf[i] != '\r')
      {
        *r = fail (d, "trailing bytes after the JSON object at byte %zu", end);
        json_object_put (obj);
        return NULL;
      }
  if (!json_object_is_type (obj, json_type_object))
    {
      *r = fail (d, "not a JSON object");
      json_object_put (obj);
      return NULL;
    }
  *r = 0;
  return obj;
}

static int
get_int (struct decoder *d, const char *key, struct json_object *v, int64_t min, int64_t max,
         int64_t *out)
{
  if (!json_object_is_type (v, json_type_int))
    return fail (d, "\"%s\" is not an integer", key);
  errno = 0;
  int64_t n = json_object_get_int64 (v);
  if (errno != 0 || n < min || n > max)
    return fail (d, "\"%s\" out of range (%" PRId64 " to %" PRId64 ")", key, min, max);
  *out = n;
  return 0;
}

/* A string of 1 to SIZE-1 bytes without NUL, copied into OUT.  */
static int
get_string (struct decoder *d, const char *key, struct json_object *v, char *out, size_t size)
{
  if (!json_object_is_type (v, json_type_string))
    return fail (d, "\"%s\" is not a string", key);
  const char *s = json_object_get_string (v);
  size_t len = (size_t) json_object_get_string_len (v);
  if (len == 0 || len >= size)
    return fail (d, "\"%s\" has %zu bytes (1 to %zu expected)", key, len, size - 1);
  if (memchr (s, '\0', len) != NULL)
    return fail (d, "\"%s\" contains a NUL byte", key);
  memcpy (out, s, len + 1);
  return 0;
}

static int
get_u64_hex (struct decoder *d, const char *key, struct json_object *v, uint64_t *out)
{
  char s[24];
  int r = get_string (d, key, v, s, sizeof s);
  if (r < 0)
    return r;
  if (s[0] != '0' || s[1] != 'x' || s[2] == '\0' || strlen (s) > 18)
    return fail (d, "\"%s\" is not a 0x-prefixed 64-bit hex number", key);
  uint64_t n = 0;
  for (const char *p = s + 2; *p; p++)
    {
      int h = hex_digit (*p);
      if (h < 0)
        return fail (d, "\"%s\" is not a 0x-prefixed 64-bit hex number", key);
      n = n << 4 | (uint64_t) h;
    }
  *out = n;
  return 0;
}

static int
get_build_id (struct decoder *d, const char *key, struct json_object *v, uint8_t *out,
              size_t *size)
{
  char s[2 * ST_NSH_BUILD_ID_MAX + 2];
  int r = get_string (d, key, v, s, sizeof s);
  if (r < 0)
    return r;
  size_t len = strlen (s);
  if (len % 2 != 0)
    return fail (d, "\"%s\" has an odd number of hex digits", key);
  for (size_t i = 0; i < len / 2; i++)
    {
      int hi = hex_digit (s[2 * i]), lo = hex_digit (s[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return fail (d, "\"%s\" is not hex", key);
      out[i] = (uint8_t) (hi << 4 | lo);
    }
  *size = len / 2;
  return 0;
}

static int
get_bool (struct decoder *d, const char *key, struct json_object *v, bool *out)
{
  if (!json_object_is_type (v, json_type_boolean))
    return fail (d, "\"%s\" is not a boolean", key);
  *out = json_object_get_boolean (v);
  return 0;
}

static int
get_ways (struct decoder *d, struct json_object *v, unsigned *out)
{
  if (!json_object_is_type (v, json_type_array))
    return fail (d, "\"ways\" is not an array");
  size_t n = json_object_array_length (v);
  if (n == 0 || n > ST_NSH_WAY_N)
    return fail (d, "\"ways\" has %zu entries (1 to %d expected)", n, ST_NSH_WAY_N);
  unsigned ways = 0;
  for (size_t i = 0; i < n; i++)
    {
      char name[16];
      int r = get_string (d, "ways", json_object_array_get_idx (v, i), name, sizeof name);
      if (r < 0)
        return r;
      int way = st_nsh_way_lookup (name);
      if (way < 0)
        return fail (d, "unknown way \"%s\"", name);
      if (ways & (1u << way))
        return fail (d, "way \"%s\" given twice", name);
      ways |= 1u << way;
    }
  *out = ways;
  return 0;
}

/* A path as a process names its file: absolute.  */
static int
check_path (struct decoder *d, const char *path)
{
  if (path[0] != '/')
    return fail (d, "\"path\" is not absolute");
  return 0;
}

/* A .gnu_debuglink name is a file name, never a path.  */
static int
check_file_name (struct decoder *d, const char *name)
{
  if (strchr (name, '/') != NULL || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return fail (d, "\"debuglink\" is not a plain file name");
  return 0;
}

static int
decode_request_fields (struct decoder *d, struct json_object *obj, struct st_nsh_request *req)
{
  struct json_object *v;
  int64_t n;
  int r;
  /* The version first: a newer client's fields are not ours to judge.  */
  if (!json_object_object_get_ex (obj, "v", &v))
    return fail (d, "no \"v\" (protocol version)");
  if ((r = get_int (d, "v", v, 0, INT32_MAX, &n)) < 0)
    return r;
  req->version = (unsigned) n;
  if (json_object_object_get_ex (obj, "id", &v))
    {
      if ((r = get_int (d, "id", v, 0, INT64_MAX, &n)) < 0)
        return r;
      req->id = (uint64_t) n;
    }
  if (req->version != ST_NSH_VERSION)
    {
      snprintf (d->why, d->why_size, "protocol version %u is not %d", req->version,
                ST_NSH_VERSION);
      return -EPROTO;
    }
  bool have_op = false, have_pid = false, have_path = false;
  json_object_object_foreach (obj, key, val)
    {
      if (strcmp (key, "v") == 0 || strcmp (key, "id") == 0)
        continue;
      else if (strcmp (key, "op") == 0)
        {
          char op[32];
          if ((r = get_string (d, key, val, op, sizeof op)) < 0)
            return r;
          size_t i;
          for (i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
            if (strcmp (op, op_names[i]) == 0)
              break;
          if (i == sizeof op_names / sizeof op_names[0])
            return fail (d, "unknown op \"%s\"", op);
          req->op = (enum st_nsh_op) i;
          have_op = true;
        }
      else if (strcmp (key, "pid") == 0)
        {
          /* PID_MAX_LIMIT: no pid is larger.  */
          if ((r = get_int (d, key, val, 1, 4194304, &n)) < 0)
            return r;
          req->pid = (pid_t) n;
          have_pid = true;
        }
      else if (strcmp (key, "start_time") == 0)
        {
          if ((r = get_int (d, key, val, 0, INT64_MAX, &n)) < 0)
            return r;
          req->start_time = (uint64_t) n;
          req->has_start_time = true;
        }
      else if (strcmp (key, "path") == 0)
        {
          if ((r = get_string (d, key, val, req->path, sizeof req->path)) < 0
              || (r = check_path (d, req->path)) < 0)
            return r;
          have_path = true;
        }
      else if (strcmp (key, "start") == 0)
        {
          if ((r = get_u64_hex (d, key, val, &req->start)) < 0)
            return r;
          req->has_range = true;
        }
      else if (strcmp (key, "end") == 0)
        {
          if ((r = get_u64_hex (d, key, val, &req->end)) < 0)
            return r;
          req->has_range = true;
        }
      else if (strcmp (key, "ino") == 0)
        {
          if ((r = get_u64_hex (d, key, val, &req->ino)) < 0)
            return r;
          req->has_ino = true;
        }
      else if (strcmp (key, "build_id") == 0)
        {
          if ((r = get_build_id (d, key, val, req->build_id, &req->build_id_size)) < 0)
            return r;
        }
      else if (strcmp (key, "debuglink") == 0)
        {
          if ((r = get_string (d, key, val, req->debuglink, sizeof req->debuglink)) < 0
              || (r = check_file_name (d, req->debuglink)) < 0)
            return r;
        }
      else if (strcmp (key, "ways") == 0)
        {
          if ((r = get_ways (d, val, &req->ways)) < 0)
            return r;
        }
      else if (strcmp (key, "ns_fd") == 0)
        {
          if ((r = get_bool (d, key, val, &req->ns_fd)) < 0)
            return r;
        }
      else if (strcmp (key, "syscall") == 0)
        {
          if ((r = get_string (d, key, val, req->syscall, sizeof req->syscall)) < 0)
            return r;
        }
      else if (strcmp (key, "in") == 0)
        {
          if ((r = get_string (d, key, val, req->in, sizeof req->in)) < 0)
            return r;
        }
      else
        return fail (d, "unknown key \"%.64s\"", key);
    }
  if (!have_op)
    return fail (d, "no \"op\"");
  if (req->op == ST_NSH_OP_DEBUG_SYSCALL)
    return req->syscall[0] ? 0 : fail (d, "debug-syscall without \"syscall\"");
  if (!have_pid || !have_path)
    return fail (d, "\"%s\" needs \"pid\" and \"path\"", op_names[req->op]);
  if (req->has_range)
    {
      if (!json_object_object_get_ex (obj, "start", NULL)
          || !json_object_object_get_ex (obj, "end", NULL))
        return fail (d, "\"start\" and \"end\" go together");
      if (req->start >= req->end)
        return fail (d, "\"start\" is not below \"end\"");
    }
  if (req->op == ST_NSH_OP_DEBUGINFO && req->build_id_size == 0)
    return fail (d, "\"debuginfo\" needs the \"build_id\" the debug file must have");
  return 0;
}

int
st_nsh_decode_request (const char *buf, size_t len, struct st_nsh_request *req, char *why,
                       size_t why_size)
{
  struct decoder d = { why, why_size };
  memset (req, 0, sizeof *req);
  req->ways = ST_NSH_WAYS_ALL;
  int r;
  struct json_object *obj = parse (&d, buf, len, &r);
  if (obj == NULL)
    return r;
  r = decode_request_fields (&d, obj, req);
  json_object_put (obj);
  return r;
}

int
st_nsh_decode_reply (const char *buf, size_t len, struct st_nsh_reply *reply, char *why,
                     size_t why_size)
{
  struct decoder d = { why, why_size };
  memset (reply, 0, sizeof *reply);
  int r;
  struct json_object *obj = parse (&d, buf, len, &r);
  if (obj == NULL)
    return r;
  struct json_object *v;
  int64_t n;
  if (!json_object_object_get_ex (obj, "v", &v) || get_int (&d, "v", v, 0, INT32_MAX, &n) < 0
      || n != ST_NSH_VERSION)
    {
      json_object_put (obj);
      snprintf (why, why_size, "the helper speaks another protocol version");
      return -EPROTO;
    }
  json_object_object_foreach (obj, key, val)
    {
      r = 0;
      if (strcmp (key, "v") == 0)
        continue;
      else if (strcmp (key, "id") == 0)
        {
          if ((r = get_int (&d, key, val, 0, INT64_MAX, &n)) == 0)
            reply->id = (uint64_t) n;
        }
      else if (strcmp (key, "ok") == 0)
        r = get_bool (&d, key, val, &reply->ok);
      else if (strcmp (key, "way") == 0)
        {
          char name[16];
          if ((r = get_string (&d, key, val, name, sizeof name)) == 0)
            {
              int way = st_nsh_way_lookup (name);
              if (way < 0)
                r = fail (&d, "unknown way \"%s\"", name);
              else
                reply->way = (enum st_nsh_way) way;
            }
        }
      else if (strcmp (key, "path") == 0)
        r = get_string (&d, key, val, reply->path, sizeof reply->path);
      else if (strcmp (key, "build_id") == 0)
        r = get_build_id (&d, key, val, reply->build_id, &reply->build_id_size);
      else if (strcmp (key, "errno") == 0)
        {
          if ((r = get_int (&d, key, val, 1, 4095, &n)) == 0)
            reply->error = (int) n;
        }
      else if (strcmp (key, "message") == 0)
        {
          /* Messages are the helper's own, possibly cut at our size.  */
          if (!json_object_is_type (val, json_type_string))
            r = fail (&d, "\"message\" is not a string");
          else
            snprintf (reply->message, sizeof reply->message, "%s", json_object_get_string (val));
        }
      if (r < 0)
        {
          json_object_put (obj);
          return r;
        }
    }
  json_object_put (obj);
  if (!reply->ok && reply->error == 0)
    reply->error = EIO;
  return 0;
}

/* Messages.  */

int
st_nsh_send (int sock, const void *buf, size_t len, const int *fds, size_t n_fds)
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
    r = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  return (size_t) r == len ? 0 : -EMSGSIZE;
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

bool
st_nsh_peer_closed (int sock)
{
  struct pollfd p = { .fd = sock, .events = POLLIN | POLLRDHUP };
  if (poll (&p, 1, 0) < 0)
    return true;
  return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}
