/* The namespace helper's connection: a helper spawned over a socketpair,
 * or the system service's socket; started again when it dies (a few
 * times), and given up on when it cannot start.  See ns-client.h.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/array.h"
#include "basic/cleanup.h"
#include "basic/clock.h"
#include "basic/log.h"
#include "core/resolve/ns-client-private.h"

/* Waits up to MS milliseconds for PID to end, without reaping it: on a
   pidfd, which wakes the moment it exits.  Polling waitpid with a sleep
   in between cost most runs that used the helper a whole sleep at their
   end: the helper is still on its way out at the first look.  */
static void
wait_exit_within (pid_t pid, int ms)
{
  uint64_t deadline = st_now_ns () + (uint64_t) ms * 1000000;
#ifdef SYS_pidfd_open
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int r;
      /* A signal cuts a wait short: waited again for what is left.  */
      for (;;)
        {
          uint64_t now = st_now_ns ();
          int left = now < deadline ? (int) ((deadline - now + 999999) / 1000000) : 0;
          r = poll (&p, 1, left);
          if (r >= 0 || errno != EINTR || left == 0)
            break;
        }
      close (pidfd);
      if (r >= 0)
        return;
    }
#endif
  /* No pidfd (a kernel before 5.3): look every millisecond.  */
  while (st_now_ns () < deadline)
    {
      siginfo_t info = { 0 };
      if (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0
          || info.si_pid == pid)
        return;
      struct timespec ts = { 0, 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
}

static void
reap (pid_t pid)
{
  /* A helper told to go (its socket closed) goes at once; one that does
     not within a second is stuck, and killed.  */
  wait_exit_within (pid, 1000);
  pid_t r;
  while ((r = waitpid (pid, NULL, WNOHANG)) < 0 && errno == EINTR)
    ;
  if (r == pid || r < 0)
    return;
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

void
st_ns_disconnect (struct st_ns_client *c, bool kill_child)
{
  if (c->sock >= 0)
    close (c->sock);
  c->sock = -1;
  if (c->child > 0)
    {
      if (kill_child)
        kill (c->child, SIGKILL);
      reap (c->child);
    }
  c->child = -1;
}

static void
set_timeouts (int sock)
{
  struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };
  setsockopt (sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt (sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int
connect_socket (struct st_ns_client *c, const char *path, struct st_why *why)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    {
      return st_why_set (why, ENAMETOOLONG, "%s: socket path too long", path);
    }
  strcpy (addr.sun_path, path);
  _cleanup_close_ int sock = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect (sock, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      int e = errno;
      return st_why_set (why, e, "cannot connect to %s: %s", path, strerror (e));
    }
  set_timeouts (sock);
  c->sock = ST_TAKE_FD (sock);
  c->fresh = true;
  free (c->connected_to);
  c->connected_to = strdup (path);
  return 0;
}

/* The helper to spawn: $EU_STACKTRACE_NS_HELPER, the installed one, or
   the one beside this program (a build tree).  */
static char *
helper_path (void)
{
  const char *env = getenv ("EU_STACKTRACE_NS_HELPER");
  if (env != NULL && *env != '\0')
    return strdup (env);
  const char *installed = LIBEXECDIR "/" HELPER_NAME;
  if (access (installed, X_OK) == 0)
    return strdup (installed);
  char self[4096];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - sizeof HELPER_NAME - 1);
  if (n > 0)
    {
      self[n] = '\0';
      char *slash = strrchr (self, '/');
      if (slash != NULL)
        {
          strcpy (slash + 1, HELPER_NAME);
          if (access (self, X_OK) == 0)
            return strdup (self);
        }
    }
  return strdup (installed);
}

static int
spawn_helper (struct st_ns_client *c, struct st_why *why)
{
  _cleanup_free_ char *path = helper_path ();
  if (path == NULL)
    return -ENOMEM;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    {
      int e = errno;
      return st_why_set (why, e, "socketpair: %s", strerror (e));
    }
  /* The child's end goes to descriptor 3; keep it clear of 0 to 3.  */
  if (sv[1] <= 3)
    {
      int moved = fcntl (sv[1], F_DUPFD_CLOEXEC, 10);
      close (sv[1]);
      sv[1] = moved;
    }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init (&fa);
  posix_spawnattr_init (&attr);
  posix_spawn_file_actions_addopen (&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, sv[1], 3);
  /* Its own process group: a Ctrl-C meant for eu-stacktrace, which then
     still unwinds what it has read, must not kill the helper.  */
  sigset_t none, all;
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
                                   | POSIX_SPAWN_SETPGROUP);
  char *argv[] = { path, (char *) "--fd=3", NULL };
  char *envp[] = { NULL };
  pid_t pid;
  int r = sv[1] < 0 ? errno : posix_spawn (&pid, path, &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  if (sv[1] >= 0)
    close (sv[1]);
  if (r != 0)
    {
      st_why_set (why, r, "cannot start %s: %s", path, strerror (r));
      close (sv[0]);
      return -r;
    }
  set_timeouts (sv[0]);
  c->sock = sv[0];
  c->child = pid;
  c->fresh = true;
  st_debug ("namespace helper: started %s (pid %d)", path, pid);
  free (c->connected_to);
  c->connected_to = ST_TAKE_PTR (path);
  return 0;
}

int
st_ns_connect (struct st_ns_client *c, bool early, struct st_why *why)
{
  if (c->sock >= 0)
    return 0;
  if (c->disabled)
    {
      return st_why_set (why, ENOTCONN, "%s", c->disabled_why.text);
    }
  struct stat st;
  bool service = c->mode == MODE_SOCKET
                 || (c->mode == MODE_AUTO && stat (ST_NSH_SYSTEM_SOCKET, &st) == 0
                     && S_ISSOCK (st.st_mode));
  if (early && service)
    return st_why_set (why, EAGAIN, "a service is connected to at the first request");
  int r = -1;
  if (c->mode == MODE_SOCKET)
    r = connect_socket (c, c->socket_path, why);
  else
    {
      if (service)
        r = connect_socket (c, ST_NSH_SYSTEM_SOCKET, why);
      if (r < 0)
        r = spawn_helper (c, why);
    }
  if (r < 0 && !early)
    {
      /* What cannot start now will not start later in the run.  */
      c->disabled = true;
      c->disabled_why = *why;
      st_info ("namespace helper: %s", why->text);
    }
  return r;
}

/* The connection broke or desynchronized: drop it, and say what happened
   in WHY.  A spawned helper is started again at the next request, a few
   times.  */
static void
connection_lost (struct st_ns_client *c, const char *what, struct st_why *why)
{
  pid_t child = c->child;
  int status = 0;
  char how[128] = "";
  if (child > 0)
    {
      if (c->sock >= 0)
        close (c->sock);
      c->sock = -1;
      /* Gone already, or about to: kill it to be sure, then see how.  */
      if (waitpid (child, &status, WNOHANG) != child)
        {
          kill (child, SIGKILL);
          while (waitpid (child, &status, 0) < 0 && errno == EINTR)
            ;
        }
      c->child = -1;
      if (WIFSIGNALED (status))
        snprintf (how, sizeof how, " (killed by signal %d, %s)", WTERMSIG (status),
                  strsignal (WTERMSIG (status)));
      else if (WIFEXITED (status))
        snprintf (how, sizeof how, " (exit status %d)", WEXITSTATUS (status));
    }
  else
    st_ns_disconnect (c, false);
  c->restarts++;
  if (c->restarts > MAX_RESTARTS)
    {
      c->disabled = true;
      st_why_set (&c->disabled_why, EIO, "the helper failed %u times; not started again",
                  c->restarts);
    }
  st_warning ("namespace helper %s: %s%s; %s", c->connected_to ? c->connected_to : "", what, how,
              c->disabled ? "giving up on it" : "starting it again for the next file");
  st_why_set (why, EIO, "the helper failed: %s%s%s", what, how,
              c->disabled ? "; not started again" : "");
}

static void
record_rtt (struct st_ns_client *c, uint64_t ns)
{
  if (ST_GROW (c->rtt_ns, c->cap_rtt, c->n_rtt, 64) < 0)
    return;
  c->rtt_ns[c->n_rtt++] = ns;
}

/* The system service hangs up on a connection idle for a while (its
   --idle-timeout): that is no failure, and the next request simply
   connects again.  Drops such a connection; returns whether it did.  */
static bool
drop_if_hung_up (struct st_ns_client *c)
{
  if (c->sock < 0 || c->child > 0 || c->fresh || !st_nsh_peer_closed (c->sock))
    return false;
  st_debug ("namespace helper %s: the connection was closed while idle; connecting again",
            c->connected_to ? c->connected_to : "");
  st_ns_disconnect (c, false);
  c->reconnects++;
  return true;
}

/* Trust, but check: the descriptor FD a reply carried is a regular file
   opened read-only.  Returns FD, or -1 (FD closed) with REPLY turned into
   a refusal.  */
static int
checked_descriptor (int fd, struct st_nsh_reply *reply)
{
  struct stat st;
  int mode = fcntl (fd, F_GETFL);
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && mode >= 0
      && (mode & O_ACCMODE) == O_RDONLY)
    return fd;
  close (fd);
  reply->ok = false;
  reply->error = EINVAL;
  snprintf (reply->message, sizeof reply->message,
            "the helper sent something that is not a read-only regular file");
  return -1;
}

/* Waits for the helper's next message (polling a while first, as a
   reply is usually on its way) and reads it into BUF, with the descriptor
   it carried in FDS[0] (*N_FDS).  Returns its length, or -errno: -EPROTO
   for a message cut short (its descriptors are the caller's to close).  */
static ssize_t
receive_message (struct st_ns_client *c, char *buf, size_t size, int *fds, size_t *n_fds)
{
  unsigned flags = 0;
  st_nsh_spin_readable (c->sock, ST_NSH_SPIN_US);
  ssize_t got = st_nsh_recv (c->sock, buf, size, fds, 1, n_fds, &flags);
  return got < 0 ? got : got == 0 ? -ECONNRESET : flags != 0 ? -EPROTO : got;
}

/* Whether REPLY (which came with N_FDS descriptors) answers REQ: its id,
   and a descriptor exactly when it says ok.  */
static bool
reply_in_step (const struct st_nsh_request *req, const struct st_nsh_reply *reply, size_t n_fds)
{
  return reply->id == req->id && reply->ok == (n_fds == 1);
}

static int round_trip_once (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
                            struct st_nsh_reply *reply, int *fd, bool *retry,
                            struct st_why *why);

int
st_ns_round_trip (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
            struct st_nsh_reply *reply, int *fd, struct st_why *why)
{
  struct st_why local;
  if (why == NULL)
    why = &local;   /* kept as the reason the helper is off */
  drop_if_hung_up (c);
  bool retry = false;
  int r = round_trip_once (c, req, ns_fd, reply, fd, &retry, why);
  /* It hung up just as the request went: once more, on a new connection.  */
  if (retry)
    r = round_trip_once (c, req, ns_fd, reply, fd, &retry, why);
  return r;
}

static int
round_trip_once (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
                 struct st_nsh_reply *reply, int *fd, bool *retry, struct st_why *why)
{
  *fd = -1;
  *retry = false;
  int r = st_ns_connect (c, false, why);
  if (r < 0)
    return r;
  bool was_idle = !c->fresh && c->child <= 0;
  req->id = ++c->next_id;
  char buf[ST_NSH_MAX_MESSAGE + 1];
  int len = st_nsh_encode_request (req, buf, sizeof buf);
  if (len < 0)
    {
      st_why_set (why, -len, "the request does not fit in a message");
      return len;
    }
  uint64_t t0 = st_now_ns ();
  c->requests++;
  r = st_nsh_send (c->sock, buf, (size_t) len, &ns_fd, ns_fd >= 0 ? 1 : 0);
  ssize_t got = 0;
  int fds[1];
  size_t n_fds = 0;
  unsigned flags = 0;
  if ((r == -EPIPE || r == -ECONNRESET) && c->child <= 0)
    {
      /* The service may have refused the connection and hung up before
         the request went: its one reply is still to be read.  */
      got = st_nsh_recv (c->sock, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
      if (got > 0 && flags == 0)
        r = 0;
      else
        got = 0;
    }
  else if (r == 0)
    {
      got = receive_message (c, buf, sizeof buf - 1, fds, &n_fds);
      if (got < 0)
        r = (int) got;
    }
  if (r == 0)
    {
      r = st_nsh_decode_reply (buf, (size_t) got, reply, NULL);
      /* Id 0, not ok: the service refused the connection itself (too many
         of this user's), and hung up.  */
      if (r == 0 && reply->id == 0 && !reply->ok && n_fds == 0)
        {
          st_why_set (why, ECONNREFUSED, "the helper refused the connection: %s",
                      reply->message);
          st_warning ("namespace helper %s: %s", c->connected_to ? c->connected_to : "",
                      reply->message);
          st_ns_disconnect (c, false);
          c->failed++;
          if (++c->restarts > MAX_RESTARTS)
            {
              c->disabled = true;
              c->disabled_why = *why;
            }
          return -(reply->error ? reply->error : ECONNREFUSED);
        }
      if (r == 0 && !reply_in_step (req, reply, n_fds))
        r = -EPROTO;
    }
  if (r < 0 && was_idle && (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN))
    {
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      st_ns_disconnect (c, false);
      c->reconnects++;
      *retry = true;
      return r;
    }
  if (r < 0)
    {
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      c->failed++;
      connection_lost (c, r == -EAGAIN ? "no reply in time"
                          : r == -EPROTO ? "a reply out of protocol" : strerror (-r),
                       why);
      return r;
    }
  if (c->fresh)
    c->startup_ns += st_now_ns () - t0;
  else
    record_rtt (c, st_now_ns () - t0);
  c->fresh = false;
  if (n_fds == 1)
    *fd = checked_descriptor (fds[0], reply);
  return 0;
}

/* Reads the reply to REQ: 0 with REPLY and *FD (-1 for none), or -errno
   when the connection failed or went out of step.  */
static int
receive_reply (struct st_ns_client *c, const struct st_nsh_request *req,
               struct st_nsh_reply *reply, int *fd)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  int fds[1];
  size_t n_fds = 0;
  *fd = -1;
  ssize_t got = receive_message (c, buf, sizeof buf - 1, fds, &n_fds);
  int r = got < 0 ? (int) got : st_nsh_decode_reply (buf, (size_t) got, reply, NULL);
  if (r == 0 && !reply_in_step (req, reply, n_fds))
    r = -EPROTO;
  if (r < 0)
    {
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      return r;
    }
  if (n_fds == 1)
    *fd = checked_descriptor (fds[0], reply);
  return 0;
}

size_t
st_ns_round_trips (struct st_ns_client *c, struct st_nsh_request *reqs, size_t n,
                   struct st_nsh_reply *replies, int *fds, bool *lost, struct st_why *why)
{
  *lost = false;
  if (c->sock < 0 || c->child <= 0)
    return 0;
  char buf[ST_NSH_MAX_MESSAGE + 1];
  size_t sent = 0, answered = 0;
  bool sending = true;
  int r = 0;
  uint64_t last = st_now_ns ();
  while (r == 0 && answered < (sending ? n : sent))
    {
      /* Keep the window full, then read the oldest reply.  */
      while (sending && sent < n && sent - answered < ST_NS_PIPELINE_WINDOW && r == 0)
        {
          reqs[sent].id = ++c->next_id;
          int len = st_nsh_encode_request (&reqs[sent], buf, sizeof buf);
          /* One that does not fit (the caller leaves those out) is no
             failure of the connection: it and those after it are not
             sent, and are asked one at a time.  */
          if (len < 0)
            sending = false;
          else if ((r = st_nsh_send (c->sock, buf, (size_t) len, NULL, 0)) == 0)
            sent++;
        }
      if (r == 0 && answered < sent)
        {
          r = receive_reply (c, &reqs[answered], &replies[answered], &fds[answered]);
          if (r == 0)
            {
              /* Each reply counts what was waited for it after the one
                 before: the batch's round trips add up to its wall
                 time.  */
              uint64_t t = st_now_ns ();
              if (c->fresh)
                c->startup_ns += t - last;
              else
                record_rtt (c, t - last);
              last = t;
              c->fresh = false;
              answered++;
            }
        }
    }
  if (r < 0)
    {
      /* Replies still on their way would answer the next requests: the
         stream is out of step.  Dropped, as a failed round trip drops it
         (and counted as one); the requests not answered are asked again
         one at a time.  */
      c->requests++;
      c->failed++;
      /* The request it failed on: the oldest in flight, if any was.  */
      *lost = answered < sent;
      connection_lost (c, r == -EAGAIN ? "no reply in time"
                          : r == -EPROTO ? "a reply out of protocol" : strerror (-r),
                       why);
    }
  return answered;
}
