/* Live sampling as a source: the processes (-p) or the whole machine (-a)
 * opened and what already runs described from /proc, or the command
 * started with its events once everything else is ready; then a loop that
 * drains the ring buffers, ends a round, and sweeps the threads gone
 * without an exit record, until the command exits, the processes are
 * gone, or a stop comes.  The events and their rings: live-rings.c; /proc:
 * live-proc.c; the loop's sleep: live-wait.c.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic/array.h"
#include "basic/clock.h"
#include "basic/fd-limit.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/input/live.h"
#include "core/input/perf-format.h"

/* Processes whose exit records were lost would stay in the process table
 * for ever: every second (SWEEP_NS, live.h) or every EVICT_EVERY new
 * threads each thread seen is probed, and those that are gone get an exit
 * record of ours.  */
#define EVICT_EVERY 4096


/* --record: the records as they come, in perf's pipe format, which
   `perf script -i` and `perf report -i` read from a file too.  */
static int
record_open (struct st_live_source *lv)
{
  if (lv->opts->record_path == NULL)
    return 0;
  lv->record = fopen (lv->opts->record_path, "we");
  if (lv->record == NULL)
    return st_why_set (lv->why, errno, "cannot open %s for writing: %s",
                       lv->opts->record_path, strerror (errno));
  struct perf_pipe_file_header h = { PERF_MAGIC2, sizeof h };
  struct perf_event_header attr_h = { PERF_RECORD_HEADER_ATTR, 0,
                                      sizeof attr_h + sizeof lv->attr };
  /* The file's one event stands for both of ours: it says whether the
     mapping records carry build-ids (the sideband's), for the readers
     that believe the flag only then.  */
  struct perf_event_attr attr = lv->attr;
  attr.build_id = lv->sb_attr.build_id;
  fwrite (&h, sizeof h, 1, lv->record);
  fwrite (&attr_h, sizeof attr_h, 1, lv->record);
  fwrite (&attr, sizeof attr, 1, lv->record);
  if (ferror (lv->record))
    return st_why_set (lv->why, EIO, "writing %s: %s", lv->opts->record_path, strerror (EIO));
  return 0;
}

/* One record to --record: a write error there is said once, and the run
   goes on without it.  */
static void
record_write (struct st_live_source *lv, const uint8_t *rec, uint32_t size)
{
  lv->records++;
  if (lv->record != NULL && fwrite (rec, size, 1, lv->record) != 1)
    {
      st_error ("writing %s: %s", lv->opts->record_path, strerror (errno));
      fclose (lv->record);
      lv->record = NULL;
    }
}

/* One record to the parser, and to --record.  */
int
st_live_feed (struct st_live_source *lv, const uint8_t *rec, uint32_t size)
{
  record_write (lv, rec, size);
  return st_perf_source_feed (lv->parser, rec, size);
}

int
st_live_feed_in_place (struct st_live_source *lv, const uint8_t *rec, uint32_t size)
{
  record_write (lv, rec, size);
  return st_perf_source_feed_in_place (lv->parser, rec, size);
}

/* The end of a round: what the previous one read is released, unwound
   where it lies in the ring, and its room given back to the kernel.  */
static int
end_round (struct st_live_source *lv)
{
  if (lv->record != NULL)
    {
      struct perf_event_header h = { PERF_RECORD_FINISHED_ROUND, 0, sizeof h };
      fwrite (&h, sizeof h, 1, lv->record);
    }
  int r = st_perf_source_end_round (lv->parser);
  if (r == 0)
    st_live_release_rings (lv);
  return r;
}

static void
tell_child (const struct st_live_source *lv, pid_t pid)
{
  if (lv->opts->set_child != NULL)
    lv->opts->set_child (pid);
}

