/* Puts records back in time order, the way perf does.
 *
 * The kernel writes one ring buffer per CPU and perf record drains them in
 * turn, so a file's records are sorted only within a "round".  perf marks the
 * end of each pass with FINISHED_ROUND; everything older than the latest time
 * seen in the *previous* round can no longer be overtaken and is released.
 * Memory is therefore bounded by two rounds of records, not by the file.  */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct st_ordered_queue;

/* Called for each released item, oldest first; a negative return stops the
   flush and is returned by it (the remaining items stay queued).  */
typedef int (*st_ordered_release_fn) (uint64_t time, void *item, void *arg);

struct st_ordered_queue *st_ordered_queue_new (st_ordered_release_fn release, void *arg);
/* Frees the queue and any item still in it with FREE_ITEM.  */
void st_ordered_queue_free (struct st_ordered_queue *q, void (*free_item) (void *));

int st_ordered_queue_push (struct st_ordered_queue *q, uint64_t time, void *item);
/* The end of a round: releases what the previous round made safe.  */
int st_ordered_queue_round (struct st_ordered_queue *q);
/* Releases everything (end of input).  */
int st_ordered_queue_flush_all (struct st_ordered_queue *q);
size_t st_ordered_queue_size (const struct st_ordered_queue *q);
