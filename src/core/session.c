#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/session-private.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/jit-budget.h"
#include "core/session-summary.h"

/* One unwinding thread fewer than the CPUs: the thread that reads,
   parses, orders and writes needs one of its own.  On two CPUs, two
   unwinding threads beside it ran at 0.70-1.07x the speed of one
   (bench-perf-script.sh: three threads on two CPUs, every hand-over a
   wake-up of a vCPU).  At most 4.  */
unsigned
st_session_default_jobs (void)
{
  cpu_set_t set;
  int n = 1;
  if (sched_getaffinity (0, sizeof set, &set) == 0)
    n = CPU_COUNT (&set) - 1;
  return n < 1 ? 1 : n > 4 ? 4 : (unsigned) n;
}

const struct st_stats *
st_session_stats (const struct st_session *s)
{
  return &s->stats;
}

struct st_callchain
st_session_make_chain (const struct st_sample *sample, const struct st_unwound *u)
{
  return (struct st_callchain) {
    .sample = sample,
    .comm = u->comm,
    .container = u->container,
    .frames = u->frames,
    .n_frames = u->n_frames,
    .stop = u->stop,
    .stop_detail = u->detail,
  };
}

/* Hands one sample's chain to the sink and counts it.  TEXT is what the
   sink's format op made of it already, or NULL.  */
static int
write_sample (struct st_session *s, const struct st_sample *sample, const struct st_unwound *u,
              const struct st_strbuf *text)
{
  struct st_callchain chain = st_session_make_chain (sample, u);
  if (text != NULL)
    {
      chain.formatted = text->data;
      chain.formatted_len = text->len;
    }
  s->stats.samples++;
  s->stats.period_sum += sample->period;
  s->stats.stops[u->stop]++;
  st_session_count_stack_needed (&s->stats, sample, u);
  if (u->n_frames > 0)
    s->stats.unwound++;
  s->stats.frames += u->n_frames;
  s->stats.frames_by_cache += u->frames_by_cache;
  s->stats.frames_by_libdwfl += u->frames_by_libdwfl;
  return s->sink_ops->sample (s->sink, &chain);
}

static void
count_event (struct st_session *s, const struct st_event *ev)
{
  switch (ev->kind)
    {
    case ST_EVENT_MMAP: s->stats.mmaps++; break;
    case ST_EVENT_COMM: s->stats.comms++; break;
    case ST_EVENT_FORK: s->stats.forks++; break;
    case ST_EVENT_EXIT: s->stats.exits++; break;
    case ST_EVENT_LOST: s->stats.lost += ev->lost.lost; break;
    default: break;
    }
}

/* The output side of one event, in input order: the sink's view of
   process events, or a sample's chain.  */
static int
write_event (struct st_session *s, const struct st_event *ev, const struct st_unwound *u,
             const struct st_strbuf *text)
{
  if (ev->kind == ST_EVENT_SAMPLE)
    return write_sample (s, &ev->sample, u, text);
  count_event (s, ev);
  return s->sink_ops->event != NULL ? s->sink_ops->event (s->sink, ev) : 0;
}

bool
st_session_forced (const struct st_session *s)
{
  return s->opts.force_stop != NULL && *s->opts.force_stop;
}

int
st_session_output_event (struct st_session *s, const struct st_event *ev, const struct st_unwound *u,
              const struct st_strbuf *text)
{
  int r = write_event (s, ev, u, text);
  if (r < 0 && s->sink_error == 0)
    s->sink_error = r;
  return r;
}

