#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns-helper/opener.h"
#include "ns-helper/parser.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"

struct parser {
  int client;
  int opener;
};

static void __attribute__ ((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("eu-stacktrace-ns-helper: parser: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (EXIT_FAILURE);
}

static void
reply_send (struct parser *p, const struct st_nsh_reply *reply, int fd)
{
  static char buf[ST_NSH_MAX_MESSAGE];
  int len = st_nsh_encode_reply (reply, buf, sizeof buf);
  if (len < 0)
    {
      /* Only an overlong message can fail: say so in a short one.  */
      struct st_nsh_reply e = { .id = reply->id, .error = EMSGSIZE };
      snprintf (e.message, sizeof e.message, "the reply did not fit in a message");
      len = st_nsh_encode_reply (&e, buf, sizeof buf);
      fd = -1;
      if (len < 0)
        die ("cannot encode a reply: %s", strerror (-len));
    }
  int r = st_nsh_send (p->client, buf, (size_t) len, &fd, fd >= 0 ? 1 : 0);
  if (r == -EPIPE || r == -ECONNRESET)
    exit (EXIT_SUCCESS);   /* the client went away mid-request */
  if (r < 0)
    die ("sending a reply: %s", strerror (-r));
}

/* One message in, one reply out.  */
static void
handle (struct parser *p, const char *buf, size_t len, unsigned flags, const int *fds,
        size_t n_fds)
{
  static struct st_nsh_request req;
  static struct st_nsh_reply reply;
  static struct st_op op;
  static struct st_op_result res;
  memset (&reply, 0, sizeof reply);
  int fd = -1;
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
      r = st_nsh_decode_request (buf, len, &req, reply.message, sizeof reply.message);
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
  if (r == 0 && req.op == ST_NSH_OP_DEBUG_SYSCALL
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
      st_op_from_request (&req, &op);
      r = st_op_call (p->opener, &op, n_fds == 1 ? fds[0] : -1, &res, &fd);
      if (r < 0)
        die ("the opener is gone: %s", strerror (-r));
      r = -res.error;
      snprintf (reply.message, sizeof reply.message, "%s", res.message);
    }
  reply.ok = r == 0;
  if (r == 0)
    {
      reply.way = (enum st_nsh_way) res.way;
      snprintf (reply.path, sizeof reply.path, "%s", res.path);
      memcpy (reply.build_id, res.build_id, res.build_id_size);
      reply.build_id_size = res.build_id_size;
    }
  else
    reply.error = -r;
  reply_send (p, &reply, fd);
  if (fd >= 0)
    close (fd);
}

/* Waits for the client's next message, at most IDLE_TIMEOUT seconds.  */
static void
wait_for_request (struct parser *p, unsigned idle_timeout)
{
  if (idle_timeout == 0)
    return;
  struct pollfd pfd = { .fd = p->client, .events = POLLIN };
  int r;
  while ((r = poll (&pfd, 1, (int) (idle_timeout > 86400 ? 86400 : idle_timeout) * 1000)) < 0
         && errno == EINTR)
    ;
  if (r == 0)
    exit (EXIT_SUCCESS);   /* idle: the client reconnects when it needs us */
  if (r < 0)
    die ("poll: %s", strerror (errno));
}

void
st_parser_run (int client_sock, int opener_sock, unsigned idle_timeout)
{
  struct parser p = { client_sock, opener_sock };
  static char buf[ST_NSH_MAX_MESSAGE + 1];
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      wait_for_request (&p, idle_timeout);
      ssize_t len = st_nsh_recv (p.client, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
      if (len < 0 && (len == -ECONNRESET || len == -ENOTCONN))
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
