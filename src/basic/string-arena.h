/* Strings that all go at once: copied into large blocks, one allocation
 * per block rather than per string, freed together.  For names read by the
 * million from files a user writes (a JIT's perf map): a hash table entry
 * and an allocation each cost more than the name, and more time than
 * parsing it.  */
#pragma once

#include <stddef.h>

struct st_string_arena;

struct st_string_arena *st_string_arena_new (void);
void st_string_arena_free (struct st_string_arena *a);
/* A copy of the LEN bytes at S, NUL added, valid until the arena is freed;
   NULL without memory.  */
const char *st_string_arena_add (struct st_string_arena *a, const char *s, size_t len);
