/* Live sampling with perf_event_open: a command and its children, running
 * processes, or the whole machine, sampled the way `perf record
 * --call-graph dwarf` samples (user registers and a copy of the user
 * stack), unwound as the run goes, so that every process's files are read
 * while it is still alive.  */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/event.h"
#include "core/unwind/regs.h"
#include "core/input/source.h"

enum st_live_event {
  ST_LIVE_CPU_CLOCK,        /* software timer: works everywhere, VMs included */
  ST_LIVE_CYCLES,           /* hardware cycles, where the machine has them */
};

struct st_live_options {
  char *const *command;     /* argv of a command to run, or NULL */
  char *const *command_env; /* its environment (NULL: ours) */
  const pid_t *pids;        /* processes to sample, or NULL */
  size_t n_pids;
  bool all_cpus;            /* the whole machine */
  enum st_live_event event;
  uint64_t freq;            /* samples per second, or 0 with period */
  uint64_t period;          /* events per sample (-c) */
  uint32_t stack_size;      /* bytes of user stack per sample */
  bool kernel;              /* also sample the kernel (kernel frames kept) */
  const char *record_path;  /* --record: also write a perf.data (pipe format) */
  unsigned mmap_pages;      /* pages of sample buffer per CPU, a power of two (0: default) */
  const struct st_regs_arch *arch;
  /* Set when the run must end at once (a third signal): the command is
     killed without waiting for it to end on the signal it was given.  */
  volatile sig_atomic_t *force_stop;
  bool stats;               /* the report also counts the threads evicted */
  /* Told the command's pid when it starts and 0 when it is gone, for the
     signal handler that forwards a stop to it (signals.h, a layer above
     this one); NULL: nobody.  */
  void (*set_child) (pid_t pid);
  /* Run in the command between its start and its exec (async-signal-safe;
     in our memory, which we do not touch meanwhile): the signal
     dispositions a program expects.  NULL: none.  */
  void (*reset_for_exec) (void);
  /* Called once, when sampling has started (the command runs, the events
     are enabled), with SAMPLING_ARG: set-up that can overlap with the run
     rather than delay its start or its first sample (the namespace
     helper's start).  NULL: none.  */
  void (*sampling) (void *arg);
  void *sampling_arg;
};

/* The default --mmap-pages.  */
#define ST_LIVE_DEFAULT_MMAP_PAGES 512

/* Live sampling as a source (see source.h): its run samples until the
   command exits, the processes are gone, or *STOP is set, delivering
   events in time order; a stop is its normal end (it is `endless').  It
   returns 0, FN's negative return, -EBADMSG with WHY at the offset of a
   malformed record in the sample buffer, or -errno with WHY saying what
   failed.  Its report says what the kernel lost, the threads evicted
   (with STATS) and how the command exited.  OPTS must outlive the
   source.  */
struct st_live_source;
extern const struct st_source_ops st_source_live;
int st_live_source_new (const struct st_live_options *opts, struct st_live_source **out);
