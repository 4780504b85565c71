#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns-helper/open-ways.h"
#include "ns-helper/opener.h"
#include "ns-helper/sandbox.h"

/* The answer a client that is not root gets, of a privileged helper, for
   any file it does not get: "missing", "not allowed", "not a regular
   file", "not ELF" and "another build-id" all look alike, so that nobody
   learns what exists where they may not look.  */
#define NO_FILE_MESSAGE "no readable ELF file at that path"

/* The fields an op carries as the request has them, both ways.  */
#define OP_FIELDS(X) \
  X (pid) X (ways) X (has_start_time) X (start_time) X (has_range) X (start) X (end) X (ns_fd)

/* The parser's side.  */

void
st_op_from_request (const struct st_nsh_request *req, struct st_op *op)
{
  memset (op, 0, sizeof *op);
  op->magic = ST_OP_MAGIC;
  op->op = req->op == ST_NSH_OP_OPEN ? ST_OP_OPEN
           : req->op == ST_NSH_OP_DEBUGINFO ? ST_OP_DEBUGINFO : ST_OP_TRY;
#define COPY(field) op->field = req->field;
  OP_FIELDS (COPY)
#undef COPY
  op->build_id_size = (uint8_t) req->build_id_size;
  memcpy (op->build_id, req->build_id, req->build_id_size);
  snprintf (op->path, sizeof op->path, "%s", req->path);
  snprintf (op->debuglink, sizeof op->debuglink, "%s", req->debuglink);
  snprintf (op->syscall, sizeof op->syscall, "%s", req->syscall);
  snprintf (op->in, sizeof op->in, "%s", req->in);
  op->id = req->id;
  op->direct = 1;
}

int
st_op_send (int sock, const struct st_op *op, int ns_fd)
{
  return st_nsh_send (sock, op, sizeof *op, &ns_fd, ns_fd >= 0 ? 1 : 0);
}

/* The opener's side.  */

static bool
terminated (const char *s, size_t size)
{
  return memchr (s, '\0', size) != NULL;
}

/* The op as the client might have written it: every field checked.  */
static int
check_op (const struct st_op *op, size_t n_fds, char *why, size_t why_size)
{
  if (op->op >= ST_OP_N || !terminated (op->path, sizeof op->path)
      || !terminated (op->debuglink, sizeof op->debuglink)
      || !terminated (op->syscall, sizeof op->syscall) || !terminated (op->in, sizeof op->in)
      || op->build_id_size > ST_NSH_BUILD_ID_MAX || (op->ways & ~ST_NSH_WAYS_ALL) != 0
      || op->ns_fd > 1 || (op->ns_fd != 0) != (n_fds == 1) || op->direct > 1)
    {
      snprintf (why, why_size, "a malformed operation");
      return -EINVAL;
    }
  if (op->op == ST_OP_TRY)
    return 0;
  if (op->pid <= 0 || op->path[0] != '/' || strchr (op->debuglink, '/') != NULL
      || (op->has_range && op->start >= op->end)
      || (op->op == ST_OP_DEBUGINFO && op->build_id_size == 0))
    {
      snprintf (why, why_size, "a malformed operation");
      return -EINVAL;
    }
  return 0;
}

/* The request as open-ways.h takes it.  */
static void
request_of (const struct st_op *op, struct st_nsh_request *req)
{
  memset (req, 0, sizeof *req);
  req->version = ST_NSH_VERSION;
  req->op = op->op == ST_OP_OPEN ? ST_NSH_OP_OPEN : ST_NSH_OP_DEBUGINFO;
#define COPY(field) req->field = op->field;
  OP_FIELDS (COPY)
#undef COPY
  req->build_id_size = op->build_id_size;
  memcpy (req->build_id, op->build_id, op->build_id_size);
  memcpy (req->path, op->path, sizeof req->path);
  memcpy (req->debuglink, op->debuglink, sizeof req->debuglink);
}

static bool
client_is_limited (const struct st_opener *o)
{
  return o->privileged && o->peer.uid != 0;
}

