#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns-helper/broker.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"

#define JOB_MAGIC 0x4e534231u     /* "NSB1" */
#define MAX_JOB (sizeof (struct job_header) + ST_BROKER_MAX_PATHS * ST_NSH_PATH_MAX)

struct job_header {
  uint32_t magic;
  uint32_t n_paths;
  uint32_t with_userns;
};

struct job_reply {
  uint32_t magic;
  int32_t errs[ST_BROKER_MAX_PATHS];
};

/* The main process's side.  */

int
st_broker_open (struct st_broker *b, int mnt_fd, int userns_fd, const char *const *paths,
                size_t n, int *fds, int *errs)
{
  assert (n > 0 && n <= ST_BROKER_MAX_PATHS);
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = -1;
      errs[i] = EIO;
    }
  if (b->sock < 0)
    return -ENOTCONN;
  static char buf[MAX_JOB];
  struct job_header h = { JOB_MAGIC, (uint32_t) n, userns_fd >= 0 };
  size_t len = sizeof h;
  memcpy (buf, &h, sizeof h);
  for (size_t i = 0; i < n; i++)
    {
      size_t l = strlen (paths[i]) + 1;
      if (l > ST_NSH_PATH_MAX)
        return -ENAMETOOLONG;
      memcpy (buf + len, paths[i], l);
      len += l;
    }
  int send_fds[2] = { mnt_fd, userns_fd };
  int r = st_nsh_send (b->sock, buf, len, send_fds, userns_fd >= 0 ? 2 : 1);
  if (r < 0)
    return r;
  struct job_reply reply;
  int got[ST_BROKER_MAX_PATHS];
  size_t n_got;
  unsigned flags;
  ssize_t m = st_nsh_recv (b->sock, &reply, sizeof reply, got, ST_BROKER_MAX_PATHS, &n_got,
                           &flags);
  size_t want = 0;
  bool ok = m == (ssize_t) sizeof reply && reply.magic == JOB_MAGIC && flags == 0;
  for (size_t i = 0; ok && i < n; i++)
    if (reply.errs[i] == 0)
      want++;
  if (!ok || want != n_got)
    {
      for (size_t i = 0; i < n_got; i++)
        close (got[i]);
      /* A broker that timed out or talks nonsense may answer late: its
         answers could then be taken for the next job's.  No more jobs.  */
      close (b->sock);
      b->sock = -1;
      return m < 0 ? (m == -EAGAIN ? -ETIMEDOUT : (int) m) : m == 0 ? -ECONNRESET : -EPROTO;
    }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      errs[i] = reply.errs[i];
      if (reply.errs[i] == 0)
        fds[i] = got[k++];
    }
  return 0;
}

/* The worker: one job, in the target's namespaces, then exit.  */

static int
openat2_in_root (int root, const char *path)
{
  struct open_how how = {
    .flags = O_PATH | O_CLOEXEC,
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  return (int) syscall (SYS_openat2, root, path, &how, sizeof how);
}

static void __attribute__ ((noreturn))
worker (int reply_sock, int mnt_fd, int userns_fd, const char *const *paths, size_t n)
{
  struct job_reply reply = { .magic = JOB_MAGIC };
  int fds[ST_BROKER_MAX_PATHS];
  size_t n_fds = 0;
  int e = 0;
  /* A thread sharing our fs_struct would keep setns from working; a
     forked worker shares none, and unsharing says so for sure.  */
  if (unshare (CLONE_FS) != 0)
    e = errno;
  else if (userns_fd >= 0 && setns (userns_fd, CLONE_NEWUSER) != 0)
    e = errno;
  else if (setns (mnt_fd, CLONE_NEWNS) != 0)
    e = errno;
  int root = -1;
  if (e == 0)
    {
      /* setns made the namespace's root our root and working directory.  */
      root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (root < 0)
        e = errno;
    }
  for (size_t i = 0; i < n; i++)
    {
      int fd = e == 0 ? openat2_in_root (root, paths[i]) : -1;
      reply.errs[i] = e != 0 ? e : fd < 0 ? errno : 0;
      if (fd >= 0)
        fds[n_fds++] = fd;
    }
  int r = st_nsh_send (reply_sock, &reply, sizeof reply, fds, n_fds);
  _exit (r == 0 ? 0 : 1);
}

/* The broker: one job at a time, each in a fresh worker.  */

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

static void
run_job (int sock, const char *buf, size_t len, const int *fds, size_t n_fds)
{
  struct job_header h;
  if (len < sizeof h)
    {
      reply_error (sock, EINVAL);
      return;
    }
  memcpy (&h, buf, sizeof h);
  const char *paths[ST_BROKER_MAX_PATHS];
  size_t n = 0, pos = sizeof h;
  while (pos < len && n < ST_BROKER_MAX_PATHS)
    {
      const char *end = memchr (buf + pos, '\0', len - pos);
      if (end == NULL || buf[pos] != '/')
        break;
      paths[n++] = buf + pos;
      pos = (size_t) (end - buf) + 1;
    }
  if (h.magic != JOB_MAGIC || h.n_paths == 0 || h.n_paths != n || pos != len
      || n_fds != 1u + (h.with_userns != 0) || !is_namespace (fds[0], CLONE_NEWNS)
      || (h.with_userns && !is_namespace (fds[1], CLONE_NEWUSER)))
    {
      reply_error (sock, EINVAL);
      return;
    }
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      reply_error (sock, errno);
      return;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      reply_error (sock, errno);
      close (pair[0]);
      close (pair[1]);
      return;
    }
  if (pid == 0)
    {
      close (pair[0]);
      close (sock);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      worker (pair[1], fds[0], h.with_userns ? fds[1] : -1, paths, n);
    }
  close (pair[1]);
  int status;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  /* What the worker sent, if it lived to send it, goes on as it is.  */
  struct job_reply reply;
  int got[ST_BROKER_MAX_PATHS];
  size_t n_got = 0;
  unsigned flags;
  ssize_t m = -EIO;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    m = st_nsh_recv (pair[0], &reply, sizeof reply, got, ST_BROKER_MAX_PATHS, &n_got, &flags);
  close (pair[0]);
  if (m == (ssize_t) sizeof reply)
    st_nsh_send (sock, &reply, sizeof reply, got, n_got);
  else
    reply_error (sock, EIO);
  for (size_t i = 0; i < n_got; i++)
    close (got[i]);
}

static void __attribute__ ((noreturn))
broker_main (int sock)
{
  static char buf[MAX_JOB];
  for (;;)
    {
      int fds[2];
      size_t n_fds;
      unsigned flags;
      ssize_t len = st_nsh_recv (sock, buf, sizeof buf, fds, 2, &n_fds, &flags);
      if (len <= 0)
        _exit (len == 0 ? 0 : 1);   /* the main process is gone */
      if (flags != 0)
        reply_error (sock, EINVAL);
      else
        run_job (sock, buf, (size_t) len, fds, n_fds);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
    }
}

int
st_broker_start (struct st_broker *b, int close_fd)
{
  b->sock = -1;
  b->pid = -1;
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
      close (pair[0]);
      if (close_fd >= 0)
        close (close_fd);
      /* It lives no longer than the main process.  */
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (1);
      if (st_sandbox_enter (ST_SANDBOX_BROKER) < 0)
        _exit (1);
      broker_main (pair[1]);
    }
  close (pair[1]);
  /* A worker stuck on a hung file system must not hang the main process
     for good: it gives up the setns way instead.  */
  struct timeval timeout = { .tv_sec = 10 };
  setsockopt (pair[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  b->sock = pair[0];
  b->pid = pid;
  return 0;
}
