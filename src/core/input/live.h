/* Live sampling's insides, shared by its four files and by nothing else:
 * source-live.c is the source (the command, the sampling loop, the sweeps
 * of gone threads, --record), live-rings.c opens the perf events and reads
 * their ring buffers, live-proc.c describes from /proc what already runs,
 * live-wait.c is where the loop sleeps until there is work.  The first
 * three feed records through st_live_feed to the perf.data parser.  */
#pragma once

#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "basic/hashmap.h"
#include "basic/why.h"
#include "core/event.h"
#include "core/input/source-live.h"
#include "core/input/source-perf.h"

/* Samples and process records (maps, names, forks, exits) go to separate
 * buffers, as perf record's side-band event does: a flood of short-lived
 * processes cannot push samples out, nor samples the maps they need, and
 * what the kernel reports lost in the sample buffer is samples only.
 *
 * The sample buffer: 2 MiB per CPU by default (--mmap-pages).  At 999 Hz
 * and 8 KiB stacks a CPU writes ~8 MiB/s, so this holds a quarter of a
 * second; the loop wakes when a quarter is written, and samples stay in it,
 * unwound in place, until the round after (so about half is free when the
 * unwinder starts); a bigger one mostly costs memory (the pages count in
 * our RSS, and against the locked-memory limit).  The
 * side-band buffer, 512 KiB, holds the records of a few hundred new
 * processes (a dynamically linked exec writes ~2 KiB of them).  */
#define SIDEBAND_PAGES 128

struct ring {
  int fd;
  int cpu;
  bool sideband;
  size_t pages;
  struct perf_event_mmap_page *meta;
  uint8_t *data;
  uint64_t size;            /* bytes of data, a power of two */
  /* Samples are unwound where the kernel wrote them: the ring's tail (what
     the kernel may overwrite) stays at what the round before last read,
     which the last round end released.  */
  uint64_t read;            /* what was fed, up to here */
  uint64_t read_before;     /* ... as of the last round end */
};

/* An open event, and which buffer it writes to.  */
struct live_fd {
  int fd;
  bool sideband;
};

struct dead_thread {
  pid_t pid, tid;
};

struct st_live_source {
  const struct st_live_options *opts;
  struct st_why *why;               /* of the run, for its failures */
  struct perf_event_attr attr;      /* samples */
  struct perf_event_attr sb_attr;   /* process records */
  unsigned pages;                   /* of each sample buffer */
  struct st_perf_source *parser;
  struct ring *rings;       /* one per CPU: the first event opened there */
  struct ring *sb_rings;    /* the same, for process records */
  size_t n_rings;
  /* What the parser delivers goes through live_event on its way to FN.  */
  st_event_fn fn;
  void *fn_arg;
  struct st_hashmap *threads;       /* tid -> pid, every thread seen */
  pid_t last_tid, last_pid;         /* the thread tracked last, known */
  size_t threads_at_sweep;
  uint64_t last_sweep;              /* CLOCK_MONOTONIC ns */
  struct dead_thread *dead;
  size_t n_dead, cap_dead;
  uint64_t sideband_lost;   /* process records the kernel could not store */
  uint64_t samples_lost;    /* samples the kernel reported lost, in LOST records */
  uint64_t evicted;         /* threads found gone without an exit record */
  uint64_t tracked;         /* threads known at the end */
  int command_status;       /* wait status of the command, -1 if none */
  struct live_fd *fds;      /* every event, rings' included */
  size_t n_fds, cap_fds;
  pid_t child;
  FILE *record;             /* --record */
  uint64_t records;
  uint8_t wrap_buf[UINT16_MAX + 1];
};

/* The sample_id_all trailer our attr implies: TID, TIME, CPU.  */
#define TRAILER_SIZE 24

static inline size_t
st_live_put_trailer (uint8_t *p, pid_t pid, pid_t tid, uint64_t time)
{
  uint32_t v[2] = { pid, tid };
  uint32_t cpu[2] = { 0, 0 };
  memcpy (p, v, 8);
  memcpy (p + 8, &time, 8);
  memcpy (p + 16, cpu, 8);
  return TRAILER_SIZE;
}

/* source-live.c: one record to the parser (and to --record).  */
int st_live_feed (struct st_live_source *lv, const uint8_t *rec, uint32_t size);
/* The same as st_live_feed for a sample left in its ring until
   st_live_release_rings.  */
int st_live_feed_in_place (struct st_live_source *lv, const uint8_t *rec, uint32_t size);
/* A thread forgotten: its exit is on its way to the process table.  */
void st_live_untrack (struct st_live_source *lv, pid_t tid);

/* live-rings.c */
/* The sampling event's and the process-record event's attributes.  */
void st_live_build_attr (struct st_live_source *lv);
/* The rings of the online CPUs, not open yet.  */
int st_live_online_cpus (struct st_live_source *lv);
/* Opens both events for PID (-1: every process) on every CPU.  */
int st_live_open_for_pid (struct st_live_source *lv, pid_t pid);
/* Feeds every complete record of every ring, process records first.  */
int st_live_drain_rings (struct st_live_source *lv);
/* After a round end: gives the kernel back the room of what it released. */
void st_live_release_rings (struct st_live_source *lv);
/* After the last drain: the losses the kernel counted but could not
   report, fed as one more LOST record (samples) or counted (process
   records).  */
int st_live_feed_unreported_losses (struct st_live_source *lv);
/* PERF_EVENT_IOC_ENABLE or _DISABLE on every event.  */
void st_live_enable_all (struct st_live_source *lv, unsigned long request);
/* Unmaps the rings and closes the events.  */
void st_live_close_rings (struct st_live_source *lv);

/* live-proc.c */
/* Opens the events for every thread of a running process.  */
int st_live_open_for_process (struct st_live_source *lv, pid_t pid);
/* Records for what a running process already has (its threads' names, its
   executable mappings), as perf record synthesizes them; for every process
   with st_live_synthesize_all.  */
int st_live_synthesize_process (struct st_live_source *lv, pid_t pid);
int st_live_synthesize_all (struct st_live_source *lv);

/* live-wait.c */
/* The sweep's period: the loop wakes at least this often.  */
#define SWEEP_NS 1000000000ull

/* What the loop waits on: the rings, and a pidfd for the command or each
   -p process, so that an exit wakes it rather than a timer.  */
struct st_live_waits {
  struct pollfd *pfds;
  size_t n, first_pid;      /* pfds[first_pid..n) are the pidfds */
  size_t pids_left;         /* -p processes with a pidfd, not gone yet */
  bool hung;                /* a ring's own event is gone: read on a timer */
};

/* What to wait on, once the events are open.  */
int st_live_waits_open (struct st_live_source *lv, struct st_live_waits *w);
void st_live_waits_close (struct st_live_waits *w);
/* Waits for a ring's watermark, an exit, a signal (STOP set) or the next
   sweep.  */
int st_live_wait (struct st_live_source *lv, struct st_live_waits *w, volatile sig_atomic_t *stop);
/* After a wait, for -p: true when every process is gone.  */
bool st_live_targets_gone (struct st_live_source *lv, struct st_live_waits *w);
