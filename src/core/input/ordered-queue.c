#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "basic/array.h"
#include "core/input/ordered-queue.h"

struct item {
  struct st_queued_record rec;
  uint64_t seq;   /* input order breaks ties, so equal times stay stable */
};

struct st_ordered_queue {
  struct item *heap;
  size_t size, capacity;
  uint64_t next_seq;
  uint64_t max_time;            /* latest time pushed so far */
  uint64_t previous_round_max;  /* what the last round made safe */
  st_ordered_release_fn release;
  void *arg;
};

static bool
item_before (const struct item *a, const struct item *b)
{
  return a->rec.time < b->rec.time || (a->rec.time == b->rec.time && a->seq < b->seq);
}

struct st_ordered_queue *
st_ordered_queue_new (st_ordered_release_fn release, void *arg)
{
  struct st_ordered_queue *q = calloc (1, sizeof *q);
  if (q == NULL)
    return NULL;
  q->release = release;
  q->arg = arg;
  return q;
}

void
st_ordered_queue_free (struct st_ordered_queue *q, void (*free_data) (void *))
{
  if (q == NULL)
    return;
  if (free_data != NULL)
    for (size_t i = 0; i < q->size; i++)
      if (q->heap[i].rec.owned)
        free_data ((void *) q->heap[i].rec.data);
  free (q->heap);
  free (q);
}

int
st_ordered_queue_push (struct st_ordered_queue *q, const struct st_queued_record *rec)
{
  if (ST_GROW (q->heap, q->capacity, q->size, 1024) < 0)
    return -ENOMEM;
  size_t i = q->size++;
  struct item it = { *rec, q->next_seq++ };
  while (i > 0)
    {
      size_t parent = (i - 1) / 2;
      if (!item_before (&it, &q->heap[parent]))
        break;
      q->heap[i] = q->heap[parent];
      i = parent;
    }
  q->heap[i] = it;
  if (rec->time > q->max_time)
    q->max_time = rec->time;
  return 0;
}

static struct item
pop (struct st_ordered_queue *q)
{
  assert (q->size > 0);
  struct item top = q->heap[0];
  struct item last = q->heap[--q->size];
  size_t i = 0;
  for (;;)
    {
      size_t child = 2 * i + 1;
      if (child >= q->size)
        break;
      if (child + 1 < q->size && item_before (&q->heap[child + 1], &q->heap[child]))
        child++;
      if (!item_before (&q->heap[child], &last))
        break;
      q->heap[i] = q->heap[child];
      i = child;
    }
  if (q->size > 0)
    q->heap[i] = last;
  return top;
}

static int
flush_until (struct st_ordered_queue *q, uint64_t limit)
{
  while (q->size > 0 && q->heap[0].rec.time <= limit)
    {
      struct item it = pop (q);
      int r = q->release (&it.rec, q->arg);
      if (r < 0)
        return r;
    }
  return 0;
}

int
st_ordered_queue_round (struct st_ordered_queue *q)
{
  int r = flush_until (q, q->previous_round_max);
  q->previous_round_max = q->max_time;
  return r;
}

int
st_ordered_queue_release_before (struct st_ordered_queue *q, uint64_t time)
{
  return time == 0 ? 0 : flush_until (q, time - 1);
}

int
st_ordered_queue_flush_all (struct st_ordered_queue *q)
{
  return flush_until (q, UINT64_MAX);
}

size_t
st_ordered_queue_size (const struct st_ordered_queue *q)
{
  return q->size;
}

uint64_t
st_ordered_queue_min_offset (const struct st_ordered_queue *q)
{
  uint64_t min = UINT64_MAX;
  for (size_t i = 0; i < q->size; i++)
    if (q->heap[i].rec.offset < min)
      min = q->heap[i].rec.offset;
  return min;
}

uint64_t
st_ordered_queue_max_time (const struct st_ordered_queue *q)
{
  return q->max_time;
}