/* The command: a child that shares our memory and descriptors (clone with
   CLONE_VM | CLONE_FILES | CLONE_VFORK, the way posix_spawn starts a
   program) opens its own events (not with -a), maps their rings into our
   memory, and execs, while we sleep until it has.  Nothing of ours has to
   run between the start and the command's exec (a fork copies our page
   tables, 0.5 ms of CPU before the command's main in bench-startup.sh, and
   a "go" through a pipe is one more wake-up to wait for on a loaded
   machine), and its events exist before its first instruction
   (enable_on_exec).

   It starts last, when everything else is ready (the output, the session
   and its unwinder, debuginfod, the parser, --record): from its exec on,
   its samples fill the rings, and we return from the clone straight to
   the loop that drains them (after the `sampling' hook: as root, the
   namespace helper's spawn, 0.5-13 ms, which the ring absorbs).  So no
   sample waits for a set-up: the rings
   never hold more than what is written between two wake-ups of the loop,
   as at any later moment of the run.  (Started before the set-up, its
   samples waited in the rings meanwhile, and a ring holds only a quarter
   of a second at 999 Hz with 8 KiB stacks: a loaded machine lost some.)  */
struct child_start {
  struct st_live_source *lv;
  pid_t parent;
  int err;                  /* -errno: the events could not be opened */
  int exec_errno;           /* the exec failed */
};

/* The child, on a stack of its parent's, in its parent's memory, which is
   stopped meanwhile: what it writes there is the parent's.  Not
   instrumented by ASan: a frame that execs never returns to unpoison its
   redzones.  */
#if defined __has_attribute
# if __has_attribute (no_sanitize_address)
__attribute__ ((no_sanitize_address))
# endif
#endif
static int
child_main (void *arg)
{
  struct child_start *c = arg;
  struct st_live_source *lv = c->lv;
  /* Never orphaned: if the profiler dies (SIGKILL, a crash), so does
     the command.  The parent may have died before the prctl.  */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != c->parent)
    _exit (127);
  /* With -a the events of every CPU see the command already.  */
  int r = lv->opts->all_cpus ? 0 : st_live_open_for_pid (lv, 0);
  if (r < 0)
    {
      c->err = r;
      _exit (127);
    }
  /* Signals are blocked until here: our handlers, run in this child,
     would write our flags.  An exec sets caught signals to their default
     anyway.  */
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigaction (SIGINT, &dfl, NULL);
  sigaction (SIGTERM, &dfl, NULL);
  if (lv->opts->reset_for_exec != NULL)
    lv->opts->reset_for_exec ();
  /* The descriptor limit the command would have had without us.  */
  st_fd_limit_restore ();
  if (lv->opts->command_env != NULL)
    execvpe (lv->opts->command[0], lv->opts->command, lv->opts->command_env);
  else
    execvp (lv->opts->command[0], lv->opts->command);
  c->exec_errno = errno;
  _exit (127);
}

/* The child's stack: on ours, which ASan and the guard page know.  */
#define CHILD_STACK (128 * 1024)

static int
start_command (struct st_live_source *lv)
{
  struct child_start c = { lv, getpid (), 0, 0 };
  _Alignas (16) char stack[CHILD_STACK];
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_SETMASK, &all, &old);
  pid_t pid = clone (child_main, stack + sizeof stack,
                     CLONE_VM | CLONE_FILES | CLONE_VFORK | SIGCHLD, &c);
  int e = errno;
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (pid < 0)
    return st_why_set (lv->why, e, "cannot start %s: %s", lv->opts->command[0], strerror (e));
  lv->child = pid;
  tell_child (lv, pid);
  if (c.exec_errno != 0)
    return st_why_set (lv->why, c.exec_errno, "cannot run %s: %s", lv->opts->command[0],
                       strerror (c.exec_errno));
  return c.err;
}

static int
drain_all (struct st_live_source *lv)
{
  int r = st_live_drain_rings (lv);
  return r < 0 ? r : end_round (lv);
}

/* Every thread the process table may hold an entry for is tracked, from
   the events on their way to it, until its exit goes the same way.  */
