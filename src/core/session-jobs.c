/* --jobs N: the unwinding threads (see session-private.h).  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "basic/signals.h"
#include "core/input/input.h"
#include "core/session-private.h"

/* Events in flight between the reader and the unwinding threads.  Each
 * slot holds a deep copy of one event (the source's buffers move on) and,
 * for a sample, the frames its unwinder found.  A slot is written out, in
 * order, once every worker has gone past it: the one that unwound it, and
 * the others, which only apply process events.  */
#define RING_SIZE 256
#define BATCH 32
/* A process's samples stay with one worker, which then alone builds its
   Dwfl and reads its modules' CFI and symbols, until that worker is this
   many samples behind the least busy one: then the process moves.  One
   busy process so moves back and forth in runs of samples, and every
   worker gets its share.  Under BATCH: the samples of one batch count
   before any is written, so one process is split even when a worker keeps
   up with the reader.  */
#define IMBALANCE (BATCH / 2)
/* ... but only once it has had this many samples: a move makes the other
   worker build the process's Dwfl, read its files' CFI and symbols, which
   a short process (one of many run one after the other) never pays back.
   Its samples then overlap with the reading, not with each other.  */
#define MOVE_AFTER 256

struct job {
  struct st_event ev;
  uint8_t *data;              /* owns what ev points to */
  size_t data_cap;
  unsigned worker;            /* for a sample: who unwinds it */
  struct st_unwound result;
  struct st_strbuf text;      /* the sink's formatting of it, done there */
  bool formatted;
  bool dropped;               /* a sample not unwound: stopped at once */
  struct st_frame *frames;    /* result.frames storage: a copy of the */
  size_t frames_cap;          /* worker's, as long as the chain is */
  bool held;                  /* a sample whose stack the input holds */
};

struct worker {
  struct st_session *session;
  unsigned index;
  struct st_unwinder *unwinder;
  struct st_frame *frames;    /* what the unwinder writes, max_out long */
  pthread_t thread;
  bool started;
  uint64_t cursor;            /* next job to look at (under the lock) */
  int error;
  double cpu;                 /* the thread's CPU seconds, at its end */
};

/* Appends N bytes from SRC at *P; returns where they went (NULL for none).  */
static void *
copy_bytes (uint8_t **p, const void *src, size_t n)
{
  if (n == 0)
    return NULL;
  void *dst = memcpy (*p, src, n);
  *p += n;
  return dst;
}

/* Copies what EV points to into JOB, so that it outlives the source's
   buffer; a sample's stack not when the input holds it (HELD).  */
static int
job_fill (struct job *job, const struct st_event *ev, bool held)
{
  size_t need = 0;
  const struct st_sample *smp = &ev->sample;
  /* The one string another event points to, in the copy: it is made to
     point at the string's copy.  */
  const char **str = NULL;
  job->ev = *ev;
  job->held = held;
  switch (ev->kind)
    {
    case ST_EVENT_SAMPLE:
      need = smp->n_regs * 8 + (held ? 0 : smp->stack_size) + smp->n_kernel_ips * 8
             + smp->n_user_ips * 8;
      break;
    case ST_EVENT_MMAP: str = &job->ev.mmap.filename; break;
    case ST_EVENT_COMM: str = &job->ev.comm.comm; break;
    case ST_EVENT_BUILD_ID: str = &job->ev.build_id.filename; break;
    case ST_EVENT_RAW: need = ev->raw.size; break;
    default: break;
    }
  if (str != NULL)
    need = strlen (*str) + 1;
  if (need > job->data_cap)
    {
      /* A held sample needs only its registers and ips (under 1 KiB
         mostly): each fresh page a slot touches first is a page fault,
         which costs 15-40 us on this project's VMs, as much as unwinding
         a sample.  */
      size_t least = held ? 1024 : 16384;
      size_t cap = need < least ? least : need;
      uint8_t *data = realloc (job->data, cap);
      if (data == NULL)
        return -ENOMEM;
      job->data = data;
      job->data_cap = cap;
    }
  uint8_t *p = job->data;
  if (ev->kind == ST_EVENT_SAMPLE)
    {
      struct st_sample *copy = &job->ev.sample;
      copy->regs = copy_bytes (&p, smp->regs, smp->n_regs * 8);
      copy->kernel_ips = copy_bytes (&p, smp->kernel_ips, smp->n_kernel_ips * 8);
      copy->user_ips = copy_bytes (&p, smp->user_ips, smp->n_user_ips * 8);
      if (!held)
        copy->stack = copy_bytes (&p, smp->stack, smp->stack_size);
    }
  else if (str != NULL)
    *str = memcpy (p, *str, need);
  else if (ev->kind == ST_EVENT_RAW)
    job->ev.raw.data = memcpy (p, ev->raw.data, need);
  return 0;
}

