/* eu-stacktrace-ns-helper: opens the files that processes in other mount
 * namespaces map, for eu-stacktrace (see README in this folder).
 *
 * It serves one client on one SOCK_SEQPACKET socket, until the client
 * hangs up: spawned by eu-stacktrace with --fd=N, or started by systemd
 * for each connection to its socket (Accept=yes: LISTEN_FDS=1, fd 3).  The
 * order of the start is the order of trust: take the socket and close
 * every other descriptor, set the limits, fork the broker (the only process
 * that keeps the capability to enter namespaces), drop to what the main
 * process needs and install its seccomp filter, and only then read what
 * the client sends.  Whatever a request holds, it gets a reply and the
 * helper carries on; anything the helper cannot vouch for (a failure to
 * sandbox itself) ends it at once.  */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns-helper/auth.h"
#include "ns-helper/broker.h"
#include "ns-helper/open-ways.h"
#include "ns-helper/pin.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"

#define SOCKET_FD 3

struct helper {
  int sock;
  struct st_peer peer;
  struct st_pins pins;
  struct st_broker broker;
  struct st_ways ways;
};

static void __attribute__ ((noreturn, format (printf, 1, 2)))
die (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fputs ("eu-stacktrace-ns-helper: ", stderr);
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (EXIT_FAILURE);
}

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: eu-stacktrace-ns-helper --fd=N\n"
           "   or: started by systemd for a connection (Accept=yes)\n"
           "\n"
           "Opens, for eu-stacktrace, the files that processes in other mount namespaces\n"
           "(containers, flatpak sandboxes) map, and their separate debuginfo, and passes\n"
           "them back read-only over a SOCK_SEQPACKET unix socket.  Not meant to be run\n"
           "by hand: eu-stacktrace starts it (--ns-helper=spawn), or systemd does for\n"
           "each connection to " ST_NSH_SYSTEM_SOCKET ".\n"
           "\n"
           "  --fd=N     serve the client connected to descriptor N\n"
           "  --help     this text\n"
           "  --version  the version and the protocol version\n");
}

