/* Live sampling's waits: the loop sleeps in ppoll on the rings'
 * watermarks, a pidfd for the command or each -p process, and the
 * signals, until there is work, an exit, a stop or the next sweep.  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "basic/clock.h"
#include "basic/signals.h"
#include "core/input/live.h"

/* The loop sleeps until a ring's watermark (wakeup_watermark: a quarter of
   the ring), an exit or a signal, and at least once a second for the
   sweep; a ring that cannot wake it any more is read this often.  */
#define HUNG_NS 100000000ull

static int
pidfd_of (pid_t pid)
{
  /* -1 when it cannot be had (gone already, an old kernel): poll skips
     it and the sweep's timer checks that process instead.  */
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

int
st_live_waits_open (struct st_live_source *lv, struct st_live_waits *w)
{
  const struct st_live_options *o = lv->opts;
  size_t n_pids = lv->child > 0 ? 1 : o->n_pids;
  w->pfds = calloc (2 * lv->n_rings + n_pids, sizeof *w->pfds);
  if (w->pfds == NULL)
    return -ENOMEM;
  w->n = 0;
  w->hung = false;
  for (size_t i = 0; i < lv->n_rings; i++)
    {
      if (lv->rings[i].fd >= 0)
        w->pfds[w->n++] = (struct pollfd) { .fd = lv->rings[i].fd, .events = POLLIN };
      if (lv->sb_rings[i].fd >= 0)
        w->pfds[w->n++] = (struct pollfd) { .fd = lv->sb_rings[i].fd, .events = POLLIN };
    }
  w->first_pid = w->n;
  for (size_t i = 0; i < n_pids; i++)
    w->pfds[w->n++] = (struct pollfd) {
      .fd = pidfd_of (lv->child > 0 ? lv->child : o->pids[i]), .events = POLLIN };
  w->pids_left = 0;
  for (size_t i = w->first_pid; lv->child <= 0 && i < w->n; i++)
    w->pids_left += w->pfds[i].fd >= 0;
  return 0;
}

void
st_live_waits_close (struct st_live_waits *w)
{
  for (size_t i = w->first_pid; i < w->n; i++)
    if (w->pfds[i].fd >= 0)
      close (w->pfds[i].fd);
  free (w->pfds);
}

/* Waits for a ring's watermark, an exit, a signal or the next sweep.  The
   signals are blocked from the check of STOP until ppoll waits, so that
   one arriving in between is not slept through.  */
int
st_live_wait (struct st_live_source *lv, struct st_live_waits *w, volatile sig_atomic_t *stop)
{
  uint64_t now = st_now_ns (), due = lv->last_sweep + SWEEP_NS;
  uint64_t ns = due > now ? due - now : 0;
  if (w->hung && ns > HUNG_NS)
    ns = HUNG_NS;
  struct timespec ts = { ns / 1000000000ull, ns % 1000000000ull };
  sigset_t old;
  st_signals_block (&old);
  int r = 0;
  if (!*stop && ppoll (w->pfds, w->n, &ts, &old) < 0 && errno != EINTR)
    r = -errno;
  st_signals_restore (&old);
  /* The thread whose event a ring was made for (-p) exited: that event
     says POLLHUP at every poll from then on, while the process's other
     threads go on writing into its ring.  */
  for (size_t i = 0; r == 0 && i < w->first_pid; i++)
    if (w->pfds[i].fd >= 0 && (w->pfds[i].revents & (POLLHUP | POLLERR)))
      {
        w->pfds[i].fd = -1;
        w->hung = true;
      }
  return r;
}

/* Whether a -p process the pidfds do not watch still exists (a zombie
   does, until its parent reaps it).  */
static bool
targets_alive (const struct st_live_source *lv, const struct st_live_waits *w)
{
  const struct st_live_options *o = lv->opts;
  for (size_t i = 0; i < o->n_pids; i++)
    if (w->pfds[w->first_pid + i].fd == -1
        && (kill (o->pids[i], 0) == 0 || errno == EPERM))
      return true;
  return false;
}

/* The -p processes' state after a wake: true when none is left.  A pidfd
   that fired is dropped from the wait (a zombie's stays readable); a
   process without one is probed.  */
bool
st_live_targets_gone (struct st_live_source *lv, struct st_live_waits *w)
{
  const struct st_live_options *o = lv->opts;
  for (size_t i = 0; i < o->n_pids; i++)
    {
      struct pollfd *p = &w->pfds[w->first_pid + i];
      if (p->fd >= 0 && p->revents != 0)
        {
          close (p->fd);
          p->fd = -2;   /* gone: neither waited on nor probed */
          w->pids_left--;
        }
    }
  return w->pids_left == 0 && !targets_alive (lv, w);
}