static int
track (struct st_live_source *lv, pid_t pid, pid_t tid)
{
  if (pid <= 0 || tid <= 0)
    return 0;
  /* Most samples are of the thread the one before was of: two lookups
     spared for each.  */
  if (tid == lv->last_tid && pid == lv->last_pid)
    return 0;
  int r = 0;
  if (st_hashmap_get_u64 (lv->threads, (uint32_t) tid) == NULL)
    r = st_hashmap_put_u64 (lv->threads, (uint32_t) tid, (void *) (uintptr_t) pid);
  /* The process's own entry goes with its leader's exit.  */
  if (r == 0 && tid != pid && st_hashmap_get_u64 (lv->threads, (uint32_t) pid) == NULL)
    r = st_hashmap_put_u64 (lv->threads, (uint32_t) pid, (void *) (uintptr_t) pid);
  if (r == 0)
    {
      lv->last_tid = tid;
      lv->last_pid = pid;
    }
  return r;
}

void
st_live_untrack (struct st_live_source *lv, pid_t tid)
{
  st_hashmap_remove_u64 (lv->threads, (uint32_t) tid);
  lv->last_tid = 0;
}

static int
live_event (const struct st_event *ev, void *arg)
{
  struct st_live_source *lv = arg;
  int r = 0;
  switch (ev->kind)
    {
    case ST_EVENT_SAMPLE: r = track (lv, ev->sample.pid, ev->sample.tid); break;
    case ST_EVENT_MMAP: r = track (lv, ev->mmap.pid, ev->mmap.pid); break;
    case ST_EVENT_COMM: r = track (lv, ev->comm.pid, ev->comm.tid); break;
    case ST_EVENT_FORK: r = track (lv, ev->task.pid, ev->task.tid); break;
    case ST_EVENT_EXIT:
      st_live_untrack (lv, ev->task.tid);
      break;
    default: break;
    }
  if (r < 0)
    return r;
  return lv->fn (ev, lv->fn_arg);
}

static int
probe_thread (const void *key, size_t len, void *value, void *arg)
{
  struct st_live_source *lv = arg;
  uint64_t tid;
  memcpy (&tid, key, sizeof tid);
  pid_t pid = (pid_t) (uintptr_t) value;
  /* A signal 0 to a thread of a process: ESRCH when either is gone (a
     zombie still answers; its exit record was written already).  */
  if (syscall (SYS_tgkill, pid, (pid_t) tid, 0) == 0 || errno != ESRCH)
    return 0;
  if (ST_GROW (lv->dead, lv->cap_dead, lv->n_dead, 256) < 0)
    return -ENOMEM;
  lv->dead[lv->n_dead++] = (struct dead_thread) { pid, (pid_t) tid };
  return 0;
}

/* Finds the threads that are gone, when a sweep is due.  Before the rings
   are drained: whatever a thread found gone wrote is read in that drain,
   before its exit record of ours.  */
static int
sweep_probe (struct st_live_source *lv, bool *due)
{
  uint64_t now = st_now_ns ();
  size_t n = st_hashmap_size (lv->threads);
  *due = now - lv->last_sweep >= SWEEP_NS || n >= lv->threads_at_sweep + EVICT_EVERY;
  if (!*due)
    return 0;
  lv->last_sweep = now;
  lv->n_dead = 0;
  return st_hashmap_foreach (lv->threads, probe_thread, lv);
}

/* Exit records for the threads found gone, dated after every record read:
   they go to the process table after the threads' last samples.  */
static int
sweep_evict (struct st_live_source *lv)
{
  uint64_t time = st_perf_source_max_time (lv->parser);
  int r = 0;
  for (size_t i = 0; i < lv->n_dead && r == 0; i++)
    {
      pid_t pid = lv->dead[i].pid, tid = lv->dead[i].tid;
      if (st_hashmap_get_u64 (lv->threads, (uint32_t) tid) == NULL)
        continue;   /* its exit record came in the drain */
      uint8_t rec[8 + 24 + TRAILER_SIZE];
      struct perf_event_header h = { PERF_RECORD_EXIT, 0, sizeof rec };
      uint32_t ids[4] = { pid, pid, tid, tid };
      memcpy (rec, &h, sizeof h);
      memcpy (rec + 8, ids, sizeof ids);
      memcpy (rec + 24, &time, sizeof time);
      st_live_put_trailer (rec + 32, pid, tid, time);
      st_live_untrack (lv, tid);
      lv->evicted++;
      r = st_live_feed (lv, rec, sizeof rec);
    }
  lv->n_dead = 0;
  lv->threads_at_sweep = st_hashmap_size (lv->threads);
  return r;
}