static int
serve_file (struct st_opener *o, const struct st_op *op, int ns_fd, struct st_found *found,
            char *why, size_t why_size)
{
  static struct st_nsh_request req;
  request_of (op, &req);
  struct st_pin *pin;
  int r = st_pins_get (&o->pins, req.pid, req.has_start_time ? &req.start_time : NULL, &pin,
                       why, why_size);
  if (r < 0)
    {
      /* The pinning was done with the opener's privileges: what it met
         (the real start time, a descriptor it could not open) is not for
         a client who may not read /proc/PID itself (hidepid=).  The errno
         stays: ESRCH, the process is gone or not the one named.  */
      if (client_is_limited (o))
        snprintf (why, why_size, "no process %d (started at the time named)", req.pid);
      return r;
    }
  int level = st_auth_check (&o->peer, o->privileged, pin, ns_fd, why, why_size);
  if (level < 0)
    {
      st_pins_drop (&o->pins, pin);
      return level;
    }
  if (level > pin->auth)
    pin->auth = level;
#ifdef ST_NSH_TEST_HOOKS
  /* Test builds: a pause between the judgement and the opens, so that a
     test can change the process in between (tests/ns-helper/review.py).  */
  const char *delay = getenv ("ST_NSH_TEST_AUTH_DELAY_MS");
  if (delay != NULL)
    poll (NULL, 0, atoi (delay));
#endif
  struct st_ways ways = {
    .resolver = &o->resolver,
    .broker = &o->broker,
    .pool = &o->pool,
    .privileged = o->privileged,
    .client_uid = client_is_limited (o) ? (long) o->peer.uid : -1,
    .limited_peer = client_is_limited (o) ? &o->peer : NULL,
    .fd_dir = o->fd_dir,
  };
  if (req.op == ST_NSH_OP_OPEN)
    r = st_open_mapping (&ways, pin, level, &req, found, why, why_size);
  else
    r = st_open_debuginfo (&ways, pin, &req, found, why, why_size);
  if (r < 0 && client_is_limited (o))
    {
      snprintf (why, why_size, NO_FILE_MESSAGE);
      r = -ENOENT;
    }
  return r;
}

#ifdef ST_NSH_TEST_HOOKS
/* A forbidden call in the process OP->in names: its errno, or how the
   process died.  */
static int
try_in (struct st_opener *o, const struct st_op *op, char *why, size_t why_size)
{
  int result = 0, r = 0;
  if (strcmp (op->in, "opener") == 0)
    result = st_sandbox_try_forbidden (op->syscall);
  else if (strcmp (op->in, "resolver") == 0)
    r = st_broker_try (&o->resolver, op->syscall, false, &result, why, why_size);
  else if (strcmp (op->in, "broker") == 0 || strcmp (op->in, "worker") == 0)
    r = st_broker_try (&o->broker, op->syscall, strcmp (op->in, "worker") == 0, &result, why,
                       why_size);
  else
    {
      snprintf (why, why_size, "no process \"%s\"", op->in);
      return -EINVAL;
    }
  if (r < 0)
    {
      char gone[512];
      snprintf (gone, sizeof gone, "%s", why);
      snprintf (why, why_size, "%s: %s: %.400s", op->in, op->syscall, gone);
      return -ECHILD;
    }
  if (result == -1)
    snprintf (why, why_size, "%s: %s: no such test", op->in, op->syscall);
  else if (result < 0)
    snprintf (why, why_size, "%s: %s: killed by signal %d (SIG%s)", op->in, op->syscall, -result,
              sigabbrev_np (-result));
  else if (result > 0)
    snprintf (why, why_size, "%s: %s: failed with errno %d (%s)", op->in, op->syscall, result,
              strerrorname_np (result));
  else
    snprintf (why, why_size, "%s: %s: the sandbox let it through", op->in, op->syscall);
  return -EINVAL;
}
#endif

/* RES as the client's reply to request ID.  */
static void
reply_of (const struct st_op_result *res, uint64_t id, struct st_nsh_reply *reply)
{
  memset (reply, 0, sizeof *reply);
  reply->id = id;
  reply->ok = res->error == 0;
  if (reply->ok)
    {
      reply->way = (enum st_nsh_way) res->way;
      snprintf (reply->path, sizeof reply->path, "%s", res->path);
      memcpy (reply->build_id, res->build_id, res->build_id_size);
      reply->build_id_size = res->build_id_size;
    }
  else
    reply->error = res->error;
  snprintf (reply->message, sizeof reply->message, "%s", res->message);
}

/* The replies a client may leave unread before it gets no descriptor: a
   small reply takes 768 bytes of the queue, one with a long path a few
   KiB.  eu-stacktrace reads each reply before it asks again.  */
#define ST_OPENER_MAX_UNREAD 4096

