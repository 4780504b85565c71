#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "basic/string-arena.h"

/* Large enough that the allocations are few, small enough that a process
   with a handful of names wastes little.  */
#define BLOCK_SIZE (64u << 10)

struct block {
  struct block *next;
  size_t used, size;
  char data[];
};

struct st_string_arena {
  struct block *blocks;    /* the newest first: strings go into it */
};

struct st_string_arena *
st_string_arena_new (void)
{
  return calloc (1, sizeof (struct st_string_arena));
}

void
st_string_arena_free (struct st_string_arena *a)
{
  if (a == NULL)
    return;
  for (struct block *b = a->blocks, *next; b != NULL; b = next)
    {
      next = b->next;
      free (b);
    }
  free (a);
}

const char *
st_string_arena_add (struct st_string_arena *a, const char *s, size_t len)
{
  struct block *b = a->blocks;
  if (b == NULL || b->size - b->used < len + 1)
    {
      /* A string longer than a block gets a block of its own, behind the
         newest, which keeps its room.  */
      size_t size = len + 1 > BLOCK_SIZE ? len + 1 : BLOCK_SIZE;
      struct block *n = malloc (sizeof *n + size);
      if (n == NULL)
        return NULL;
      n->used = 0;
      n->size = size;
      if (size > BLOCK_SIZE && b != NULL)
        {
          n->next = b->next;
          b->next = n;
        }
      else
        {
          n->next = b;
          a->blocks = n;
        }
      b = n;
    }
  char *copy = b->data + b->used;
  memcpy (copy, s, len);
  copy[len] = '\0';
  b->used += len + 1;
  return copy;
}
