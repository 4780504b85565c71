/* The parsers of perf-PID.map and jitdump files (see jit-map.h): bytes in,
 * code ranges out, nothing else.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/build-id.h"
#include "basic/bytes.h"
#include "core/resolve/jit-map.h"
#include "core/resolve/jitdump-format.h"

/* A hex number (an optional 0x, at most 16 digits) at *P, up to END.  */
static bool
parse_hex (const char **p, const char *end, uint64_t *out)
{
  const char *s = *p;
  if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    s += 2;
  uint64_t v = 0;
  int n = 0, d;
  while (s < end && (d = st_hex_digit (*s)) >= 0)
    {
      if (++n > 16)
        return false;
      v = v << 4 | (uint64_t) d;
      s++;
    }
  *p = s;
  *out = v;
  return n > 0;
}

/* NAME (LEN bytes, not terminated) cut and terminated in BUF; false for
   an empty name or an empty or wrapping range.  */
static bool
take_name (char buf[ST_JIT_NAME_MAX + 1], uint64_t start, uint64_t size, const char *name,
           size_t len)
{
  if (len > ST_JIT_NAME_MAX)
    len = ST_JIT_NAME_MAX;
  memcpy (buf, name, len);
  buf[len] = '\0';
  return size != 0 && start + size >= start && buf[0] != '\0';
}

static int
emit (st_jit_fn fn, void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
  char buf[ST_JIT_NAME_MAX + 1];
  if (!take_name (buf, start, size, name, len))
    return 0;
  return fn (start, size, buf, arg);
}

long
st_perf_map_parse (const char *text, size_t len, st_jit_fn fn, void *arg)
{
  const char *p = text, *end = text + len;
  for (;;)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      if (nl == NULL)
        return p - text;
      const char *s = p;
      uint64_t start, size;
      p = nl + 1;
      if (!parse_hex (&s, nl, &start) || s == nl || *s != ' ')
        continue;
      s++;
      if (!parse_hex (&s, nl, &size) || s == nl || *s != ' ')
        continue;
      s++;
      const char *name_end = nl;
      if (name_end > s && name_end[-1] == '\r')
        name_end--;
      int r = emit (fn, arg, start, size, s, (size_t) (name_end - s));
      if (r != 0)
        return r;
    }
}

long
st_jitdump_parse (const uint8_t *data, size_t size, const struct st_jitdump_fns *fns,
                  void *arg, struct st_why *why)
{
  if (size < JITDUMP_HEADER_MIN)
    return 0;   /* the header is still being written */
  if (st_get_u32 (data) != JITDUMP_MAGIC)
    return st_why_at (why, EBADMSG, 0, "not a jitdump of this byte order (magic %#x)",
                      st_get_u32 (data));
  uint32_t header = st_get_u32 (data + 8);
  if (header < JITDUMP_HEADER_MIN || header > WINDOW)
    return st_why_at (why, EBADMSG, 8, "jitdump header of %u bytes", header);
  if (header > size)
    return 0;   /* the header is still being written */
  size_t at = header;
  while (at <= size && size - at >= JIT_RECORD_PREFIX)
    {
      const uint8_t *rec = data + at;
      uint32_t id = st_get_u32 (rec), total = st_get_u32 (rec + 4);
      if (total < JIT_RECORD_PREFIX)
        return st_why_at (why, EBADMSG, at, "jitdump record of %u bytes", total);
      if (total > size - at)
        break;   /* not all there yet */
      if (id == JIT_CODE_LOAD && total > JIT_CODE_LOAD_FIXED)
        {
          /* pid, tid, vma, code_addr, code_size, code_index, name, code */
          uint64_t addr = st_get_u64 (rec + JIT_RECORD_PREFIX + 16);
          uint64_t code_size = st_get_u64 (rec + JIT_RECORD_PREFIX + 24);
          uint64_t code_index = st_get_u64 (rec + JIT_RECORD_PREFIX + 32);
          const char *name = (const char *) rec + JIT_CODE_LOAD_FIXED;
          size_t room = total - JIT_CODE_LOAD_FIXED;
          const char *nul = memchr (name, '\0', room);
          char buf[ST_JIT_NAME_MAX + 1];
          int r = take_name (buf, addr, code_size, name, nul ? (size_t) (nul - name) : room)
                  ? fns->load (addr, code_size, code_index, buf, arg) : 0;
          if (r != 0)
            return r;
        }
      else if (id == JIT_CODE_MOVE && total >= JIT_CODE_MOVE_SIZE && fns->move != NULL)
        {
          /* V8 and the JVM agents write none (a moved function comes as a
             new load); a JIT that compacts its code heap may.  */
          uint64_t old_addr = st_get_u64 (rec + JIT_RECORD_PREFIX + 16);
          uint64_t new_addr = st_get_u64 (rec + JIT_RECORD_PREFIX + 24);
          uint64_t code_size = st_get_u64 (rec + JIT_RECORD_PREFIX + 32);
          uint64_t code_index = st_get_u64 (rec + JIT_RECORD_PREFIX + 40);
          if (code_size != 0 && new_addr + code_size >= new_addr)
            {
              int r = fns->move (code_index, old_addr, new_addr, code_size, arg);
              if (r != 0)
                return r;
            }
        }
      at += total;
    }
  return (long) at;
}

bool
st_jitdump_is_dump_path (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  if (strncmp (base, "jit-", 4) != 0)
    return false;
  const char *s = base + 4;
  size_t digits = strspn (s, "0123456789");
  return digits > 0 && strcmp (s + digits, ".dump") == 0;
}
