/* ipc-floor: the least a namespace helper's round trip can cost on this
 * machine, the anchor bench/bench-ns-helper.sh sets the helper's own
 * round trip against.
 *
 *   ipc-floor PATH [N [2]]
 *       N round trips (default 10000); prints the median, p99 and mean as
 *       nsh-client's rtt does: "requests N ok N way floor median_us M ...";
 *       with 2, of two processes ("way floor2"): the client and an opener
 *       that reads the request itself, what a helper without the parser
 *       (the privilege split) could at best cost.
 *
 * It has the helper's shape and nothing of its work: three processes (the
 * client, the parser and the opener of src/ns-helper; or two), the same
 * messages with the same sizes, sent and received by the same code
 * (src/ns-helper/protocol.c), the client polling for its reply as the
 * core's does (ST_NSH_SPIN_US) and the opener opening PATH and passing the
 * descriptor straight back on the client's connection.  No JSON, no
 * checks, no pidfd, no ELF header: what is left is the machine's cost of
 * three messages between processes, two of them waking a process, and one
 * open.  On a VM that cost is most of a round trip, and no helper can go
 * below it.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/clock.h"
#include "ns-helper/opener.h"
#include "ns-helper/protocol.h"

/* The sizes of the helper's messages for a map_files request (strace of
   one): the client's JSON request, the parser's operation for the opener
   and the opener's JSON reply.  */
#define REQUEST_SIZE 130
#define OPERATION_SIZE sizeof (struct st_op)
#define REPLY_SIZE 120

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Forks a process that runs FN (ARG) until its socket hangs up, and dies
   with its parent.  It keeps only IN and OUT: a copy of the client's end
   left open in a child would keep the parser from ever seeing the client
   hang up.  */
static pid_t
start (void (*fn) (const char *, int, int), const char *arg, int in, int out)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  for (int fd = 3; fd < 64; fd++)
    if (fd != in && fd != out)
      close (fd);
  fn (arg, in, out);
  _exit (0);
}

/* The parser: takes a request from the client, passes an operation on.  */
static void
parser (const char *unused, int client, int opener)
{
  (void) unused;
  static char buf[ST_NSH_MAX_MESSAGE], op[OPERATION_SIZE];
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      ssize_t got = st_nsh_recv (client, buf, sizeof buf, fds, 1, &n_fds, &flags);
      if (got <= 0)
        return;
      memcpy (op, buf, (size_t) got);
      if (st_nsh_send (opener, op, sizeof op, NULL, 0) < 0)
        return;
    }
}

/* The opener: takes an operation, opens PATH, replies to the client with
   the descriptor.  */
static void
opener (const char *path, int parser_sock, int client)
{
  static char buf[ST_NSH_MAX_MESSAGE * 4 + 32], reply[REPLY_SIZE];
  for (;;)
    {
      int fds[1];
      size_t n_fds;
      unsigned flags;
      ssize_t got = st_nsh_recv (parser_sock, buf, sizeof buf, fds, 1, &n_fds, &flags);
      if (got <= 0)
        return;
      int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      int r = st_nsh_send (client, reply, sizeof reply, &fd, fd >= 0 ? 1 : 0);
      if (fd >= 0)
        close (fd);
      if (r < 0)
        return;
    }
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s PATH [N [2]]\n", argv[0]);
      return 2;
    }
  const char *path = argv[1];
  long n = argc > 2 ? strtol (argv[2], NULL, 10) : 10000;
  if (n < 1)
    n = 1;
  bool two = argc > 3 && strcmp (argv[3], "2") == 0;
  /* client[0] the client's end, client[1] the helper's (both its
     processes hold it, as the helper's do); pipe between the two.  */
  int client[2], pipe_[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, client) != 0
      || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pipe_) != 0)
    {
      fprintf (stderr, "ipc-floor: socketpair: %s\n", strerror (errno));
      return 1;
    }
  pid_t p = two ? -1 : start (parser, NULL, client[1], pipe_[0]);
  pid_t o = start (opener, path, two ? client[1] : pipe_[1], client[1]);
  close (client[1]);
  close (pipe_[0]);
  close (pipe_[1]);

  uint64_t *rtt = calloc ((size_t) n, sizeof *rtt);
  if (rtt == NULL)
    return 1;
  static char request[REQUEST_SIZE], buf[ST_NSH_MAX_MESSAGE];
  long ok = 0;
  /* One round trip more than measured: the first finds both processes
     just started.  */
  for (long i = -1; i < n; i++)
    {
      uint64_t t0 = st_now_ns ();
      if (st_nsh_send (client[0], request, sizeof request, NULL, 0) < 0)
        break;
      st_nsh_spin_readable (client[0], ST_NSH_SPIN_US);
      int fds[1];
      size_t n_fds = 0;
      unsigned flags;
      if (st_nsh_recv (client[0], buf, sizeof buf, fds, 1, &n_fds, &flags) <= 0)
        break;
      uint64_t t1 = st_now_ns ();
      if (n_fds == 1)
        close (fds[0]);
      if (i >= 0)
        {
          rtt[i] = t1 - t0;
          ok += n_fds == 1;
        }
    }
  close (client[0]);
  if (p > 0)
    waitpid (p, NULL, 0);
  waitpid (o, NULL, 0);
  if (ok != n)
    {
      fprintf (stderr, "ipc-floor: %ld of %ld round trips passed a descriptor (%s)\n", ok, n,
               path);
      return 1;
    }
  qsort (rtt, (size_t) n, sizeof *rtt, compare_u64);
  double sum = 0;
  for (long i = 0; i < n; i++)
    sum += (double) rtt[i];
  size_t p99 = (size_t) ((n * 99 + 99) / 100 - 1);
  printf ("requests %ld ok %ld way %s median_us %.1f p99_us %.1f mean_us %.1f\n", n, ok,
          two ? "floor2" : "floor", rtt[n / 2] / 1e3, rtt[p99] / 1e3, sum / (double) n / 1e3);
  free (rtt);
  return 0;
}
