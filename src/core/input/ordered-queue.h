/* Puts records back in time order, the way perf does.
 *
 * The kernel writes one ring buffer per CPU and perf record drains them in
 * turn, so a file's records are sorted only within a "round".  perf marks the
 * end of each pass with FINISHED_ROUND; everything older than the latest time
 * seen in the *previous* round can no longer be overtaken and is released.
 * Memory is therefore bounded by two rounds of records, not by the file.
 * Items are stored inline (no allocation per record): a record's bytes stay
 * wherever the source keeps them.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_queued_record {
  uint64_t time;
  uint64_t offset;          /* where in the input it came from */
  const uint8_t *data;
  uint32_t size;
  bool owned;               /* a copy, freed once released */
  uint32_t file;            /* a perf.data directory's: which of its files */
};

struct st_ordered_queue;

/* Called for each released record, oldest first; a negative return stops
   the flush and is returned by it (the remaining records stay queued).  */
typedef int (*st_ordered_release_fn) (const struct st_queued_record *rec, void *arg);

struct st_ordered_queue *st_ordered_queue_new (st_ordered_release_fn release, void *arg);
/* Frees the queue; FREE_DATA, when given, frees each record still queued
   that is a copy (owned).  */
void st_ordered_queue_free (struct st_ordered_queue *q, void (*free_data) (void *));

int st_ordered_queue_push (struct st_ordered_queue *q, const struct st_queued_record *rec);
/* The end of a round: releases what the previous round made safe.  */
int st_ordered_queue_round (struct st_ordered_queue *q);
/* Releases every record older than TIME (a merge of inputs each in time
   order: none of them can bring an older one any more).  */
int st_ordered_queue_release_before (struct st_ordered_queue *q, uint64_t time);
/* Releases everything (end of input).  */
int st_ordered_queue_flush_all (struct st_ordered_queue *q);
size_t st_ordered_queue_size (const struct st_ordered_queue *q);
/* The latest time pushed so far (0: none).  */
uint64_t st_ordered_queue_max_time (const struct st_ordered_queue *q);
/* The lowest input offset of a queued record, or UINT64_MAX.  */
uint64_t st_ordered_queue_min_offset (const struct st_ordered_queue *q);
