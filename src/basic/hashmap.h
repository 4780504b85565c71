/* A small chained hash table keyed by byte strings.
 *
 * Used for pids, tids, build-ids and folded stacks.  Keys are copied into
 * the table; values are owned by the caller (an optional destructor frees
 * them when the table is freed or an entry removed).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_hashmap;

typedef void (*st_hashmap_free_fn) (void *value);

struct st_hashmap *st_hashmap_new (st_hashmap_free_fn free_value);
void st_hashmap_free (struct st_hashmap *map);

/* Returns the value stored under KEY, or NULL.  */
void *st_hashmap_get (const struct st_hashmap *map, const void *key, size_t len);
/* The table's own copy of KEY (LEN bytes), or NULL when KEY is not in it:
   it stays where it is until the entry is removed, so a value may point
   at it instead of keeping a copy of its own.  */
const void *st_hashmap_key_of (const struct st_hashmap *map, const void *key, size_t len);
/* Stores VALUE under KEY, replacing (and freeing) any previous value.
   Returns 0 or -ENOMEM.  */
int st_hashmap_put (struct st_hashmap *map, const void *key, size_t len, void *value);
/* Removes KEY and frees its value.  Returns true when it was present.  */
int st_hashmap_remove (struct st_hashmap *map, const void *key, size_t len);
/* For st_hashmap_evict_oldest: whether the entry of VALUE may be evicted,
   and when it was last used (*USED, larger is later).  */
typedef bool (*st_hashmap_age_fn) (const void *value, uint64_t *used);
/* Removes, freeing their values, the entries AGE says may go, but the
   KEEP of them used last: a cache kept to its most recent entries.
   *CANDIDATES (may be NULL) gets how many AGE accepted.  Returns how many
   were removed (none when memory runs out).  */
size_t st_hashmap_evict_oldest (struct st_hashmap *map, size_t keep, st_hashmap_age_fn age,
                                size_t *candidates);
size_t st_hashmap_size (const struct st_hashmap *map);

/* Visits every entry; stops early when FN returns non-zero and returns that.  */
typedef int (*st_hashmap_visit_fn) (const void *key, size_t len, void *value, void *arg);
int st_hashmap_foreach (const struct st_hashmap *map, st_hashmap_visit_fn fn, void *arg);

uint64_t st_hash_bytes (const void *data, size_t len);

/* The one copy of STR kept in STRINGS (a map made with st_hashmap_new
   (free), keyed by the string's bytes): made on first use, the same
   pointer afterwards, valid until the map is freed.  NULL for NULL, and on
   allocation failure (the caller says what stands in for it).  */
const char *st_hashmap_intern (struct st_hashmap *strings, const char *str);

/* Integer-keyed conveniences.  */
static inline void *
st_hashmap_get_u64 (const struct st_hashmap *map, uint64_t key)
{
  return st_hashmap_get (map, &key, sizeof key);
}
static inline int
st_hashmap_put_u64 (struct st_hashmap *map, uint64_t key, void *value)
{
  return st_hashmap_put (map, &key, sizeof key, value);
}
static inline int
st_hashmap_remove_u64 (struct st_hashmap *map, uint64_t key)
{
  return st_hashmap_remove (map, &key, sizeof key);
}