/* The client's socket: --fd=N, or systemd's LISTEN_FDS=1.  */
static int
find_socket (int argc, char **argv)
{
  static const struct option options[] = {
    { "fd", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  int fd = -1, c;
  while ((c = getopt_long (argc, argv, "", options, NULL)) != -1)
    switch (c)
      {
      case 'f':
        {
          char *end;
          errno = 0;
          long n = strtol (optarg, &end, 10);
          if (errno != 0 || *end != '\0' || n < 3 || n > 65535)
            die ("--fd wants a descriptor number of 3 or more, not `%s'", optarg);
          fd = (int) n;
        }
        break;
      case 'h':
        usage (stdout);
        exit (EXIT_SUCCESS);
      case 'V':
        printf ("eu-stacktrace-ns-helper " PACKAGE_VERSION " (protocol %d)\n", ST_NSH_VERSION);
        exit (EXIT_SUCCESS);
      default:
        usage (stderr);
        exit (EXIT_FAILURE);
      }
  if (optind != argc)
    die ("unexpected argument `%s'", argv[optind]);
  if (fd < 0)
    {
      const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
      if (fds == NULL || pid == NULL || strtol (pid, NULL, 10) != getpid ())
        die ("no client: eu-stacktrace starts this helper with --fd, or systemd does "
             "through its socket");
      if (strcmp (fds, "1") != 0)
        die ("LISTEN_FDS=%s: want one connection (Accept=yes)", fds);
      fd = SOCKET_FD;
    }
  unsetenv ("LISTEN_FDS");
  unsetenv ("LISTEN_PID");
  unsetenv ("LISTEN_FDNAMES");
  int type = 0, domain = 0;
  socklen_t len = sizeof type;
  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
    die ("descriptor %d: %m", fd);
  len = sizeof domain;
  if (getsockopt (fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX
      || type != SOCK_SEQPACKET)
    die ("descriptor %d is not a connected AF_UNIX SOCK_SEQPACKET socket", fd);
  return fd;
}

/* The socket at SOCKET_FD, and nothing else open but stdin, stdout and
   stderr: no descriptor of the caller's reaches the sandbox.  */
static void
take_socket (int fd)
{
  if (fd != SOCKET_FD && dup2 (fd, SOCKET_FD) < 0)
    die ("dup2: %m");
  if (close_range (SOCKET_FD + 1, ~0u, 0) != 0)
    die ("close_range: %m");
}

static bool
privileged (void)
{
  cap_t caps = cap_get_proc ();
  cap_flag_value_t v = CAP_CLEAR;
  if (caps != NULL)
    cap_get_flag (caps, CAP_SYS_ADMIN, CAP_PERMITTED, &v);
  cap_free (caps);
  return v == CAP_SET;
}

/* The helper works in bursts of microseconds while the unwinder waits for
   it, often on CPUs that the profiled programs keep busy.  A short slice
   asks the scheduler (EEVDF, Linux 6.12) to run it soon after it wakes
   rather than after a full slice of each busy task: the round trip then
   stays in microseconds under load, not milliseconds.  A hint only: an
   older kernel ignores or refuses it.  */
static void
ask_for_short_slices (void)
{
  /* The kernel's struct sched_attr (linux/sched/types.h, which <sched.h>
     does not get along with), its first version.  */
  struct {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
  } attr = {
    .size = sizeof attr,
    .sched_policy = SCHED_OTHER,
    .sched_runtime = 100 * 1000,   /* ns: the shortest slice the kernel takes */
  };
  (void) syscall (SYS_sched_setattr, 0, &attr, 0);
}

/* json-c seeds its hash table on first use (getrandom): do it before the
   sandbox, so that a request is parsed the same way every time.  */
static void
warm_up_json (void)
{
  struct st_nsh_request req;
  char why[64];
  static const char probe[] = "{\"v\":1,\"op\":\"open\",\"pid\":1,\"path\":\"/\"}";
  st_nsh_decode_request (probe, sizeof probe - 1, &req, why, sizeof why);
}

static void
reply_send (struct helper *h, const struct st_nsh_reply *reply, int fd)
{
  char buf[ST_NSH_MAX_MESSAGE];
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
  int r = st_nsh_send (h->sock, buf, (size_t) len, &fd, fd >= 0 ? 1 : 0);
  if (r == -EPIPE || r == -ECONNRESET)
    exit (EXIT_SUCCESS);   /* the client went away mid-request */
  if (r < 0)
    die ("sending a reply: %s", strerror (-r));
}

static int
serve_file (struct helper *h, const struct st_nsh_request *req, int ns_fd,
            struct st_found *found, char *why, size_t why_size)
{
  struct st_pin *pin;
  int r = st_pins_get (&h->pins, req->pid, req->has_start_time ? &req->start_time : NULL, &pin,
                       why, why_size);
  if (r < 0)
    return r;
  r = st_auth_check (&h->peer, pin, ns_fd, why, why_size);
  if (r < 0)
    {
      st_pins_drop (&h->pins, pin);
      return r;
    }
  pin->authorized = true;
  if (req->op == ST_NSH_OP_OPEN)
    return st_open_mapping (&h->ways, pin, req, found, why, why_size);
  return st_open_debuginfo (&h->ways, pin, req, found, why, why_size);
}

/* One message in, one reply out.  */
static void
handle (struct helper *h, const char *buf, size_t len, unsigned flags, const int *fds,
        size_t n_fds)
{
  struct st_nsh_request req;
  struct st_nsh_reply reply = { 0 };
  struct st_found found = { .file.fd = -1 };
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
  if (r == 0)
    switch (req.op)
      {
      case ST_NSH_OP_OPEN:
      case ST_NSH_OP_DEBUGINFO:
        r = serve_file (h, &req, n_fds == 1 ? fds[0] : -1, &found, reply.message,
                        sizeof reply.message);
        break;
      case ST_NSH_OP_DEBUG_SYSCALL:
#ifdef ST_NSH_TEST_HOOKS
        r = st_sandbox_try_forbidden (req.syscall);
        snprintf (reply.message, sizeof reply.message,
                  r == 0 ? "%s: the filter let it through" : "%s: no such test",
                  req.syscall);
        r = -EINVAL;
#else
        r = -EOPNOTSUPP;
        snprintf (reply.message, sizeof reply.message,
                  "debug-syscall exists only in the test build");
#endif
        break;
      }
  reply.ok = r == 0;
  if (r == 0)
    {
      reply.way = found.way;
      snprintf (reply.path, sizeof reply.path, "%s", found.path);
      memcpy (reply.build_id, found.file.build_id, found.file.build_id_size);
      reply.build_id_size = found.file.build_id_size;
    }
  else
    reply.error = -r;
  reply_send (h, &reply, found.file.fd);
  if (found.file.fd >= 0)
    close (found.file.fd);
}

static void __attribute__ ((noreturn))
serve (struct helper *h)
{
  static char buf[ST_NSH_MAX_MESSAGE + 1];
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      ssize_t len = st_nsh_recv (h->sock, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
      if (len < 0 && (len == -ECONNRESET || len == -ENOTCONN))
        exit (EXIT_SUCCESS);
      if (len < 0)
        die ("receiving a request: %s", strerror ((int) -len));
      if (len == 0 && n_fds == 0 && flags == 0 && st_nsh_peer_closed (h->sock))
        exit (EXIT_SUCCESS);
      handle (h, buf, (size_t) len, flags, fds, n_fds);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
    }
}

int
main (int argc, char **argv)
{
  static struct helper h;
  take_socket (find_socket (argc, argv));
  h.sock = SOCKET_FD;
  if (st_peer_get (h.sock, &h.peer) < 0)
    die ("SO_PEERCRED: %m");
  int r = st_sandbox_limits ();
  if (r < 0)
    die ("setting limits: %s", strerror (-r));
  h.ways.privileged = privileged ();
  h.ways.broker = &h.broker;
  st_pins_init (&h.pins);
  warm_up_json ();
  ask_for_short_slices ();
  r = st_broker_start (&h.broker, h.sock);
  if (r < 0)
    die ("starting the setns broker: %s", strerror (-r));
  r = st_sandbox_enter (ST_SANDBOX_MAIN);
  if (r < 0)
    die ("entering the sandbox: %s", strerror (-r));
  serve (&h);
}
