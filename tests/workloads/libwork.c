/* libwork.so: the hot code of the shlib workload, in a shared library of our
 * own, with some of its time spent inside libc on its behalf (qsort calling
 * back into this library, memcpy, strlen). */

#include "libwork.h"

#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__ ((noinline, noclone))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

#define N_ITEMS 2048
#define BUF_SIZE (64 * 1024)

static uint32_t items[N_ITEMS];
static char buf_a[BUF_SIZE], buf_b[BUF_SIZE];
static char text[8192];

static NOINLINE uint64_t
mix (uint64_t h, int rounds)
{
  for (int i = 0; i < rounds; i++)
    {
      h ^= h >> 33;
      h *= 0xff51afd7ed558ccdULL;
      BARRIER (h);
    }
  return h;
}

uint64_t
work_compute (uint64_t seed)
{
  uint64_t h = mix (seed, 20000);
  BARRIER (h);
  return h + 1;
}

/* qsort's comparator: libc calls back into the library. */
static int
compare_items (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  /* A little work per comparison keeps samples inside the callback too. */
  uint64_t wx = mix (x, 3), wy = mix (y, 3);
  return (wx > wy) - (wx < wy);
}

uint64_t
work_sort (uint64_t seed)
{
  uint32_t s = (uint32_t) seed | 1;
  for (int i = 0; i < N_ITEMS; i++)
    {
      s = s * 1103515245u + 12345u;
      items[i] = s;
    }
  qsort (items, N_ITEMS, sizeof items[0], compare_items);
  return items[seed % N_ITEMS];
}

uint64_t
work_copy (uint64_t seed)
{
  uint64_t sum = 0;
  buf_a[seed % BUF_SIZE] = (char) seed;
  for (int i = 0; i < 64; i++)
    {
      memcpy (buf_b, buf_a, BUF_SIZE);
      BARRIER (sum);
      memcpy (buf_a, buf_b, BUF_SIZE);
      sum += (unsigned char) buf_a[(seed + i) % BUF_SIZE];
    }
  return sum;
}

uint64_t
work_strings (uint64_t seed)
{
  uint64_t total = 0;
  if (text[0] == '\0')
    memset (text, 'x', sizeof text - 1);
  for (int i = 0; i < 200; i++)
    {
      /* Vary the length so strlen cannot be hoisted out of the loop. */
      size_t cut = sizeof text - 1 - (size_t) ((seed + i) % 64);
      char saved = text[cut];
      text[cut] = '\0';
      total += strlen (text);
      text[cut] = saved;
      BARRIER (total);
    }
  return total;
}
