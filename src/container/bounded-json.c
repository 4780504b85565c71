#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "container/container.h"
#include "basic/clock.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/untrusted.h"

/* Container storage JSON (containers.json, layers.json, images.json) lives
   in each user's home and is written by that user: it is parsed by root's
   profiler, so it must not cost root more than a bounded amount of memory
   and time, whatever the user wrote.
     - a size cap per file, checked with fstat before a byte is read;
     - a budget of bytes read per user and run;
     - a pre-scan that counts values and nesting before json-c allocates
       (json-c spends ~50-100 bytes per value: a 16 MB [1,1,...] would be
       ~800 MB of objects);
     - each file parsed once: cached by (dev, inode, size, mtime).
   The cache is per thread: json-c's reference counts are not atomic, and
   each unwinding thread walks the arrays it gets.  */

#define MAX_VALUES 200000   /* a few thousand containers/layers/images */
#define MAX_DEPTH 32        /* json-c's own default limit */
#define MAX_CACHED 256

struct cached {
  json_object *o;           /* NULL: refused or not JSON (cached too, said once) */
};

struct key {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
};

static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void
cached_free (void *p)
{
  struct cached *c = p;
  json_object_put (c->o);
  free (c);
}

static void
cache_destroy (void *map)
{
  st_hashmap_free (map);
}

static void
cache_key_init (void)
{
  if (pthread_key_create (&cache_key, cache_destroy) != 0)
    cache_key = (pthread_key_t) -1;
}

static struct st_hashmap *
thread_cache (void)
{
  pthread_once (&cache_once, cache_key_init);
  if (cache_key == (pthread_key_t) -1)
    return NULL;
  struct st_hashmap *map = pthread_getspecific (cache_key);
  if (map == NULL)
    {
      map = st_hashmap_new (cached_free);
      if (map != NULL && pthread_setspecific (cache_key, map) != 0)
        {
          st_hashmap_free (map);
          map = NULL;
        }
    }
  return map;
}

int
st_json_prescan (const char *text, size_t len, size_t max_values, size_t max_depth)
{
  size_t values = 1, depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      char ch = text[i];
      if (in_string)
        {
          if (ch == '\\')
            i++;
          else if (ch == '"')
            in_string = false;
          continue;
        }
      switch (ch)
        {
        case '"':
          in_string = true;
          break;
        case '[':
        case '{':
          if (++depth > max_depth)
            return -ELOOP;
          values++;
          break;
        case ']':
        case '}':
          if (depth > 0)
            depth--;
          break;
        case ',':
        case ':':
          if (++values > max_values)
            return -E2BIG;
          break;
        default:
          break;
        }
    }
  return 0;
}

json_object *
st_json_parse_bounded (const char *text, size_t len, size_t max_values, size_t max_depth,
                       int *error)
{
  int r = st_json_prescan (text, len, max_values, max_depth);
  json_object *o = NULL;
  if (r == 0)
    {
      json_tokener *tok = json_tokener_new_ex ((int) max_depth);
      o = tok && len <= INT_MAX ? json_tokener_parse_ex (tok, text, (int) len) : NULL;
      if (tok == NULL || json_tokener_get_error (tok) != json_tokener_success)
        {
          json_object_put (o);
          o = NULL;
          r = -EINVAL;
        }
      json_tokener_free (tok);
    }
  if (error != NULL)
    *error = r;
  return o;
}

json_object *
st_storage_json_parse (const char *text, size_t len, int *error)
{
  return st_json_parse_bounded (text, len, MAX_VALUES, MAX_DEPTH, error);
}

/* Opens, checks and parses FILE; NULL (said) when refused.  */
static json_object *
parse_file (int fd, const struct stat *st, const struct key *k, const char *name, uid_t owner,
            const char *who, uint64_t *parsed_bytes)
{
  char why[128];
  if ((uint64_t) st->st_size > ST_STORAGE_JSON_MAX)
    {
      snprintf (why, sizeof why, "%lld bytes, over the %u MiB limit for storage metadata",
                (long long) st->st_size, ST_STORAGE_JSON_MAX >> 20);
      st_untrusted_refuse (name, who, why);
      return NULL;
    }
  if (owner != 0 && !st_untrusted_budget_take (owner, (uint64_t) st->st_size,
                                               ST_STORAGE_JSON_BUDGET, k, sizeof *k))
    {
      snprintf (why, sizeof why, "over the user's budget of %u MiB of storage metadata per run",
                ST_STORAGE_JSON_BUDGET >> 20);
      st_untrusted_refuse (name, who, why);
      return NULL;
    }
  char *text = NULL;
  size_t len = 0;
  int r = st_read_untrusted (fd, ST_STORAGE_JSON_MAX, &text, &len);
  if (r < 0)
    {
      st_untrusted_refuse (name, who, st_untrusted_strerror (r));
      return NULL;
    }
  *parsed_bytes = len;
  json_object *o = st_storage_json_parse (text, len, &r);
  if (r == -ELOOP || r == -E2BIG)
    {
      snprintf (why, sizeof why, r == -ELOOP ? "JSON nested deeper than %d" :
                "more than %d JSON values", r == -ELOOP ? MAX_DEPTH : MAX_VALUES);
      st_untrusted_refuse (name, who, why);
    }
  free (text);
  return o;
}

json_object *
st_storage_json_load (int dir_fd, const char *file, uid_t owner, const char *who)
{
  uint64_t t0 = st_now_ns (), parsed = 0, files = 0;
  json_object *result = NULL;
  struct stat st;
  int fd = st_open_untrusted (dir_fd, file, ST_UNTRUSTED_BENEATH, &st);
  if (fd < 0)
    goto out;
  struct key k;
  memset (&k, 0, sizeof k);
  k.dev = st.st_dev;
  k.ino = st.st_ino;
  k.size = st.st_size;
  k.mtime = st.st_mtim;
  struct st_hashmap *cache = thread_cache ();
  struct cached *c = cache ? st_hashmap_get (cache, &k, sizeof k) : NULL;
  if (c == NULL)
    {
      char name[4096], self[64];
      snprintf (self, sizeof self, "/proc/self/fd/%d", fd);
      ssize_t n = readlink (self, name, sizeof name - 1);
      if (n <= 0)
        snprintf (name, sizeof name, "%s", file);
      else
        name[n] = '\0';
      c = calloc (1, sizeof *c);
      if (c != NULL)
        {
          c->o = parse_file (fd, &st, &k, name, owner, who, &parsed);
          files = 1;
          /* Past MAX_CACHED files (storage rewritten over and over), parse
             without keeping: the budget still bounds the bytes.  */
          if (cache == NULL || st_hashmap_size (cache) >= MAX_CACHED
              || st_hashmap_put (cache, &k, sizeof k, c) < 0)
            {
              result = c->o;   /* not cached: the caller gets the only reference */
              free (c);
              c = NULL;
            }
        }
    }
  if (c != NULL)
    result = json_object_get (c->o);
  close (fd);
out:
  st_untrusted_add_storage_time (st_now_ns () - t0, files, parsed);
  return result;
}
