#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "basic/why.h"
#include "ns-helper/die.h"
#include "ns-helper/opener.h"
#include "ns-helper/parser.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"

struct parser {
  int client;
  int opener;
};

#define die(...) st_nsh_die ("parser", __VA_ARGS__)

static void
reply_send (struct parser *p, const struct st_nsh_reply *reply, int fd)
{
  /* As the opener's replies (opener.c): a client that sends requests and
     never reads must not stop the parser in a send (where its idle
     timeout does not run): a reply that does not fit is dropped.  */
  int r = st_nsh_send_reply (p->client, reply, fd, MSG_DONTWAIT);
  if (r == -EAGAIN)
    return;
  if (r == -EPIPE || r == -ECONNRESET)
    exit (EXIT_SUCCESS);   /* the client went away mid-request */
  if (r < 0)
    die ("sending a reply: %s", strerror (-r));
}

#ifdef ST_NSH_TEST_HOOKS
/* Test builds: the parser taken over by its client.  "raw-op:N" sends the
   opener the well-formed op "open the opener's /usr/bin/sleep" (N = 0) or one malformed the
   N-th way, as code running here could, and says what came back:
   tests/ns-helper/review.py holds that the opener refuses each and lives
   on.  */
static void
raw_op (struct parser *p, int n, char *why, size_t why_size)
{
  static struct st_op op;
  static struct st_op_result res;
  memset (&op, 0, sizeof op);
  op.magic = ST_OP_MAGIC;
  op.op = ST_OP_OPEN;
  op.pid = getppid ();      /* the opener: no client may read it */
  op.ways = ST_NSH_WAYS_ALL;
  strcpy (op.path, "/usr/bin/sleep");
  size_t len = sizeof op;
  /* The client's own socket: a descriptor of the parser's to slip in.  */
  int fds[2] = { p->client, p->client };
  size_t n_fds = 0;
  switch (n)
    {
    case 0: break;
    case 1: op.magic ^= 1; break;
    case 2: len--; break;
    case 3: len = 16; break;
    case 4: op.op = ST_OP_N; break;
    case 5: op.op = 0xffffffffu; break;
    case 6: memset (op.path, 'a', sizeof op.path); op.path[0] = '/'; break;
    case 7: memset (op.debuglink, 'a', sizeof op.debuglink); break;
    case 8: memset (op.syscall, 'a', sizeof op.syscall); break;
    case 9: memset (op.in, 'a', sizeof op.in); break;
    case 10: op.ways = 0xffffffffu; break;
    case 11: op.build_id_size = 255; break;
    case 12: op.ns_fd = 1; break;                      /* no descriptor */
    case 13: n_fds = 1; break;                         /* ns_fd 0, one sent */
    case 14: op.ns_fd = 2; n_fds = 1; break;
    case 15: op.ns_fd = 1; n_fds = 2; break;
    case 16: op.pid = 0; break;
    case 17: op.pid = -1; break;
    case 18: strcpy (op.path, "usr/bin/sleep"); break;
    case 19: strcpy (op.debuglink, "../../etc/shadow"); op.op = ST_OP_DEBUGINFO;
             op.build_id_size = 20; break;
    case 20: op.op = ST_OP_DEBUGINFO; break;           /* no build-id */
    case 21: op.has_range = 1; op.start = 0x2000; op.end = 0x1000; break;
    case 22: op.ns_fd = 1; n_fds = 1; break;            /* a socket as the proof */
    default: snprintf (why, why_size, "raw-op:%d: no such case", n); return;
    }
  int r = st_nsh_send (p->opener, &op, len, fds, n_fds);
  int got[1];
  size_t n_got = 0;
  unsigned flags = 0;
  ssize_t m = r < 0 ? r : st_nsh_recv (p->opener, &res, sizeof res, got, 1, &n_got, &flags);
  for (size_t i = 0; i < n_got; i++)
    close (got[i]);
  if (m != (ssize_t) sizeof res || res.magic != ST_OP_MAGIC)
    snprintf (why, why_size, "raw-op:%d: the opener is gone (%zd)", n, m);
  else
    snprintf (why, why_size, "raw-op:%d: errno %d, %zu fds: %.400s", n, res.error, n_got,
              memchr (res.message, '\0', sizeof res.message) ? res.message : "(unterminated)");
}
#endif

