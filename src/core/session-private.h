/* What session.c and session-jobs.c (--jobs N: the unwinding threads)
 * share, and no other file sees: the session itself, the output side that
 * the threads' results go through, and the threads' entry points.  */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/hashmap.h"
#include "basic/strbuf.h"
#include "core/session.h"
#include "core/unwind/unwinder.h"

struct job;
struct worker;

struct st_session {
  struct st_session_options opts;
  struct st_sink *sink;
  const struct st_sink_ops *sink_ops;
  struct st_stats stats;
  int output_error;           /* the run's first error, unwinding or output */
  int sink_error;             /* the sink's first: the output's */
  bool finished;

  /* --jobs 1: the reader's thread unwinds.  */
  struct st_unwinder *inline_unwinder;
  /* The files' tables every unwinder reads: freed after the unwinders.  */
  struct st_shared_files *shared_files;
  /* The users' budgets for JIT files, every unwinder's: freed after them
     (their maps give back to it as they go).  */
  struct st_jit_budget *jit_budget;
  struct st_unwound inline_result;

  /* --jobs N > 1  */
  struct worker *workers;
  unsigned n_workers;
  struct job *ring;
  uint64_t filled;            /* next job to fill (only the reader's) */
  uint64_t head;              /* jobs before this are the workers' */
  uint64_t tail;              /* oldest job not yet written */
  uint64_t written;           /* ... as the threads may know it (locked) */
  struct st_hashmap *affinity; /* pid -> its samples << 8 | worker + 1 */
  struct st_input *input;     /* keeps samples' stacks for the ring, or NULL */
  uint64_t hold;              /* the oldest held sample's input offset */
  uint64_t *in_flight;        /* per worker: samples given, not written */
  uint64_t *given;            /* per worker: samples given in the run */
  uint64_t moves;             /* processes moved to a less busy worker */
  bool closing;
  pthread_mutex_t lock;
  pthread_cond_t work_ready;  /* head moved, or closing */
  pthread_cond_t progress;    /* a worker's cursor moved */
};

/* session.c: the output side, in input order.  */
struct st_callchain st_session_make_chain (const struct st_sample *sample,
                                          const struct st_unwound *u);
/* Writes one event (a sample's chain U, formatted as TEXT when not NULL)
   to the sink, remembering a sink's error as the output's.  */
int st_session_output_event (struct st_session *s, const struct st_event *ev,
                             const struct st_unwound *u, const struct st_strbuf *text);
/* A third signal: samples not unwound yet are dropped.  */
bool st_session_forced (const struct st_session *s);

/* session-jobs.c: --jobs N > 1.  Starts the N threads, each with its own
   unwinder of UOPTS; 0 or -errno (the caller frees the session).  */
int st_session_jobs_start (struct st_session *s, const struct st_unwinder_options *uopts);
/* Queues EV for the threads, writing what they are done with.  */
int st_session_jobs_dispatch (struct st_session *s, const struct st_event *ev);
/* Lets the threads finish what is queued, writes it, and joins them; 0
   (also without threads) or the run's first error.  */
int st_session_jobs_drain (struct st_session *s);
/* Drains, then frees the threads and the queue.  */
void st_session_jobs_free (struct st_session *s);
/* Stores the threads' unwinders at OUT (room for s->n_workers); how many.  */
unsigned st_session_jobs_unwinders (const struct st_session *s, struct st_unwinder **out);
/* --stats: how the samples were split among the threads, and their CPU.  */
void st_session_jobs_print (const struct st_session *s, FILE *out);
