#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns-helper/broker.h"
#include "ns-helper/check.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"

#include "ns-helper/broker-job.h"

/* What the process knows from before it was forked.  */
static const struct st_sandbox_client *job_client;

/* The resolver's and the workers' side.  */

static int
openat2_in_root (int root, const char *path)
{
  struct open_how how = {
    .flags = O_PATH | O_CLOEXEC,
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  return (int) syscall (SYS_openat2, root, path, &how, sizeof how);
}

/* Each path under ROOT, reopened read-only through FD_DIR (our own
   /proc/self/fd): into REPLY->errs and FDS.  */
static size_t
open_paths (int root, int fd_dir, const char *const *paths, size_t n, struct job_reply *reply,
            int *fds)
{
  size_t n_fds = 0;
  for (size_t i = 0; i < n; i++)
    {
      char why[128];
      int fd = openat2_in_root (root, paths[i]);
      if (fd < 0)
        {
          reply->errs[i] = errno;
          continue;
        }
      fd = st_check_reopen (fd, fd_dir, why, sizeof why);
      reply->errs[i] = fd < 0 ? -fd : 0;
      if (fd >= 0)
        fds[n_fds++] = fd;
    }
  return n_fds;
}

/* A worker's job timer (broker.h): ON, the worker is killed by SIGALRM
   when the job has not ended by the time the opener gave it up; off,
   disarmed.  */
static void
job_timer (bool on)
{
  struct itimerval t = {
    .it_value = { .tv_sec = on ? ST_BROKER_JOB_TIMEOUT_S + ST_BROKER_JOB_GRACE_S : 0 },
  };
  setitimer (ITIMER_REAL, &t, NULL);
}

/* The worker's way into the namespace.  Returns 0 or -errno.  */
static int
enter_namespaces (int mnt_fd, int userns_fd)
{
  /* A thread sharing our fs_struct would keep setns from working; a
     forked worker shares none, and unsharing says so for sure.  */
  if (unshare (CLONE_FS) != 0)
    return -errno;
  int r;
  /* A user namespace the client owns is entered as the client, as the
     client could itself.  */
  if (job_client != NULL && userns_fd >= 0 && (r = st_sandbox_become_client (job_client)) < 0)
    return r;
  if (userns_fd >= 0 && setns (userns_fd, CLONE_NEWUSER) != 0)
    return -errno;
  if (setns (mnt_fd, CLONE_NEWNS) != 0)
    return -errno;
  /* Any other namespace is entered with the broker's privileges; then the
     worker becomes the client before it looks up anything.  */
  if (job_client != NULL && userns_fd < 0 && (r = st_sandbox_become_client (job_client)) < 0)
    return r;
  return 0;
}

static void __attribute__ ((noreturn))
worker (int reply_sock, int mnt_fd, int userns_fd, const char *const *paths, size_t n,
        uint32_t debug)
{
  struct job_reply reply = { .magic = JOB_MAGIC };
  int fds[ST_BROKER_MAX_PATHS];
  size_t n_fds = 0;
  int e = 0;
#ifdef ST_NSH_TEST_HOOKS
  if (debug == JOB_TRY_WORKER)
    {
      if (job_client != NULL)
        st_sandbox_become_client (job_client);
      int r = st_sandbox_try_forbidden (paths[0]);
      reply.errs[0] = r;
      _exit (st_nsh_send (reply_sock, &reply, sizeof reply, NULL, 0) == 0 ? 0 : 1);
    }
#else
  (void) debug;
#endif
  job_timer (true);
  /* Ours, before another mount namespace's /proc is the one in sight.  */
  int fd_dir = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  e = fd_dir < 0 ? errno : -enter_namespaces (mnt_fd, userns_fd);
  int root = -1;
  if (e == 0)
    {
      /* setns made the namespace's root our root and working directory.  */
      root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0)
        e = errno;
    }
  if (e == 0)
    n_fds = open_paths (root, fd_dir, paths, n, &reply, fds);
  else
    for (size_t i = 0; i < n; i++)
      reply.errs[i] = e;
  int r = st_nsh_send (reply_sock, &reply, sizeof reply, fds, n_fds);
  _exit (r == 0 ? 0 : 1);
}

static bool
is_namespace (int fd, int type)
{
  return ioctl (fd, NS_GET_NSTYPE) == type;
}