/* The frames the worker wrote, copied into JOB: the worker's buffer is
   the next sample's.  A slot keeps only as many as its longest chain.  */
static int
job_keep_frames (struct job *job)
{
  size_t n = job->result.n_frames;
  if (n > job->frames_cap)
    {
      size_t cap = n < 32 ? 32 : n;
      struct st_frame *f = realloc (job->frames, cap * sizeof *f);
      if (f == NULL)
        return -ENOMEM;
      job->frames = f;
      job->frames_cap = cap;
    }
  if (n > 0)
    memcpy (job->frames, job->result.frames, n * sizeof *job->frames);
  job->result.frames = job->frames;
  return 0;
}

static double
thread_cpu (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *
worker_main (void *arg)
{
  struct worker *w = arg;
  struct st_session *s = w->session;
  /* The frames of a sample point at its files' symbol names and
     build-ids, and the sample is written later, by the reader: a file
     whose last reference goes (let go, rewritten, its last process gone)
     is kept until what was unwound before is written.  */
  pthread_mutex_lock (&s->lock);
  for (;;)
    {
      while (w->cursor == s->head && !s->closing)
        pthread_cond_wait (&s->work_ready, &s->lock);
      if (w->cursor == s->head)
        break;   /* closing, and nothing left */
      uint64_t end = s->head;
      uint64_t written = s->written;
      pthread_mutex_unlock (&s->lock);
      st_unwinder_release_files (w->unwinder, written);
      st_unwinder_park_files (w->unwinder, end);
      /* Jobs between our cursor and head are stable: the reader fills a
         slot only after every cursor has passed it.  */
      for (uint64_t seq = w->cursor; seq < end; seq++)
        {
          struct job *job = &s->ring[seq % RING_SIZE];
          int r = 0;
          if (job->ev.kind != ST_EVENT_SAMPLE)
            r = st_unwinder_event (w->unwinder, &job->ev);
          else if (job->worker == w->index && st_session_forced (s))
            job->dropped = true;
          else if (job->worker == w->index)
            {
              job->dropped = false;
              job->result.frames = w->frames;
              r = st_unwinder_sample (w->unwinder, &job->ev.sample, &job->result);
              /* Formatting is as costly as unwinding is: do it here, in
                 parallel, not in the thread that writes.  */
              job->formatted = false;
              if (r == 0 && s->sink_ops->format != NULL)
                {
                  struct st_callchain chain = st_session_make_chain (&job->ev.sample, &job->result);
                  st_strbuf_reset (&job->text);
                  r = s->sink_ops->format (&chain, &job->text);
                  job->formatted = r == 0;
                }
              if (r == 0)
                r = job_keep_frames (job);
            }
          if (r < 0 && w->error == 0)
            w->error = r;
        }
      pthread_mutex_lock (&s->lock);
      w->cursor = end;
      pthread_cond_signal (&s->progress);
    }
  pthread_mutex_unlock (&s->lock);
  w->cpu = thread_cpu ();
  return NULL;
}

static uint64_t
min_cursor_locked (const struct st_session *s)
{
  uint64_t min = s->head;
  for (unsigned i = 0; i < s->n_workers; i++)
    if (s->workers[i].cursor < min)
      min = s->workers[i].cursor;
  return min;
}

/* Writes, in order, every job all workers are done with.  */
static int
retire (struct st_session *s)
{
  pthread_mutex_lock (&s->lock);
  s->written = s->tail;
  uint64_t done = min_cursor_locked (s);
  for (unsigned i = 0; i < s->n_workers; i++)
    if (s->workers[i].error < 0 && s->output_error == 0)
      s->output_error = s->workers[i].error;
  pthread_mutex_unlock (&s->lock);
  /* The oldest held offset changes only when the job holding it goes.  */
  bool rescan = false;
  for (; s->tail < done; s->tail++)
    {
      struct job *job = &s->ring[s->tail % RING_SIZE];
      if (job->held && job->ev.sample.input_offset == s->hold)
        rescan = true;
      if (job->ev.kind == ST_EVENT_SAMPLE)
        s->in_flight[job->worker]--;
      if (job->ev.kind == ST_EVENT_SAMPLE && job->dropped)
        s->stats.dropped++;
      else if (s->output_error == 0)
        {
          int r = st_session_output_event (s, &job->ev, &job->result, job->formatted ? &job->text : NULL);
          if (r < 0)
            s->output_error = r;
        }
    }
  if (s->input != NULL && rescan)
    {
      /* What the ring still holds of the input: its oldest sample.  */
      s->hold = UINT64_MAX;
      for (uint64_t seq = s->tail; seq < s->filled; seq++)
        {
          const struct job *job = &s->ring[seq % RING_SIZE];
          if (job->held && job->ev.sample.input_offset < s->hold)
            s->hold = job->ev.sample.input_offset;
        }
      st_input_hold (s->input, s->hold);
    }
  return s->output_error;
}

/* Hands the jobs filled so far to the workers.  */
static void
publish (struct st_session *s)
{
  if (s->filled == s->head)
    return;
  pthread_mutex_lock (&s->lock);
  s->head = s->filled;
  pthread_cond_broadcast (&s->work_ready);
  pthread_mutex_unlock (&s->lock);
}

/* Who unwinds a sample of PID: its process's worker, unless that one is
   IMBALANCE samples behind the least busy, who then takes the process.  */
static int
pick_worker (struct st_session *s, pid_t pid, unsigned *out)
{
  unsigned least = 0;
  for (unsigned i = 1; i < s->n_workers; i++)
    if (s->in_flight[i] < s->in_flight[least])
      least = i;
  /* The value: the process's samples so far << 8 | its worker + 1.  */
  uintptr_t v = (uintptr_t) st_hashmap_get_u64 (s->affinity, (uint32_t) pid);
  unsigned w = v != 0 ? (unsigned) (v & 0xff) - 1 : least;
  uintptr_t seen = v >> 8;
  if (v == 0 || (seen >= MOVE_AFTER && s->in_flight[w] > s->in_flight[least] + IMBALANCE))
    {
      if (v != 0)
        s->moves++;
      w = least;
    }
  int r = st_hashmap_put_u64 (s->affinity, (uint32_t) pid,
                              (void *) (((seen + 1) << 8) | (uintptr_t) (w + 1)));
  if (r < 0)
    return r;
  s->in_flight[w]++;
  s->given[w]++;
  *out = w;
  return 0;
}

int
st_session_jobs_dispatch (struct st_session *s, const struct st_event *ev)
{
  /* A slot is free again once it is written, and it is written once every
     worker is past it.  */
  while (s->filled - s->tail >= RING_SIZE)
    {
      publish (s);
      int r = retire (s);
      if (r < 0)
        return r;
      if (s->filled - s->tail < RING_SIZE)
        break;
      pthread_mutex_lock (&s->lock);
      while (min_cursor_locked (s) <= s->tail)
        pthread_cond_wait (&s->progress, &s->lock);
      pthread_mutex_unlock (&s->lock);
    }

  struct job *job = &s->ring[s->filled % RING_SIZE];
  bool held = s->input != NULL && ev->kind == ST_EVENT_SAMPLE && ev->sample.stack_size > 0
              && st_input_holds (s->input, ev->sample.stack);
  int r = job_fill (job, ev, held);
  if (r < 0)
    return r;
  if (held && ev->sample.input_offset < s->hold)
    {
      s->hold = ev->sample.input_offset;
      st_input_hold (s->input, s->hold);
    }
  if (ev->kind == ST_EVENT_SAMPLE)
    {
      r = pick_worker (s, ev->sample.pid, &job->worker);
      if (r < 0)
        return r;
    }
  s->filled++;
  /* In batches: waking the workers for every event costs more than
     unwinding it (both would wake, one to skip it).  */
  if (s->filled - s->head >= BATCH)
    {
      publish (s);
      return retire (s);
    }
  return 0;
}

int
st_session_jobs_drain (struct st_session *s)
{
  if (s->workers == NULL)
    return 0;
  publish (s);
  pthread_mutex_lock (&s->lock);
  s->closing = true;
  pthread_cond_broadcast (&s->work_ready);
  pthread_mutex_unlock (&s->lock);
  for (;;)
    {
      retire (s);
      pthread_mutex_lock (&s->lock);
      bool all_done = min_cursor_locked (s) == s->head;
      if (!all_done)
        pthread_cond_wait (&s->progress, &s->lock);
      pthread_mutex_unlock (&s->lock);
      if (all_done)
        break;
    }
  retire (s);
  for (unsigned i = 0; i < s->n_workers; i++)
    if (s->workers[i].started)
      {
        pthread_join (s->workers[i].thread, NULL);
        s->workers[i].started = false;
      }
  return s->output_error;
}

int
st_session_jobs_start (struct st_session *s, const struct st_unwinder_options *uopts)
{
  s->n_workers = s->opts.jobs;
  s->workers = calloc (s->n_workers, sizeof *s->workers);
  s->ring = calloc (RING_SIZE, sizeof *s->ring);
  s->in_flight = calloc (s->n_workers, sizeof *s->in_flight);
  s->given = calloc (s->n_workers, sizeof *s->given);
  s->affinity = st_hashmap_new (NULL);
  if (s->workers == NULL || s->ring == NULL || s->in_flight == NULL || s->given == NULL
      || s->affinity == NULL)
    return -ENOMEM;
  for (unsigned i = 0; i < s->n_workers; i++)
    {
      s->workers[i].session = s;
      s->workers[i].index = i;
      int r = st_unwinder_new (uopts, &s->workers[i].unwinder);
      if (r < 0)
        return r;
      size_t max_out = st_unwinder_max_out_frames (s->workers[i].unwinder);
      s->workers[i].frames = calloc (max_out, sizeof (struct st_frame));
      if (s->workers[i].frames == NULL)
        return -ENOMEM;
    }
  pthread_mutex_init (&s->lock, NULL);
  pthread_cond_init (&s->work_ready, NULL);
  pthread_cond_init (&s->progress, NULL);
  /* Signals are the main thread's: they interrupt its waits (a pipe's
     read, live sampling's poll), which a worker taking them would not.  */
  sigset_t old;
  st_signals_block (&old);
  int r = 0;
  for (unsigned i = 0; i < s->n_workers && r == 0; i++)
    {
      r = -pthread_create (&s->workers[i].thread, NULL, worker_main, &s->workers[i]);
      s->workers[i].started = r == 0;
    }
  st_signals_restore (&old);
  return r;
}

void
st_session_jobs_free (struct st_session *s)
{
  if (s->workers != NULL)
    {
      st_session_jobs_drain (s);
      for (unsigned i = 0; i < s->n_workers; i++)
        {
          st_unwinder_free (s->workers[i].unwinder);
          free (s->workers[i].frames);
        }
      pthread_mutex_destroy (&s->lock);
      pthread_cond_destroy (&s->work_ready);
      pthread_cond_destroy (&s->progress);
    }
  if (s->ring != NULL)
    for (size_t i = 0; i < RING_SIZE; i++)
      {
        free (s->ring[i].data);
        free (s->ring[i].frames);
        st_strbuf_free (&s->ring[i].text);
      }
  free (s->ring);
  free (s->workers);
  free (s->in_flight);
  free (s->given);
  st_hashmap_free (s->affinity);
}

unsigned
st_session_jobs_unwinders (const struct st_session *s, struct st_unwinder **out)
{
  for (unsigned i = 0; i < s->n_workers; i++)
    out[i] = s->workers[i].unwinder;
  return s->n_workers;
}

/* Why a split pays or does not: one thread reads the input (its system
   time is the kernel's copy of every byte of every stack), parses, orders
   and writes; only unwinding and formatting are split.  The run cannot end
   before the reader does, nor before the total is spread over N CPUs.  */
static void
print_split_bound (FILE *out, double reader, double unwinding, unsigned n)
{
  struct rusage ru;
  double kernel = getrusage (RUSAGE_THREAD, &ru) == 0
                  ? ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 : 0;
  double total = reader + unwinding;
  double bound = reader > total / n ? reader : total / n;
  if (bound <= 0)
    return;
  fprintf (out, "split: on %u idle CPUs at least %.3f s, %.2fx the same work on one thread (%.3f s); the limit is %s "
           "(the reading thread's %.3f s, %.3f s of it in the kernel)\n",
           n, bound, total / bound, total,
           reader >= total / n ? "the reading thread, which is not split"
                               : "the unwinding spread over the CPUs",
           reader, kernel);
}

void
st_session_jobs_print (const struct st_session *s, FILE *out)
{
  if (s->n_workers == 0)
    return;
  /* How the samples were split: by process, and one busy process in runs
     of samples, each worker then building that process's Dwfl too.  */
  fprintf (out, "unwinding threads: %u, samples each:", s->n_workers);
  for (unsigned i = 0; i < s->n_workers; i++)
    fprintf (out, " %" PRIu64, s->given[i]);
  fprintf (out, " (%zu processes; a process stays with one thread until that one is %d "
           "samples behind, after its first %d: moved %" PRIu64 " times)\n",
           st_hashmap_size (s->affinity), IMBALANCE, MOVE_AFTER, s->moves);
  /* The reader's thread is the critical path: with N CPUs the run takes
     at least the larger of its time and the total over N.  */
  double total = 0;
  fprintf (out, "CPU seconds: reading and writing %.3f, unwinding", thread_cpu ());
  for (unsigned i = 0; i < s->n_workers; i++)
    {
      fprintf (out, " %.3f", s->workers[i].cpu);
      total += s->workers[i].cpu;
    }
  fprintf (out, " (total %.3f)\n", total + thread_cpu ());
  print_split_bound (out, thread_cpu (), total, s->n_workers);
}

void
st_session_hold_input (struct st_session *s, struct st_input *in)
{
  /* -j 1 unwinds each sample before the source goes on.  */
  if (s->n_workers > 0)
    {
      s->input = in;
      s->hold = UINT64_MAX;
    }
}
