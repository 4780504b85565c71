#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/process.h"
#include "core/resolver.h"
#include "core/session.h"
#include "core/symbolize.h"

/* Inline expansion can add several frames per unwound frame.  */
#define INLINE_FRAMES_PER_FRAME 8

struct st_session {
  struct st_session_options opts;
  struct st_resolver *resolver;
  struct st_process_table *processes;
  struct st_sink *sink;
  const struct st_sink_ops *sink_ops;
  struct st_raw_frame *raw;
  struct st_frame *frames;
  size_t max_out_frames;
  struct st_stats stats;
  bool warned_regs;
};

struct st_session *
st_session_new (const struct st_session_options *opts, struct st_sink *sink,
                const struct st_sink_ops *sink_ops)
{
  struct st_session *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->opts = *opts;
  s->sink = sink;
  s->sink_ops = sink_ops;
  s->max_out_frames = opts->max_frames * (opts->inline_frames ? INLINE_FRAMES_PER_FRAME : 1);
  s->resolver = st_resolver_new ();
  s->processes = s->resolver ? st_process_table_new (s->resolver) : NULL;
  s->raw = calloc (opts->max_frames, sizeof *s->raw);
  s->frames = calloc (s->max_out_frames, sizeof *s->frames);
  if (s->processes == NULL || s->raw == NULL || s->frames == NULL)
    {
      st_session_free (s);
      return NULL;
    }
  return s;
}

void
st_session_free (struct st_session *s)
{
  if (s == NULL)
    return;
  /* Processes hold references into the resolver's files: they go first. */
  st_process_table_free (s->processes);
  st_resolver_free (s->resolver);
  free (s->raw);
  free (s->frames);
  free (s);
}

const struct st_stats *
st_session_stats (const struct st_session *s)
{
  return &s->stats;
}

static int
emit (struct st_session *s, const struct st_sample *sample, const char *comm,
      size_t n_frames, enum st_stop_reason stop, const char *detail)
{
  struct st_callchain chain = {
    .sample = sample,
    .comm = comm,
    .frames = s->frames,
    .n_frames = n_frames,
    .stop = stop,
    .stop_detail = detail,
  };
  s->stats.stops[stop]++;
  if (n_frames > 0)
    s->stats.unwound++;
  s->stats.frames += n_frames;
  return s->sink_ops->sample (s->sink, &chain);
}

static int
handle_sample (struct st_session *s, const struct st_sample *sample)
{
  s->stats.samples++;
  const char *comm = st_process_table_comm_of (s->processes, sample->pid, sample->tid);
  struct st_dwarf_regs regs;
  if (sample->abi == ST_REGS_ABI_NONE || sample->stack_size == 0
      || st_regs_to_dwarf (s->opts.arch, sample, &regs) < 0)
    {
      if (sample->abi != ST_REGS_ABI_NONE && sample->stack_size > 0 && !s->warned_regs)
        {
          st_warning ("sample at byte %" PRIu64 " lacks the pc or stack pointer register "
                      "(register mask %#" PRIx64 ")", sample->input_offset, sample->regs_mask);
          s->warned_regs = true;
        }
      return emit (s, sample, comm, 0, ST_STOP_NO_USER_STACK, NULL);
    }

  struct st_process *p = st_process_table_get (s->processes, sample->pid);
  if (p == NULL)
    return -ENOMEM;
  Dwfl *dwfl = st_process_dwfl (s->processes, p);
  struct st_unwind_result result;
  if (dwfl == NULL)
    {
      /* Nothing to unwind with, but the sampled pc is still a frame.  */
      s->raw[0] = (struct st_raw_frame) { regs.pc, true };
      result = (struct st_unwind_result) { s->raw, 1, ST_STOP_NO_PROCESS_FILES, NULL };
      if (st_process_find_mapping (p, regs.pc) == NULL)
        result.stop = ST_STOP_NO_MODULE;
    }
  else
    st_unwind_sample (dwfl, p->slot, sample, &regs, s->raw, s->opts.max_frames, &result);

  struct st_symbolize_options sym_opts = { .inline_frames = s->opts.inline_frames };
  size_t n = st_symbolize (&sym_opts, dwfl, p, result.frames, result.n_frames, s->frames,
                           s->max_out_frames);
  return emit (s, sample, comm, n, result.stop, result.detail);
}

int
st_session_handle_event (const struct st_event *ev, void *arg)
{
  struct st_session *s = arg;
  if (s->opts.mode == ST_MODE_NONE)
    return 0;
  if (s->opts.mode == ST_MODE_PASSTHRU && ev->kind == ST_EVENT_SAMPLE)
    {
      s->stats.samples++;
      const struct st_sample *smp = &ev->sample;
      return emit (s, smp, st_process_table_comm_of (s->processes, smp->pid, smp->tid), 0,
                   ST_STOP_NOT_UNWOUND, NULL);
    }
  if (ev->kind != ST_EVENT_SAMPLE && s->sink_ops->event != NULL)
    {
      int r = s->sink_ops->event (s->sink, ev);
      if (r < 0)
        return r;
    }
  switch (ev->kind)
    {
    case ST_EVENT_SAMPLE:
      return handle_sample (s, &ev->sample);
    case ST_EVENT_MMAP:
      s->stats.mmaps++;
      return st_process_table_mmap (s->processes, &ev->mmap);
    case ST_EVENT_COMM:
      s->stats.comms++;
      return st_process_table_comm (s->processes, &ev->comm);
    case ST_EVENT_FORK:
      s->stats.forks++;
      return st_process_table_fork (s->processes, &ev->task);
    case ST_EVENT_EXIT:
      s->stats.exits++;
      return st_process_table_exit (s->processes, &ev->task);
    case ST_EVENT_LOST:
      s->stats.lost += ev->lost.lost;
      return 0;
    case ST_EVENT_BUILD_ID:
      return st_process_table_build_id (s->processes, &ev->build_id);
    }
  return 0;
}

int
st_session_finish (struct st_session *s)
{
  return s->sink_ops->finish (s->sink);
}

static void
print_missing (const char *path, const char *why, void *arg)
{
  fprintf ((FILE *) arg, "    %s: %s\n", path, why);
}

void
st_session_print_summary (const struct st_session *s, FILE *out)
{
  const struct st_stats *st = &s->stats;
  fprintf (out, "samples read:       %" PRIu64 "\n", st->samples);
  fprintf (out, "samples unwound:    %" PRIu64 "\n", st->unwound);
  fprintf (out, "user frames:        %" PRIu64 " (%.1f per sample)\n", st->frames,
           st->samples ? (double) st->frames / st->samples : 0.0);
  fprintf (out, "unwinds by how they ended:\n");
  for (int i = 0; i < ST_STOP_N; i++)
    if (st->stops[i] > 0)
      fprintf (out, "  %-30s %" PRIu64 " (%.1f%%)\n", st_stop_reason_name (i), st->stops[i],
               100.0 * st->stops[i] / (st->samples ? st->samples : 1));
  if (st->lost > 0)
    fprintf (out, "samples lost by the kernel: %" PRIu64 "\n", st->lost);
  fprintf (out, "files found, by how:\n");
  for (int i = 0; i < ST_FOUND_N; i++)
    fprintf (out, "  %-30s %u\n", st_found_by_name (i), st_resolver_found_count (s->resolver, i));
  unsigned missing = st_resolver_missing_count (s->resolver);
  if (missing > 0)
    {
      fprintf (out, "  %-30s %u\n", "not found", missing);
      st_resolver_foreach_missing (s->resolver, print_missing, out);
    }
}