static void
reply_error (int sock, int e)
{
  struct job_reply reply = { .magic = JOB_MAGIC };
  for (size_t i = 0; i < ST_BROKER_MAX_PATHS; i++)
    reply.errs[i] = e;
  st_nsh_send (sock, &reply, sizeof reply, NULL, 0);
}

/* Forks a worker with a socket of its own: in the child (0) *END is the
   worker's end, and the broker's socket SOCK is closed; in the broker (the
   pid) *END is the broker's end.  When either fails SOCK gets the error
   reply and it returns -1.  */
static pid_t
fork_worker (int sock, int *end)
{
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      reply_error (sock, errno);
      return -1;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      reply_error (sock, errno);
      close (pair[0]);
      close (pair[1]);
      return -1;
    }
  if (pid == 0)
    {
      close (pair[0]);
      close (sock);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      *end = pair[1];
      return 0;
    }
  close (pair[1]);
  *end = pair[0];
  return pid;
}

/* A job in a worker of its own; its reply goes on as it is.  */
static void
run_in_worker (int sock, const struct job_header *h, const char *const *paths, size_t n,
               const int *fds)
{
  int end;
  pid_t pid = fork_worker (sock, &end);
  if (pid < 0)
    return;
  if (pid == 0)
    worker (end, h->debug == JOB_OPEN ? fds[0] : -1, h->with_userns ? fds[1] : -1, paths, n,
            h->debug);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  struct job_reply reply;
  int got[ST_BROKER_MAX_PATHS];
  size_t n_got = 0;
  unsigned flags;
  ssize_t m = -EIO;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    m = st_nsh_recv (end, &reply, sizeof reply, got, ST_BROKER_MAX_PATHS, &n_got, &flags);
  close (end);
  if (m == (ssize_t) sizeof reply)
    st_nsh_send (sock, &reply, sizeof reply, got, n_got);
  else if (h->debug == JOB_TRY_WORKER && WIFSIGNALED (status))
    reply_error (sock, -WTERMSIG (status));
  else
    reply_error (sock, EIO);
  for (size_t i = 0; i < n_got; i++)
    close (got[i]);
}

/* The header and the paths of the job in BUF.  Returns false when it is
   malformed.  */
static bool
parse_job (const char *buf, size_t len, struct job_header *h, const char **paths, size_t *n_out)
{
  if (len < sizeof *h)
    return false;
  memcpy (h, buf, sizeof *h);
  size_t n = 0, pos = sizeof *h;
  while (pos < len && n < ST_BROKER_MAX_PATHS)
    {
      const char *end = memchr (buf + pos, '\0', len - pos);
      if (end == NULL || (h->debug == JOB_OPEN && buf[pos] != '/'))
        break;
      paths[n++] = buf + pos;
      pos = (size_t) (end - buf) + 1;
    }
  *n_out = n;
  return h->magic == JOB_MAGIC && h->n_paths == n && pos == len
         && (h->n_paths > 0 || h->debug == JOB_SPAWN);
}

/* A pooled worker (pool.h): entered the namespaces once, as a worker of
   its own job would, then serves the opener's jobs on SOCK with the same
   credentials, capabilities, Landlock and seccomp, until the opener hangs
   up, the pinned process (PIDFD) exits or it stays idle.  */
