/* The namespace helper's protocol, decoding (protocol.h): what any local
 * user may send the privileged helper, and what the core takes from it.
 * Encoding, the names and the messages are in protocol.c.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/build-id.h"
#include "basic/why.h"
#include "ns-helper/protocol.h"

/* Nesting deeper than a request's one level of arrays is refused by the
   parser itself, before anything is allocated for it.  */
#define MAX_DEPTH 3

/* Decoding: every field is checked for its type and range; a message with
   an unknown key is refused rather than half understood.  */

struct decoder {
  struct st_why *why;
};

static int __attribute__ ((format (printf, 2, 3)))
fail (struct decoder *d, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = st_why_vset (d->why, EINVAL, fmt, ap);
  va_end (ap);
  return r;
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
      int h = st_hex_digit (*p);
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
      int hi = st_hex_digit (s[2 * i]), lo = st_hex_digit (s[2 * i + 1]);
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
      return st_why_set (d->why, EPROTO, "protocol version %u is not %d", req->version,
                         ST_NSH_VERSION);
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
          int i = st_nsh_op_lookup (op);
          if (i < 0)
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
    return fail (d, "\"%s\" needs \"pid\" and \"path\"", st_nsh_op_name (req->op));
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
st_nsh_decode_request (const char *buf, size_t len, struct st_nsh_request *req,
                       struct st_why *why)
{
  struct decoder d = { why };
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
st_nsh_decode_reply (const char *buf, size_t len, struct st_nsh_reply *reply,
                     struct st_why *why)
{
  struct decoder d = { why };
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
      return st_why_set (why, EPROTO, "the helper speaks another protocol version");
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
