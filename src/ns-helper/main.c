/* eu-stacktrace-ns-helper: opens the files that processes in other mount
 * namespaces map, for eu-stacktrace (see README in this folder).
 *
 * It serves one client on one SOCK_SEQPACKET socket, until the client
 * hangs up or stays idle: spawned by eu-stacktrace with --fd=N, or started
 * by systemd for each connection to its socket (Accept=yes: LISTEN_FDS=1,
 * fd 3).  The order of the start is the order of trust: take the socket
 * and close every other descriptor, learn the client's credentials from
 * the kernel, take one of the user's connection slots (slots.h), set the
 * limits, fork the setns broker and the resolver (broker.h), fork the
 * parser (parser.h), the only process that reads the client's socket, and
 * let it drop everything; then this process, the opener (opener.h), closes
 * the client's socket, drops to what it needs and serves the parser's
 * fixed operations.  Whatever a request holds, it gets a reply and the
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
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns-helper/auth.h"
#include "ns-helper/die.h"
#include "ns-helper/broker.h"
#include "ns-helper/opener.h"
#include "ns-helper/parser.h"
#include "ns-helper/pin.h"
#include "ns-helper/protocol.h"
#include "ns-helper/sandbox.h"
#include "ns-helper/slots.h"

#define SOCKET_FD 3
/* The parser's two sockets, where it takes them.  */
#define PARSER_CLIENT_FD 3
#define PARSER_OPENER_FD 4
#define DEFAULT_IDLE_TIMEOUT 300

struct options {
  int fd;
  long idle_timeout;        /* -1: the default for how it was started */
  const char *slots_dir;
};

#define die(...) st_nsh_die (NULL, __VA_ARGS__)

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
           "  --fd=N                serve the client connected to descriptor N\n"
           "  --idle-timeout=SECONDS  hang up on a client idle this long (0: never;\n"
           "                        default %d started by systemd, 0 with --fd); the\n"
           "                        client reconnects when it needs to\n"
           "  --slots-dir=DIR       where a privileged helper counts each user's\n"
           "                        connections (default " ST_SLOTS_DIR ", at most %d)\n"
           "  --help                this text\n"
           "  --version             the version and the protocol version\n",
           DEFAULT_IDLE_TIMEOUT, ST_SLOTS_PER_UID);
}

/* The options; the client's socket: --fd=N, or systemd's LISTEN_FDS=1.  */
static void
parse_options (int argc, char **argv, struct options *opts)
{
  static const struct option options[] = {
    { "fd", required_argument, NULL, 'f' },
    { "idle-timeout", required_argument, NULL, 'i' },
    { "slots-dir", required_argument, NULL, 's' },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 },
  };
  int fd = -1, c;
  opts->idle_timeout = -1;
  opts->slots_dir = ST_SLOTS_DIR;
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
      case 'i':
        {
          char *end;
          errno = 0;
          unsigned long n = strtoul (optarg, &end, 10);
          if (errno != 0 || *end != '\0' || optarg[0] == '-' || n > 86400 * 365)
            die ("--idle-timeout wants a number of seconds, not `%s'", optarg);
          opts->idle_timeout = (long) n;
        }
        break;
      case 's':
        if (optarg[0] != '/')
          die ("--slots-dir wants an absolute path, not `%s'", optarg);
        opts->slots_dir = optarg;
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
      /* A service's connection holds one of the user's slots: free it
         when idle.  A spawned helper is its client's own.  */
      if (opts->idle_timeout < 0)
        opts->idle_timeout = DEFAULT_IDLE_TIMEOUT;
    }
  if (opts->idle_timeout < 0)
    opts->idle_timeout = 0;
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
  opts->fd = fd;
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

/* json-c seeds its hash table on first use (getrandom): do it before the
   sandbox, so that a request is parsed the same way every time.  */
static void
warm_up_json (void)
{
  struct st_nsh_request req;
  static const char probe[] = "{\"v\":1,\"op\":\"open\",\"pid\":1,\"path\":\"/\"}";
  st_nsh_decode_request (probe, sizeof probe - 1, &req, NULL);
}

/* The one reply of a connection refused before anything was read.  */
static void __attribute__ ((noreturn))
refuse (int sock, int error, const char *message)
{
  static struct st_nsh_reply reply;
  static char buf[ST_NSH_MAX_MESSAGE];
  reply.error = error;
  snprintf (reply.message, sizeof reply.message, "%s", message);
  int len = st_nsh_encode_reply (&reply, buf, sizeof buf);
  if (len > 0)
    st_nsh_send (sock, buf, (size_t) len, NULL, 0);
  fprintf (stderr, "eu-stacktrace-ns-helper: %s\n", message);
  exit (EXIT_SUCCESS);
}