static void __attribute__ ((noreturn))
pooled_worker (int sock, int mnt_fd, int userns_fd, int pidfd)
{
  int fd_dir = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  int e = fd_dir < 0 ? errno : -enter_namespaces (mnt_fd, userns_fd);
  close (mnt_fd);
  if (userns_fd >= 0)
    close (userns_fd);
  static char buf[MAX_JOB];
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = pidfd, .events = POLLIN },
                               { .fd = sock, .events = POLLIN } };
      int r = poll (pfd, 2, ST_BROKER_WORKER_IDLE_S * 1000);
      if (r < 0 && errno == EINTR)
        continue;
      /* Idle, or its process gone (the namespace may be going with it):
         never serve again; the opener starts another when it needs one.  */
      if (r <= 0 || pfd[0].revents != 0)
        _exit (0);
      int fds[2];
      size_t n_fds;
      unsigned flags;
      ssize_t len = st_nsh_recv (sock, buf, sizeof buf, fds, 2, &n_fds, &flags);
      if (len <= 0)
        _exit (0);   /* the opener is gone, or let us go */
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      struct job_header h;
      const char *paths[ST_BROKER_MAX_PATHS];
      size_t n;
      struct job_reply reply = { .magic = JOB_MAGIC };
      int out[ST_BROKER_MAX_PATHS];
      size_t n_out = 0;
      /* Only open jobs, and no descriptor: the namespace is the one it
         entered.  */
      if (flags != 0 || n_fds != 0 || !parse_job (buf, (size_t) len, &h, paths, &n)
          || h.debug != JOB_OPEN || h.with_userns)
        for (size_t i = 0; i < ST_BROKER_MAX_PATHS; i++)
          reply.errs[i] = EINVAL;
      else if (e != 0)
        {
          for (size_t i = 0; i < n; i++)
            reply.errs[i] = e;
          reply.gone = 1;
        }
      else
        {
          /* The namespace's root as it is now, for each job: a
             pivot_root in the namespace (a container starting) moves
             every root in it, and a root opened once would go on serving
             the old tree, which setns for one job would not.  */
          job_timer (true);
          int root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
          if (root < 0)
            for (size_t i = 0; i < n; i++)
              reply.errs[i] = errno;
          else
            {
              n_out = open_paths (root, fd_dir, paths, n, &reply, out);
              close (root);
            }
          job_timer (false);
        }
      r = st_nsh_send (sock, &reply, sizeof reply, out, n_out);
      for (size_t i = 0; i < n_out; i++)
        close (out[i]);
      if (r < 0 || reply.gone)
        _exit (r < 0);
    }
}

/* Forks a pooled worker and sends the opener its end of the worker's
   socket.  */
