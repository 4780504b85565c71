#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "basic/hashmap.h"

struct entry {
  struct entry *next;
  uint64_t hash;
  void *value;
  size_t len;
  unsigned char key[];
};

struct st_hashmap {
  struct entry **buckets;
  size_t n_buckets;  /* always a power of two */
  size_t size;
  st_hashmap_free_fn free_value;
};

/* FNV-1a, finished with a 64-bit mix so that small integer keys spread.  */
uint64_t
st_hash_bytes (const void *data, size_t len)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < len; i++)
    {
      h ^= p[i];
      h *= 0x100000001b3ULL;
    }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

struct st_hashmap *
st_hashmap_new (st_hashmap_free_fn free_value)
{
  _cleanup_free_ struct st_hashmap *map = calloc (1, sizeof *map);
  if (map == NULL || (map->buckets = calloc (64, sizeof *map->buckets)) == NULL)
    return NULL;
  map->n_buckets = 64;
  map->free_value = free_value;
  return ST_TAKE_PTR (map);
}

void
st_hashmap_free (struct st_hashmap *map)
{
  if (map == NULL)
    return;
  for (size_t i = 0; i < map->n_buckets; i++)
    for (struct entry *e = map->buckets[i], *next; e != NULL; e = next)
      {
        next = e->next;
        if (map->free_value != NULL)
          map->free_value (e->value);
        free (e);
      }
  free (map->buckets);
  free (map);
}

static struct entry **
find_slot (const struct st_hashmap *map, const void *key, size_t len, uint64_t hash)
{
  struct entry **slot = &map->buckets[hash & (map->n_buckets - 1)];
  for (; *slot != NULL; slot = &(*slot)->next)
    if ((*slot)->hash == hash && (*slot)->len == len
        && memcmp ((*slot)->key, key, len) == 0)
      break;
  return slot;
}

void *
st_hashmap_get (const struct st_hashmap *map, const void *key, size_t len)
{
  struct entry *e = *find_slot (map, key, len, st_hash_bytes (key, len));
  return e != NULL ? e->value : NULL;
}

const void *
st_hashmap_key_of (const struct st_hashmap *map, const void *key, size_t len)
{
  struct entry *e = *find_slot (map, key, len, st_hash_bytes (key, len));
  return e != NULL ? e->key : NULL;
}

static void
grow (struct st_hashmap *map)
{
  size_t n = map->n_buckets * 2;
  struct entry **buckets = calloc (n, sizeof *buckets);
  if (buckets == NULL)
    return;  /* a slower table is still a correct one */
  for (size_t i = 0; i < map->n_buckets; i++)
    for (struct entry *e = map->buckets[i], *next; e != NULL; e = next)
      {
        next = e->next;
        struct entry **head = &buckets[e->hash & (n - 1)];
        e->next = *head;
        *head = e;
      }
  free (map->buckets);
  map->buckets = buckets;
  map->n_buckets = n;
}

int
st_hashmap_put (struct st_hashmap *map, const void *key, size_t len, void *value)
{
  uint64_t hash = st_hash_bytes (key, len);
  struct entry **slot = find_slot (map, key, len, hash);
  if (*slot != NULL)
    {
      if (map->free_value != NULL && (*slot)->value != value)
        map->free_value ((*slot)->value);
      (*slot)->value = value;
      return 0;
    }
  struct entry *e = malloc (sizeof *e + len);
  if (e == NULL)
    return -ENOMEM;
  e->next = NULL;
  e->hash = hash;
  e->value = value;
  e->len = len;
  memcpy (e->key, key, len);
  *slot = e;
  if (++map->size > map->n_buckets)
    grow (map);
  return 0;
}

int
st_hashmap_remove (struct st_hashmap *map, const void *key, size_t len)
{
  struct entry **slot = find_slot (map, key, len, st_hash_bytes (key, len));
  struct entry *e = *slot;
  if (e == NULL)
    return false;
  *slot = e->next;
  if (map->free_value != NULL)
    map->free_value (e->value);
  free (e);
  map->size--;
  return true;
}

struct aged {
  struct entry *e;
  uint64_t used;
};

static int
compare_aged (const void *x, const void *y)
{
  const struct aged *a = x, *b = y;
  return a->used < b->used ? -1 : a->used > b->used;
}

size_t
st_hashmap_evict_oldest (struct st_hashmap *map, size_t keep, st_hashmap_age_fn age,
                         size_t *candidates)
{
  size_t n = 0;
  uint64_t used;
  for (size_t i = 0; i < map->n_buckets; i++)
    for (struct entry *e = map->buckets[i]; e != NULL; e = e->next)
      n += age (e->value, &used);
  if (candidates != NULL)
    *candidates = n;
  if (n <= keep)
    return 0;
  struct aged *v = malloc (n * sizeof *v);
  if (v == NULL)
    return 0;
  size_t k = 0;
  for (size_t i = 0; i < map->n_buckets; i++)
    for (struct entry *e = map->buckets[i]; e != NULL; e = e->next)
      if (age (e->value, &used))
        v[k++] = (struct aged) { e, used };
  qsort (v, n, sizeof *v, compare_aged);
  /* Each removal frees only its own entry: the others in V stay valid.  */
  for (size_t i = 0; i < n - keep; i++)
    st_hashmap_remove (map, v[i].e->key, v[i].e->len);
  free (v);
  return n - keep;
}

size_t
st_hashmap_size (const struct st_hashmap *map)
{
  return map->size;
}

int
st_hashmap_foreach (const struct st_hashmap *map, st_hashmap_visit_fn fn, void *arg)
{
  for (size_t i = 0; i < map->n_buckets; i++)
    for (struct entry *e = map->buckets[i]; e != NULL; e = e->next)
      {
        int r = fn (e->key, e->len, e->value, arg);
        if (r != 0)
          return r;
      }
  return 0;
}

const char *
st_hashmap_intern (struct st_hashmap *strings, const char *str)
{
  if (str == NULL)
    return NULL;
  size_t len = strlen (str);
  char *copy = st_hashmap_get (strings, str, len);
  if (copy != NULL)
    return copy;
  copy = strdup (str);
  if (copy == NULL || st_hashmap_put (strings, str, len, copy) < 0)
    {
      free (copy);
      return NULL;
    }
  return copy;
}