/* Forks the parser: its sockets at PARSER_CLIENT_FD and PARSER_OPENER_FD,
   nothing else of ours, and no privilege.  Returns the opener's end.  */
static int
start_parser (int client, unsigned idle_timeout, pid_t *pid_out)
{
  int pair[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    die ("socketpair: %m");
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    die ("fork: %m");
  if (pid == 0)
    {
      if (client != PARSER_CLIENT_FD || pair[1] == PARSER_CLIENT_FD)
        die ("the client's socket moved");
      if (dup3 (pair[1], PARSER_OPENER_FD, O_CLOEXEC) < 0
          || close_range (PARSER_OPENER_FD + 1, ~0u, 0) != 0)
        die ("parser: descriptors: %m");
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (1);
      prctl (PR_SET_NAME, "nsh-parser");
      st_sandbox_short_slices ();
      int r = st_parser_set_idle_timeout (PARSER_CLIENT_FD, idle_timeout);
      if (r < 0)
        die ("parser: the idle timeout: %s", strerror (-r));
      r = st_sandbox_enter (ST_SANDBOX_PARSER, NULL);
      if (r < 0)
        die ("parser: entering the sandbox: %s", strerror (-r));
      st_parser_run (PARSER_CLIENT_FD, PARSER_OPENER_FD);
    }
  close (pair[1]);
  *pid_out = pid;
  return pair[0];
}

int
main (int argc, char **argv)
{
  static struct options opts;
  static struct st_opener o;
  parse_options (argc, argv, &opts);
  take_socket (opts.fd);
  int r = st_peer_get (SOCKET_FD, &o.peer);
  if (r < 0)
    die ("SO_PEERCRED, SO_PEERGROUPS: %s", strerror (-r));
  o.privileged = privileged ();
  /* Before anything is read: one user holds so many connections at most.  */
  if (o.privileged && o.peer.uid != 0)
    {
      char why[256], account[64];
      r = st_peer_account (SOCKET_FD, &o.peer, account, sizeof account, why, sizeof why);
      if (r == 0)
        r = st_slot_take (opts.slots_dir, account, ST_SLOTS_PER_UID, why, sizeof why);
      if (r < 0)
        refuse (SOCKET_FD, -r, why);
      /* Kept open, as the slot, for as long as the opener lives.  */
    }
  r = st_sandbox_limits ();
  if (r < 0)
    die ("setting limits: %s", strerror (-r));
  st_pins_init (&o.pins);
  st_pool_init (&o.pool);
  warm_up_json ();
  st_sandbox_short_slices ();
  struct st_sandbox_client client = {
    .uid = o.peer.uid,
    .gid = o.peer.gid,
    .n_groups = o.peer.n_groups,
    .groups = o.peer.groups,
  };
  const struct st_sandbox_client *as_client = o.privileged && o.peer.uid != 0 ? &client : NULL;
  r = st_sandbox_prune_bounding_set (as_client);
  if (r < 0)
    die ("dropping capabilities from the bounding set: %s", strerror (-r));
  r = st_broker_start (&o.broker, ST_BROKER_SETNS, as_client);
  if (r < 0)
    die ("starting the setns broker: %s", strerror (-r));
  r = st_broker_start (&o.resolver, ST_BROKER_IN_ROOT, as_client);
  if (r < 0)
    die ("starting the resolver: %s", strerror (-r));
  o.sock = start_parser (SOCKET_FD, (unsigned) opts.idle_timeout, &o.parser);
  /* The opener never reads what the client sends (its seccomp filter
     refuses it): it keeps the socket only to send its replies.  */
  _Static_assert (SOCKET_FD == ST_SANDBOX_OPENER_CLIENT_FD, "the opener's client socket");
  o.client = SOCKET_FD;
  /* map_files's reopens go through it: a lookup of one name rather than
     of /proc/self/fd/N (-1 falls back to that).  */
  o.fd_dir = open ("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  r = st_sandbox_enter (ST_SANDBOX_OPENER, NULL);
  if (r < 0)
    die ("entering the sandbox: %s", strerror (-r));
  st_opener_serve (&o);
}