static void
spawn_pooled (int sock, int mnt_fd, int pidfd, int userns_fd)
{
  int end;
  pid_t pid = fork_worker (sock, &end);
  if (pid < 0)
    return;
  if (pid == 0)
    pooled_worker (end, mnt_fd, userns_fd, pidfd);
  /* The opener gives a job up after ST_BROKER_JOB_TIMEOUT_S (a hung file
     system) by this receive timeout, as with the broker's own socket: no
     poll before each reply (the opener may not set it: seccomp).  */
  struct timeval timeout = { .tv_sec = ST_BROKER_JOB_TIMEOUT_S };
  if (setsockopt (end, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0)
    {
      reply_error (sock, errno);
      close (end);   /* the worker sees the opener gone, and exits */
      return;
    }
  struct job_reply reply = { .magic = JOB_MAGIC };
  st_nsh_send (sock, &reply, sizeof reply, &end, 1);
  close (end);
}

static void
run_job (enum st_broker_kind kind, int fd_dir, int sock, const char *buf, size_t len,
         int *fds, size_t n_fds)
{
  struct job_header h;
  const char *paths[ST_BROKER_MAX_PATHS];
  size_t n;
  if (!parse_job (buf, len, &h, paths, &n))
    {
      reply_error (sock, EINVAL);
      return;
    }
  if (h.debug == JOB_SPAWN)
    {
      if (kind != ST_BROKER_SETNS || n_fds != 2u + (h.with_userns != 0)
          || !is_namespace (fds[0], CLONE_NEWNS)
          || (h.with_userns && !is_namespace (fds[2], CLONE_NEWUSER)))
        reply_error (sock, EINVAL);
      else
        spawn_pooled (sock, fds[0], fds[1], h.with_userns ? fds[2] : -1);
      return;
    }
#ifdef ST_NSH_TEST_HOOKS
  if (h.debug == JOB_TRY_HERE && n_fds == 0)
    {
      reply_error (sock, st_sandbox_try_forbidden (paths[0]));
      return;
    }
  if (h.debug == JOB_TRY_WORKER && n_fds == 0 && kind == ST_BROKER_SETNS)
    {
      run_in_worker (sock, &h, paths, n, fds);
      return;
    }
#endif
  if (h.debug != JOB_OPEN)
    {
      reply_error (sock, EINVAL);
      return;
    }
  if (kind == ST_BROKER_IN_ROOT)
    {
      /* The root the opener sent, kept for its next jobs in the same
         root (job_header): the descriptor goes once a pin, not once a
         job.  No fstat for a directory: openat2 fails with ENOTDIR under
         anything else.  */
      static int kept_root = -1;
      static uint64_t kept_id;
      if (n_fds == 1 && h.root_id != 0)
        {
          if (kept_root >= 0)
            close (kept_root);
          kept_root = fds[0];
          kept_id = h.root_id;
          fds[0] = -1;
        }
      if (n_fds > 1 || h.with_userns || (n_fds == 0 && (h.root_id == 0 || h.root_id != kept_id)))
        {
          reply_error (sock, n_fds == 0 ? EPROTO : EINVAL);
          return;
        }
      struct job_reply reply = { .magic = JOB_MAGIC };
      int out[ST_BROKER_MAX_PATHS];
      size_t n_out = open_paths (n_fds == 1 && fds[0] >= 0 ? fds[0] : kept_root, fd_dir, paths, n,
                                 &reply, out);
      st_nsh_send (sock, &reply, sizeof reply, out, n_out);
      for (size_t i = 0; i < n_out; i++)
        close (out[i]);
      return;
    }
  if (n_fds != 1u + (h.with_userns != 0) || !is_namespace (fds[0], CLONE_NEWNS)
      || (h.with_userns && !is_namespace (fds[1], CLONE_NEWUSER)))
    {
      reply_error (sock, EINVAL);
      return;
    }
  run_in_worker (sock, &h, paths, n, fds);
}

static void __attribute__ ((noreturn))
broker_main (enum st_broker_kind kind, int sock, int fd_dir)
{
  static char buf[MAX_JOB];
  for (;;)
    {
      int fds[3];
      size_t n_fds;
      unsigned flags;
      ssize_t len = st_nsh_recv (sock, buf, sizeof buf, fds, 3, &n_fds, &flags);
      if (len <= 0)
        _exit (len == 0 ? 0 : 1);   /* the opener is gone */
      /* The pooled workers that ended since the last job (the resolver
         has none, nor wait4 in its seccomp filter).  */
      if (kind == ST_BROKER_SETNS)
        while (waitpid (-1, NULL, WNOHANG) > 0)
          ;
      if (flags != 0)
        reply_error (sock, EINVAL);
      else
        run_job (kind, fd_dir, sock, buf, (size_t) len, fds, n_fds);
      for (size_t i = 0; i < n_fds; i++)
        if (fds[i] >= 0)
          close (fds[i]);   /* not the root the resolver keeps (-1) */
    }
}

#define CHILD_SOCK 3

int
st_broker_start (struct st_broker *b, enum st_broker_kind kind,
                 const struct st_sandbox_client *client)
{
  b->sock = -1;
  b->pid = -1;
  b->kind = kind;
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return -errno;
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (pair[0]);
      close (pair[1]);
      return -e;
    }
  if (pid == 0)
    {
      /* Its end of the socket, stderr, and nothing else of the opener's:
         not the client's socket, not the other processes'.  */
      if (dup3 (pair[1], CHILD_SOCK, O_CLOEXEC) < 0 || close_range (CHILD_SOCK + 1, ~0u, 0) != 0)
        _exit (1);
      /* It lives no longer than the opener.  */
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (1);
      prctl (PR_SET_NAME, kind == ST_BROKER_SETNS ? "nsh-broker" : "nsh-resolver");
      st_sandbox_short_slices ();
      job_client = client;
      int fd_dir = -1;
      if (kind == ST_BROKER_IN_ROOT)
        {
          /* Ours, for the read-only reopens (check.h).  */
          fd_dir = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
          if (fd_dir < 0)
            _exit (1);
        }
      int r = st_sandbox_enter (kind == ST_BROKER_SETNS ? ST_SANDBOX_BROKER
                                                         : ST_SANDBOX_RESOLVER, client);
      if (r < 0)
        {
          fprintf (stderr, "eu-stacktrace-ns-helper: %s: entering the sandbox: %s\n",
                   kind == ST_BROKER_SETNS ? "broker" : "resolver", strerror (-r));
          _exit (1);
        }
      broker_main (kind, CHILD_SOCK, fd_dir);
    }
  close (pair[1]);
  /* A job stuck on a hung file system must not hang the opener for good:
     it gives up the way instead.  */
  struct timeval timeout = { .tv_sec = ST_BROKER_JOB_TIMEOUT_S };
  setsockopt (pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  b->sock = pair[0];
  b->pid = pid;
  return 0;
}
