/* A run: events in, unwound samples out.  The session feeds events to one
 * or more unwinders (one per thread with --jobs) and hands every sample,
 * unwound and symbolized, to the output sink in input order, together with
 * the other events for sinks that want them.  Data flows one way.  */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/event.h"
#include "core/unwind/regs.h"
#include "core/output/sink.h"
#include "core/unwind/dwfl-unwind.h"

/* -m/--mode, as elfutils' eu-stacktrace defined it.  */
enum st_unwind_mode {
  ST_MODE_NAIVE,     /* unwind every sample (the default) */
  ST_MODE_PASSTHRU,  /* hand samples to the sink without unwinding */
  ST_MODE_NONE,      /* read the input, write nothing but the sink's header */
};

struct st_session_options {
  enum st_unwind_mode mode;
  size_t max_frames;          /* --max-frames */
  bool inline_frames;         /* --inline */
  bool unwinder_libdwfl;      /* --unwinder=libdwfl */
  bool live;                  /* -p, -a or a command: the processes run now */
  const struct st_regs_arch *arch;
  unsigned jobs;              /* unwinding threads; 1: unwind inline */
  struct st_debuginfod *debuginfod; /* NULL: off; outlives the session */
  struct st_ns_client *ns_client;   /* NULL: off; outlives the session */
  const struct st_sysroot *sysroot; /* --sysroot, --search-path; NULL: off */
  unsigned containers;        /* --container: ST_CONTAINER_* kinds to detect */
  /* When *FORCE_STOP becomes non-zero (a third signal), samples not unwound
     yet are dropped, counted in st_stats.dropped: the run ends at once with
     what it has.  NULL: never.  */
  volatile sig_atomic_t *force_stop;
};

/* The stack copy sizes the --stats hint weighs (perf's default is 8192,
   its largest 65528).  */
#define ST_STACK_FIT_N 6
extern const uint32_t ST_STACK_FIT_SIZES[ST_STACK_FIT_N];

struct st_stats {
  uint64_t samples;           /* samples read */
  uint64_t unwound;           /* with at least one user frame */
  uint64_t frames;            /* user frames written */
  /* Frames stepped by the unwind-rule cache and by libdwfl.  */
  uint64_t frames_by_cache, frames_by_libdwfl;
  uint64_t stops[ST_STOP_N];  /* why each unwind ended */
  uint64_t lost;              /* samples the kernel dropped */
  uint64_t period_sum;        /* sum of the samples' periods */
  uint64_t mmaps, comms, forks, exits;
  uint64_t dropped;           /* read, not unwound: the run was stopped at once */
  /* How much stack copy the samples needed: stack_fits[i] samples were
     unwound as far with ST_STACK_FIT_SIZES[i] bytes; stack_copy_max is the
     largest copy a sample carried.  */
  uint64_t stack_fits[ST_STACK_FIT_N];
  uint64_t stack_exhausted;   /* the copy ran out: they needed more */
  uint64_t stack_samples;     /* samples with a stack copy */
  uint64_t stack_copy_max;
};

struct st_session;

/* Starts a session that writes to SINK (the unwinding threads, with
   --jobs).  0, or -errno (-ENOMEM, or why a thread could not start).  */
int st_session_new (const struct st_session_options *opts, struct st_sink *sink,
                    const struct st_sink_ops *sink_ops, struct st_session **out);
/* Stops the unwinding threads, if still running, and frees.  */
void st_session_free (struct st_session *s);

/* The st_event_fn that sources feed.  */
int st_session_handle_event (const struct st_event *event, void *session);

/* Waits for every sample to be written, then ends the output (aggregating
   sinks write now).  Returns 0 or the run's first error (unwinding or
   output).  */
int st_session_finish (struct st_session *s);

/* The first error the sink returned (writing the output), or 0: an error
   of st_session_handle_event that is the output's, not the input's.  */
int st_session_output_error (const struct st_session *s);

const struct st_stats *st_session_stats (const struct st_session *s);
/* The summary printed by --stats and -v.  */
void st_session_print_summary (const struct st_session *s, FILE *out);
/* With unwinding threads, samples whose stack IN keeps (st_input_keep)
   are not copied for them: the session holds IN's bytes until the
   threads are done.  IN outlives the session's last event.  */
struct st_input;
void st_session_hold_input (struct st_session *s, struct st_input *in);

/* The default --jobs: the CPUs this process may run on less one (for the
   reading thread), 1 to 4.  */
unsigned st_session_default_jobs (void);
