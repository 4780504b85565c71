/* The opener's side of the jobs (broker.h, broker-job.h).  */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns-helper/broker-job.h"

/* What a job's process answered: the reply and the descriptors that came
   with it.  */
struct job_answer {
  struct job_reply reply;
  int got[ST_BROKER_MAX_PATHS];
  size_t n_got;
};

static void
close_got (struct job_answer *a)
{
  for (size_t i = 0; i < a->n_got; i++)
    close (a->got[i]);
  a->n_got = 0;
}

/* The process behind B answered nonsense, or not in time: it may answer
   late, and its answers could then be taken for the next job's.  No more
   jobs.  */
static void
give_up (struct st_broker *b)
{
  close (b->sock);
  b->sock = -1;
  b->root_id = 0;   /* a restarted resolver holds no root yet */
}

/* One job on SOCK and its reply.  Returns 0, or -errno: then whatever
   answers on SOCK later could be taken for the next job's, so the caller
   gives SOCK up.  */
static int
exchange (int sock, const struct job_header *h, const char *const *paths, const int *send_fds,
          size_t n_send, struct job_answer *a)
{
  a->n_got = 0;
  static char buf[MAX_JOB];
  size_t len = sizeof *h;
  memcpy (buf, h, sizeof *h);
  for (size_t i = 0; i < h->n_paths; i++)
    {
      size_t l = strlen (paths[i]) + 1;
      if (l > ST_NSH_PATH_MAX)
        return -ENAMETOOLONG;
      memcpy (buf + len, paths[i], l);
      len += l;
    }
  int r = st_nsh_send (sock, buf, len, send_fds, n_send);
  if (r < 0)
    return r;
  /* Every socket a job goes on has SO_RCVTIMEO of ST_BROKER_JOB_TIMEOUT_S
     (broker.c): EAGAIN is a job not answered in time.  */
  unsigned flags;
  ssize_t m = st_nsh_recv (sock, &a->reply, sizeof a->reply, a->got, ST_BROKER_MAX_PATHS,
                          &a->n_got, &flags);
  if (m == (ssize_t) sizeof a->reply && a->reply.magic == JOB_MAGIC && flags == 0)
    return 0;
  close_got (a);
  return m < 0 ? (m == -EAGAIN ? -ETIMEDOUT : (int) m) : m == 0 ? -ECONNRESET : -EPROTO;
}

static int
job_round_trip (struct st_broker *b, const struct job_header *h, const char *const *paths,
                const int *send_fds, size_t n_send, struct job_answer *a)
{
  a->n_got = 0;
  if (b->sock < 0)
    return -ENOTCONN;
  int r = exchange (b->sock, h, paths, send_fds, n_send, a);
  if (r < 0 && r != -ENAMETOOLONG)
    give_up (b);
  return r;
}

/* REPLY's errors and descriptors GOT into FDS and ERRS.  Returns 0, or
   -EPROTO when they do not match (GOT closed).  */
static int
spread_reply (struct job_answer *a, size_t n, int *fds, int *errs)
{
  size_t want = 0;
  for (size_t i = 0; i < n; i++)
    want += a->reply.errs[i] == 0;
  if (want != a->n_got)
    {
      close_got (a);
      return -EPROTO;
    }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      errs[i] = a->reply.errs[i];
      if (a->reply.errs[i] == 0)
        fds[i] = a->got[k++];
    }
  return 0;
}

/* An open job: FD (and USERNS_FD) sent unless SEND_FD is false.  */
static int
open_job (struct st_broker *b, int fd, int userns_fd, bool send_fd, uint64_t root_id,
          const char *const *paths, size_t n, int *fds, int *errs)
{
  assert (n > 0 && n <= ST_BROKER_MAX_PATHS);
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = -1;
      errs[i] = EIO;
    }
  struct job_header h = { JOB_MAGIC, (uint32_t) n, userns_fd >= 0, JOB_OPEN, root_id };
  int send_fds[2] = { fd, userns_fd };
  struct job_answer a;
  int r = job_round_trip (b, &h, paths, send_fds, !send_fd ? 0 : userns_fd >= 0 ? 2 : 1, &a);
  if (r == 0 && (r = spread_reply (&a, n, fds, errs)) < 0)
    give_up (b);
  return r;
}