int
st_session_new (const struct st_session_options *opts, struct st_sink *sink,
                const struct st_sink_ops *sink_ops, struct st_session **out)
{
  struct st_session *s = calloc (1, sizeof *s);
  if (s == NULL)
    return -ENOMEM;
  s->opts = *opts;
  if (s->opts.jobs == 0)
    s->opts.jobs = 1;
  s->sink = sink;
  s->sink_ops = sink_ops;
  struct st_unwinder_options uopts = {
    .max_frames = opts->max_frames,
    .inline_frames = opts->inline_frames,
    .unwinder_libdwfl = opts->unwinder_libdwfl,
    .live = opts->live,
    .arch = opts->arch,
    .debuginfod = opts->debuginfod,
    .ns_client = opts->ns_client,
    .sysroot = opts->sysroot,
    .containers = opts->containers,
  };
  int r = st_shared_files_new (&s->shared_files);
  if (r < 0)
    {
      free (s);
      return r;
    }
  uopts.shared_files = s->shared_files;
  /* A profiler run by a user other than root reads its own user's files
     without a budget: they can only slow itself.  */
  s->jit_budget = st_jit_budget_new (geteuid () != 0 ? geteuid () : (uid_t) -1);
  if (s->jit_budget == NULL)
    {
      st_session_free (s);
      return -ENOMEM;
    }
  uopts.jit_budget = s->jit_budget;
  if (s->opts.jobs == 1 || s->opts.mode != ST_MODE_NAIVE)
    {
      s->opts.jobs = 1;
      r = st_unwinder_new (&uopts, &s->inline_unwinder);
      if (r == 0)
        s->inline_result.frames = calloc (st_unwinder_max_out_frames (s->inline_unwinder),
                                          sizeof (struct st_frame));
      if (r == 0 && s->inline_result.frames == NULL)
        r = -ENOMEM;
    }
  else
    r = st_session_jobs_start (s, &uopts);
  if (r < 0)
    {
      st_session_free (s);
      return r;
    }
  *out = s;
  return 0;
}

void
st_session_free (struct st_session *s)
{
  if (s == NULL)
    return;
  st_session_jobs_free (s);
  st_unwinder_free (s->inline_unwinder);
  free (s->inline_result.frames);
  st_shared_files_free (s->shared_files);
  st_jit_budget_free (s->jit_budget);
  free (s);
}

int
st_session_handle_event (const struct st_event *ev, void *arg)
{
  struct st_session *s = arg;
  if (s->opts.mode == ST_MODE_NONE)
    return 0;
  if (s->workers != NULL)
    return st_session_jobs_dispatch (s, ev);

  struct st_unwinder *u = s->inline_unwinder;
  struct st_unwound *result = &s->inline_result;
  if (ev->kind != ST_EVENT_SAMPLE)
    {
      int r = st_session_output_event (s, ev, NULL, NULL);
      return r < 0 ? r : st_unwinder_event (u, ev);
    }
  if (st_session_forced (s))
    {
      s->stats.dropped++;
      return 0;
    }
  if (s->opts.mode == ST_MODE_PASSTHRU)
    {
      st_unwound_set_comm (result, st_unwinder_comm (u, ev->sample.pid, ev->sample.tid));
      result->n_frames = 0;
      result->stop = ST_STOP_NOT_UNWOUND;
      result->detail = NULL;
      result->stack_needed = 0;
    }
  else
    {
      int r = st_unwinder_sample (u, &ev->sample, result);
      if (r < 0)
        return r;
    }
  return st_session_output_event (s, ev, result, NULL);
}

int
st_session_output_error (const struct st_session *s)
{
  return s->sink_error;
}

int
st_session_finish (struct st_session *s)
{
  if (s->finished)
    return s->output_error;
  s->finished = true;
  int r = st_session_jobs_drain (s);
  int f = s->sink_ops->finish (s->sink);
  if (f < 0 && s->sink_error == 0)
    s->sink_error = f;
  if (r == 0)
    r = f;
  if (s->output_error == 0)
    s->output_error = r;
  return r;
}

void
st_session_print_summary (const struct st_session *s, FILE *out)
{
  struct st_unwinder *unwinders[s->n_workers + 1];
  unsigned n = 0;
  if (s->inline_unwinder != NULL)
    unwinders[n++] = s->inline_unwinder;
  n += st_session_jobs_unwinders (s, unwinders + n);
  st_session_summary_print (out, &s->stats, unwinders, n, s->jit_budget, &s->opts);
  st_session_jobs_print (s, out);
}