/* One message in, one reply out.  */
static void
handle (struct parser *p, const char *buf, size_t len, unsigned flags, const int *fds,
        size_t n_fds)
{
  static struct st_nsh_request req;
  static struct st_nsh_reply reply;
  static struct st_op op;
  memset (&reply, 0, sizeof reply);
  int r;
  if (flags & ST_NSH_RECV_TRUNCATED)
    {
      r = -EMSGSIZE;
      snprintf (reply.message, sizeof reply.message, "message longer than %d bytes",
                ST_NSH_MAX_MESSAGE);
    }
  else if (flags & ST_NSH_RECV_FDS_DROPPED)
    {
      r = -EINVAL;
      snprintf (reply.message, sizeof reply.message,
                "more than one descriptor came with the request");
    }
  else
    {
      struct st_why why;
      r = st_nsh_decode_request (buf, len, &req, &why);
      if (r < 0)
        snprintf (reply.message, sizeof reply.message, "%s", why.text);
      reply.id = req.id;
      if (r == 0 && req.ns_fd != (n_fds == 1))
        {
          r = -EINVAL;
          snprintf (reply.message, sizeof reply.message,
                    "\"ns_fd\" is %s, but %zu descriptors came with the request",
                    req.ns_fd ? "true" : "false", n_fds);
        }
    }
#ifdef ST_NSH_TEST_HOOKS
  if (r == 0 && req.op == ST_NSH_OP_DEBUG_SYSCALL && strncmp (req.syscall, "raw-op:", 7) == 0)
    {
      raw_op (p, atoi (req.syscall + 7), reply.message, sizeof reply.message);
      r = -EINVAL;
    }
  else if (r == 0 && req.op == ST_NSH_OP_DEBUG_SYSCALL
      && (req.in[0] == '\0' || strcmp (req.in, "parser") == 0))
    {
      int e = st_sandbox_try_forbidden (req.syscall);
      snprintf (reply.message, sizeof reply.message,
                e < 0 ? "parser: %s: no such test"
                : e == 0 ? "parser: %s: the sandbox let it through"
                : "parser: %s: failed with errno %d (%s)",
                req.syscall, e, e > 0 ? strerrorname_np (e) : "");
      r = -EINVAL;
    }
#endif
  if (r == 0)
    {
      /* The opener replies to the client itself (opener.h).  */
      st_op_from_request (&req, &op);
      r = st_op_send (p->opener, &op, n_fds == 1 ? fds[0] : -1);
      if (r < 0)
        die ("the opener is gone: %s", strerror (-r));
      return;
    }
  reply.error = -r;
  reply_send (p, &reply, -1);
}

int
st_parser_set_idle_timeout (int client_sock, unsigned idle_timeout)
{
  /* One receive a request rather than a poll and a receive.  */
  struct timeval tv = { .tv_sec = idle_timeout };
  return setsockopt (client_sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 ? 0 : -errno;
}

void
st_parser_run (int client_sock, int opener_sock)
{
  struct parser p = { client_sock, opener_sock };
  static char buf[ST_NSH_MAX_MESSAGE + 1];
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      /* The client's socket has SO_RCVTIMEO of the idle timeout
         (st_parser_set_idle_timeout): EAGAIN, the client was idle and
         reconnects when it needs us.  */
      ssize_t len = st_nsh_recv (p.client, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
      if (len < 0 && (len == -ECONNRESET || len == -ENOTCONN || len == -EAGAIN))
        exit (EXIT_SUCCESS);
      if (len < 0)
        die ("receiving a request: %s", strerror ((int) -len));
      if (len == 0 && n_fds == 0 && flags == 0 && st_nsh_peer_closed (p.client))
        exit (EXIT_SUCCESS);
      handle (&p, buf, (size_t) len, flags, fds, n_fds);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
    }
}