/* One pass: the rings drained, the gone threads evicted, a round ended.  */
static int
pass (struct st_live_source *lv)
{
  bool due = false;
  int r = sweep_probe (lv, &due);
  if (r == 0)
    r = st_live_drain_rings (lv);
  if (r == 0 && due)
    r = sweep_evict (lv);
  return r < 0 ? r : end_round (lv);
}

static int
sample_loop (struct st_live_source *lv, volatile sig_atomic_t *stop)
{
  struct st_live_waits w;
  int r = st_live_waits_open (lv, &w);
  bool done = false;
  while (r == 0 && !done)
    {
      r = st_live_wait (lv, &w, stop);
      if (r < 0)
        break;
      if (*stop)
        done = true;
      if (lv->child > 0)
        {
          int status;
          if (waitpid (lv->child, &status, WNOHANG) == lv->child)
            {
              lv->command_status = status;
              lv->child = 0;
              tell_child (lv, 0);
              if (lv->opts->command != NULL)
                done = true;
            }
        }
      else if (lv->opts->n_pids > 0 && st_live_targets_gone (lv, &w))
        done = true;
      /* One more pass after the end: what the last moments wrote.  */
      r = pass (lv);
    }
  if (w.pfds != NULL)
    st_live_waits_close (&w);
  return r;
}

/* Reaps the command if it ends within MS milliseconds (0: if it has
   ended); true when it is gone.  A signal to us cuts the wait short.  */
static bool
reap_within (struct st_live_source *lv, int ms)
{
  int pidfd = (int) syscall (SYS_pidfd_open, lv->child, 0);
  if (pidfd >= 0 && ms > 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      poll (&p, 1, ms);
    }
  if (pidfd >= 0)
    close (pidfd);
  int status;
  pid_t w = waitpid (lv->child, &status, WNOHANG);
  if (w == lv->child)
    lv->command_status = status;
  if (w == lv->child || (w < 0 && errno == ECHILD))
    {
      lv->child = 0;
      tell_child (lv, 0);
      return true;
    }
  return false;
}

/* The command does not outlive the run, however the run ends: it is given
   a moment to end on the signal that stopped us (forwarded to it, or sent
   to its process group), then SIGTERM, then SIGKILL; at once SIGKILL when
   the run must stop at once.  */
static void
end_command (struct st_live_source *lv, volatile sig_atomic_t *stop)
{
  if (lv->child <= 0)
    return;
  bool now = lv->opts->force_stop != NULL && *lv->opts->force_stop;
  if (!now && reap_within (lv, *stop ? 1000 : 0))
    return;
  now = lv->opts->force_stop != NULL && *lv->opts->force_stop;
  if (!now)
    {
      kill (lv->child, SIGTERM);
      if (reap_within (lv, 2000))
        return;
    }
  kill (lv->child, SIGKILL);
  int status;
  pid_t w;
  while ((w = waitpid (lv->child, &status, 0)) < 0 && errno == EINTR)
    ;
  if (w == lv->child)
    lv->command_status = status;
  lv->child = 0;
  tell_child (lv, 0);
}