static void
handle (struct st_opener *o, const struct st_op *op, size_t len, unsigned flags,
        const int *fds, size_t n_fds)
{
  static struct st_op_result res;
  static struct st_nsh_reply reply;
  memset (&res, 0, sizeof res);
  res.magic = ST_OP_MAGIC;
  struct st_found found = { .file.fd = -1 };
  int r;
  /* Where the answer goes: an op that is not even whole is answered to
     the parser that sent it.  */
  bool direct = len == sizeof *op && flags == 0 && op->magic == ST_OP_MAGIC && op->direct == 1
                && o->client >= 0;
  if (len != sizeof *op || flags != 0 || op->magic != ST_OP_MAGIC)
    {
      snprintf (res.message, sizeof res.message, "a malformed operation");
      r = -EINVAL;
    }
  else
    r = check_op (op, n_fds, res.message, sizeof res.message);
  if (r == 0)
    {
      if (op->op == ST_OP_TRY)
        {
#ifdef ST_NSH_TEST_HOOKS
          r = try_in (o, op, res.message, sizeof res.message);
#else
          r = -EOPNOTSUPP;
          snprintf (res.message, sizeof res.message,
                    "debug-syscall exists only in the test build");
#endif
        }
      else
        r = serve_file (o, op, n_fds == 1 ? fds[0] : -1, &found, res.message,
                        sizeof res.message);
    }
  if (r == 0)
    {
      res.way = found.way;
      snprintf (res.path, sizeof res.path, "%s", found.path);
      memcpy (res.build_id, found.file.build_id, found.file.build_id_size);
      res.build_id_size = (uint32_t) found.file.build_id_size;
    }
  else
    res.error = -r;
  if (direct)
    {
      /* A descriptor waiting in a client's queue counts, for the kernel,
         against the user who sent it: every connection's helper runs as
         nobody, and at RLIMIT_NOFILE of them in flight every sendmsg with
         a descriptor fails (ETOOMANYREFS), root's too.  So a client that
         leaves replies unread gets no more descriptors until it reads.  */
      int unread = 0;
      if (found.file.fd >= 0 && ioctl (o->client, SIOCOUTQ, &unread) == 0
          && unread > ST_OPENER_MAX_UNREAD)
        {
          close (found.file.fd);
          found.file.fd = -1;
          res.error = EBUSY;
          snprintf (res.message, sizeof res.message,
                    "%d bytes of earlier replies are unread: read them first", unread);
        }
      /* Never blocks on a client that does not read: its reply is
         dropped (EAGAIN), and the opener serves on.  */
      reply_of (&res, op->id, &reply);
      r = st_nsh_send_reply (o->client, &reply, found.file.fd, MSG_DONTWAIT);
      if (r == -ETOOMANYREFS)
        {
          /* Too many descriptors in flight from other connections: the
             answer without one, rather than ending this connection.  */
          res.error = ETOOMANYREFS;
          snprintf (res.message, sizeof res.message,
                    "too many descriptors in flight to unread replies; try again");
          reply_of (&res, op->id, &reply);
          r = st_nsh_send_reply (o->client, &reply, -1, MSG_DONTWAIT);
        }
      if (r == -EAGAIN)
        r = 0;
    }
  else
    r = st_nsh_send (o->sock, &res, sizeof res, &found.file.fd, found.file.fd >= 0 ? 1 : 0);
  if (found.file.fd >= 0)
    close (found.file.fd);
  if (r < 0 && r != -EPIPE && r != -ECONNRESET)
    {
      fprintf (stderr, "eu-stacktrace-ns-helper: opener: sending a result: %s\n", strerror (-r));
      exit (EXIT_FAILURE);
    }
}

/* The parser hung up: exit as it did.  */
static void __attribute__ ((noreturn))
parser_gone (struct st_opener *o)
{
  int status = 0;
  if (o->parser > 0 && waitpid (o->parser, &status, 0) == o->parser && WIFSIGNALED (status))
    {
      fprintf (stderr, "eu-stacktrace-ns-helper: parser (pid %d) killed by signal %d (SIG%s)\n",
               (int) o->parser, WTERMSIG (status), sigabbrev_np (WTERMSIG (status)));
      exit (128 + WTERMSIG (status));
    }
  exit (WIFEXITED (status) ? WEXITSTATUS (status) : EXIT_FAILURE);
}

void
st_opener_serve (struct st_opener *o)
{
  static struct st_op op;
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      ssize_t len = st_nsh_recv (o->sock, &op, sizeof op, fds, 1, &n_fds, &flags);
      if (len < 0 && len != -ECONNRESET && len != -ENOTCONN)
        {
          fprintf (stderr, "eu-stacktrace-ns-helper: opener: receiving: %s\n",
                   strerror ((int) -len));
          exit (EXIT_FAILURE);
        }
      if (len <= 0 && n_fds == 0 && (len < 0 || st_nsh_peer_closed (o->sock)))
        parser_gone (o);
      handle (o, &op, len > 0 ? (size_t) len : 0, flags, fds, n_fds);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
    }
}