int
st_broker_open (struct st_broker *b, int fd, int userns_fd, const char *const *paths,
                size_t n, int *fds, int *errs)
{
  return open_job (b, fd, userns_fd, true, 0, paths, n, fds, errs);
}

int
st_broker_open_in_root (struct st_broker *b, int root_fd, uint64_t root_id,
                        const char *const *paths, size_t n, int *fds, int *errs)
{
  /* Every job the resolver answered was in order on the one socket (a
     job that was not is the end of it: give_up), so it keeps the root of
     the last one that sent one.  */
  bool kept = root_id != 0 && root_id == b->root_id;
  int r = open_job (b, root_fd, -1, !kept, root_id, paths, n, fds, errs);
  /* EPROTO: it keeps another root (it cannot, but then the next job
     sends the root again).  */
  b->root_id = r == 0 && errs[0] != EPROTO ? root_id : 0;
  return r;
}

int
st_broker_spawn (struct st_broker *b, int mnt_fd, int userns_fd, int pidfd, int *sock)
{
  *sock = -1;
  struct job_header h = { JOB_MAGIC, 0, userns_fd >= 0, JOB_SPAWN, 0 };
  int send_fds[3] = { mnt_fd, pidfd, userns_fd };
  struct job_answer a;
  int r = job_round_trip (b, &h, NULL, send_fds, userns_fd >= 0 ? 3 : 2, &a);
  if (r < 0)
    return r;
  if ((a.reply.errs[0] == 0) != (a.n_got == 1) || a.n_got > 1)
    {
      close_got (&a);
      give_up (b);
      return -EPROTO;
    }
  if (a.reply.errs[0] != 0)
    return -a.reply.errs[0];
  /* Like the broker, a worker stuck on a hung file system is given up
     after ST_BROKER_JOB_TIMEOUT_S (st_broker_worker_open).  */
  *sock = a.got[0];
  return 0;
}

int
st_broker_worker_open (int sock, const char *const *paths, size_t n, int *fds, int *errs,
                       bool *gone)
{
  assert (n > 0 && n <= ST_BROKER_MAX_PATHS);
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = -1;
      errs[i] = EIO;
    }
  *gone = true;
  struct job_header h = { JOB_MAGIC, (uint32_t) n, 0, JOB_OPEN, 0 };
  struct job_answer a;
  /* The broker set the socket's SO_RCVTIMEO to ST_BROKER_JOB_TIMEOUT_S.  */
  int r = exchange (sock, &h, paths, NULL, 0, &a);
  if (r == 0 && (r = spread_reply (&a, n, fds, errs)) == 0)
    *gone = a.reply.gone != 0;
  return r;
}

#ifdef ST_NSH_TEST_HOOKS
int
st_broker_try (struct st_broker *b, const char *name, bool in_worker, int *result, char *why,
               size_t why_size)
{
  struct job_header h = { JOB_MAGIC, 1, 0, in_worker ? JOB_TRY_WORKER : JOB_TRY_HERE, 0 };
  const char *paths[] = { name };
  struct job_answer a;
  int r = job_round_trip (b, &h, paths, NULL, 0, &a);
  close_got (&a);
  if (r < 0)
    {
      int status = 0;
      /* Gone: see how.  */
      if (waitpid (b->pid, &status, 0) == b->pid && WIFSIGNALED (status))
        snprintf (why, why_size, "killed by signal %d (SIG%s)", WTERMSIG (status),
                  sigabbrev_np (WTERMSIG (status)));
      else
        snprintf (why, why_size, "gone: %s", strerror (-r));
      return r;
    }
  *result = a.reply.errs[0];
  return 0;
}
#endif