static int
live_run (void *state, st_event_fn fn, void *arg, volatile sig_atomic_t *stop,
          struct st_why *why)
{
  struct st_live_source *lv = state;
  const struct st_live_options *opts = lv->opts;
  lv->why = why;
  lv->fn = fn;
  lv->fn_arg = arg;
  st_live_build_attr (lv);
  lv->last_sweep = st_now_ns ();
  lv->threads = st_hashmap_new (NULL);
  int r = lv->threads != NULL ? st_live_online_cpus (lv) : -ENOMEM;
  if (r == 0)
    r = st_perf_source_new_live (&lv->attr, lv->sb_attr.build_id, live_event, lv, why,
                                 &lv->parser);
  if (r == 0)
    r = record_open (lv);
  /* Stopped before it started: nothing to run or sample.  */
  if (r == 0 && *stop)
    goto out;
  if (r < 0)
    goto out;

  /* -- CMD opens its events in the command (start_command).  */
  if (opts->all_cpus)
    r = st_live_open_for_pid (lv, -1);
  else
    for (size_t i = 0; i < opts->n_pids && r == 0; i++)
      r = st_live_open_for_process (lv, opts->pids[i]);
  if (r < 0)
    goto out;

  /* What already runs is described first, then sampling starts.  */
  if (opts->all_cpus)
    r = st_live_synthesize_all (lv);
  else
    for (size_t i = 0; i < opts->n_pids && r == 0; i++)
      r = st_live_synthesize_process (lv, opts->pids[i]);
  if (r < 0)
    goto out;
  if (opts->command == NULL || opts->all_cpus)
    st_live_enable_all (lv, PERF_EVENT_IOC_ENABLE);
  /* Last: see start_command.  */
  if (opts->command != NULL)
    r = start_command (lv);
  if (r < 0)
    goto out;
  if (opts->sampling != NULL)
    opts->sampling (opts->sampling_arg);
  r = sample_loop (lv, stop);
  st_live_enable_all (lv, PERF_EVENT_IOC_DISABLE);
  if (r == 0)
    r = drain_all (lv);
  if (r == 0)
    r = st_live_feed_unreported_losses (lv);
  if (r == 0)
    r = st_perf_source_flush (lv->parser);

out:
  /* Interrupted, or failed: the command does not outlive us.  */
  end_command (lv, stop);
  lv->tracked = lv->threads ? st_hashmap_size (lv->threads) : 0;
  st_live_close_rings (lv);
  if (lv->record != NULL && fclose (lv->record) != 0 && r == 0)
    r = st_why_set (why, EIO, "writing %s: %s", opts->record_path, strerror (errno));
  lv->record = NULL;
  st_perf_source_free_live (lv->parser);
  lv->parser = NULL;
  lv->why = NULL;
  return r;
}

static void
live_report (const void *state)
{
  const struct st_live_source *lv = state;
  if (lv->sideband_lost > 0)
    st_warning ("the kernel lost %" PRIu64 " process records (maps, names, forks, exits): "
                "their ring was full; samples of those processes may not unwind",
                lv->sideband_lost);
  if (lv->opts->stats)
    fprintf (stderr, "threads gone without an exit record, evicted: %" PRIu64
             " (%" PRIu64 " known at the end)\n", lv->evicted, lv->tracked);
  if (lv->command_status > 0 && WIFEXITED (lv->command_status))
    st_info ("%s exited with status %d", lv->opts->command[0],
             WEXITSTATUS (lv->command_status));
}

static void
live_free (void *state)
{
  struct st_live_source *lv = state;
  if (lv == NULL)
    return;
  st_live_close_rings (lv);
  st_hashmap_free (lv->threads);
  free (lv->dead);
  free (lv);
}

int
st_live_source_new (const struct st_live_options *opts, struct st_live_source **out)
{
  struct st_live_source *lv = calloc (1, sizeof *lv);
  if (lv == NULL)
    return -ENOMEM;
  lv->opts = opts;
  lv->child = -1;
  lv->command_status = -1;
  lv->pages = opts->mmap_pages ? opts->mmap_pages : ST_LIVE_DEFAULT_MMAP_PAGES;
  *out = lv;
  return 0;
}

const struct st_source_ops st_source_live = {
  .name = "live",
  .endless = true,
  .run = live_run,
  .report = live_report,
  .free = live_free,
};
