/* nsh-client: a test client of eu-stacktrace-ns-helper, in C with the
 * project's own protocol code (src/ns-helper/protocol.c), for what a test
 * written in Python cannot do: run as an unprivileged user (Python lives
 * under /root on the test machines), and time a round trip without an
 * interpreter's overhead (bench/bench-ns-helper.sh).
 *
 *   nsh-client HELPER-OR-SOCKET open PID PATH [WAY] [NS-FD]
 *       one request; prints the reply (JSON) and, with a descriptor, the
 *       build-id the test reads from it: "fd build-id HEX"
 *   nsh-client HELPER-OR-SOCKET rtt PID PATH [N [WAY [BATCH]]]
 *       N requests (default 10000) for one file; prints the median, p99
 *       and mean round trip, and the descriptors both sides hold before
 *       and after.  BATCH (1): requests sent before the replies are read;
 *       then a round trip is a batch's time over BATCH
 *
 * HELPER-OR-SOCKET: a helper to spawn over a socketpair, or (a path that is
 * a socket) a running one to connect to.  PATH's address range comes from
 * /proc/PID/maps when the process maps it, so that map_files applies.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/clock.h"
#include "basic/why.h"
#include "ns-helper/elf-build-id.h"
#include "ns-helper/protocol.h"

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

static int
count_fds (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/fd", (int) pid);
  DIR *d = opendir (path);
  if (d == NULL)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    n += e->d_name[0] != '.';
  closedir (d);
  return n - (pid == getpid ());   /* opendir's own */
}

/* The executable mapping of PATH in PID.  */
static bool
find_range (pid_t pid, const char *path, uint64_t *start, uint64_t *end)
{
  char maps[64], line[4096 + 128];
  snprintf (maps, sizeof maps, "/proc/%d/maps", (int) pid);
  FILE *f = fopen (maps, "r");
  if (f == NULL)
    return false;
  bool found = false;
  while (!found && fgets (line, sizeof line, f) != NULL)
    {
      char perms[8], name[4096];
      uint64_t a, b;
      if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %4095s", &a, &b, perms, name) == 4
          && strchr (perms, 'x') != NULL && strcmp (name, path) == 0)
        {
          *start = a;
          *end = b;
          found = true;
        }
    }
  fclose (f);
  return found;
}

/* Spawns the helper at TARGET, or connects to the socket TARGET.  */
static int
connect_helper (const char *target, pid_t *child)
{
  *child = -1;
  struct stat st;
  if (stat (target, &st) == 0 && S_ISSOCK (st.st_mode))
    {
      struct sockaddr_un addr = { .sun_family = AF_UNIX };
      snprintf (addr.sun_path, sizeof addr.sun_path, "%s", target);
      int sock = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
      if (sock < 0 || connect (sock, (struct sockaddr *) &addr, sizeof addr) != 0)
        {
          perror (target);
          exit (1);
        }
      return sock;
    }
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
    {
      perror ("socketpair");
      exit (1);
    }
  char fd_arg[32];
  snprintf (fd_arg, sizeof fd_arg, "--fd=%d", sv[1]);
  char *argv[] = { (char *) target, fd_arg, NULL };
  char *envp[] = { NULL };
  int r = posix_spawn (child, target, NULL, NULL, argv, envp);
  if (r != 0)
    {
      fprintf (stderr, "cannot start %s: %s\n", target, strerror (r));
      exit (1);
    }
  close (sv[1]);
  return sv[0];
}

static int
send_request (int sock, struct st_nsh_request *req, int ns_fd)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  req->ns_fd = ns_fd >= 0;
  int len = st_nsh_encode_request (req, buf, sizeof buf);
  if (len < 0 || st_nsh_send (sock, buf, (size_t) len, &ns_fd, ns_fd >= 0) < 0)
    return -EIO;
  return 0;
}

static int receive_reply (int sock, struct st_nsh_reply *reply, int *fd, char *raw,
                          size_t raw_size);

/* One request; the reply into REPLY, its descriptor into *FD.  */
static int
ask (int sock, struct st_nsh_request *req, int ns_fd, struct st_nsh_reply *reply, int *fd,
     char *raw, size_t raw_size)
{
  if (send_request (sock, req, ns_fd) < 0)
    return -EIO;
  return receive_reply (sock, reply, fd, raw, raw_size);
}

static int
receive_reply (int sock, struct st_nsh_reply *reply, int *fd, char *raw, size_t raw_size)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  int fds[1];
  size_t n_fds;
  unsigned flags;
  /* As the core's client does; NSH_SPIN_US=0 measures without.  */
  const char *spin = getenv ("NSH_SPIN_US");
  unsigned long spin_us = spin != NULL ? strtoul (spin, NULL, 10) : ST_NSH_SPIN_US;
  st_nsh_spin_readable (sock, spin_us < 1000000 ? (unsigned) spin_us : 1000000);
  ssize_t got = st_nsh_recv (sock, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
  if (got <= 0)
    return -ECONNRESET;
  buf[got] = '\0';
  if (raw != NULL)
    snprintf (raw, raw_size, "%s", buf);
  struct st_why why;
  if (st_nsh_decode_reply (buf, (size_t) got, reply, &why) < 0)
    {
      fprintf (stderr, "bad reply: %s\n", why.text);
      return -EPROTO;
    }
  *fd = n_fds == 1 ? fds[0] : -1;
  return 0;
}

/* A request that fails (no descriptor comes back): once its reply is in,
   the helper has closed whatever the requests before it sent.  */
static void
settle (int sock, pid_t pid)
{
  struct st_nsh_request req = { .op = ST_NSH_OP_OPEN, .pid = pid, .ways = ST_NSH_WAYS_ALL };
  snprintf (req.path, sizeof req.path, "/nonexistent/settle");
  struct st_nsh_reply reply;
  int fd;
  if (ask (sock, &req, -1, &reply, &fd, NULL, 0) == 0 && fd >= 0)
    close (fd);
}

static int
finish (int sock, pid_t child)
{
  close (sock);
  if (child < 0)
    return 0;
  int status;
  waitpid (child, &status, 0);
  if (WIFSIGNALED (status))
    printf ("helper killed by signal %d\n", WTERMSIG (status));
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}

static int
do_open (int sock, pid_t child, struct st_nsh_request *req, int ns_fd)
{
  struct st_nsh_reply reply;
  int fd;
  char raw[ST_NSH_MAX_MESSAGE + 1];
  if (ask (sock, req, ns_fd, &reply, &fd, raw, sizeof raw) < 0)
    {
      printf ("no reply\n");
      finish (sock, child);
      return 1;
    }
  printf ("%s\n", raw);
  if (fd >= 0)
    {
      uint8_t id[ST_ELF_BUILD_ID_MAX];
      char hex[2 * ST_ELF_BUILD_ID_MAX + 1] = "";
      int n = st_elf_fd_build_id (fd, id);
      if (n > 0)
        st_nsh_hex (id, (size_t) n, hex);
      printf ("fd build-id %s\n", hex);
      close (fd);
    }
  return finish (sock, child) | !reply.ok;
}

static int
do_rtt (int sock, pid_t child, struct st_nsh_request *req, long n, long batch)
{
  uint64_t *rtt = calloc ((size_t) n, sizeof *rtt);
  long ok = 0;
  const char *way = "?";
  char last_error[512] = "";
  int helper_before = -1, client_before = -1;
  /* One request more than measured: the first waits for the helper to
     start, and pins the process.  */
  for (long i = -1; i < n; i++)
    {
      struct st_nsh_reply reply;
      int fd;
      /* A batch: K requests sent, then their K replies read (the last
         batch may be shorter); each request counts the batch's time over
         K.  The first request goes alone.  */
      long k = i < 0 ? 1 : (n - i < batch ? n - i : batch);
      uint64_t t0 = st_now_ns ();
      for (long j = 0; j < k; j++)
        if (send_request (sock, req, -1) < 0)
          {
            printf ("no reply\n");
            return 1;
          }
      for (long j = 0; j < k; j++)
        {
          if (receive_reply (sock, &reply, &fd, NULL, 0) < 0)
            {
              printf ("no reply\n");
              return 1;
            }
          if (fd >= 0)
            close (fd);
          if (reply.ok)
            {
              ok += i >= 0;
              way = st_nsh_way_name (reply.way);
            }
          else
            snprintf (last_error, sizeof last_error, "%s", reply.message);
        }
      uint64_t t1 = st_now_ns ();
      if (i < 0)
        {
          settle (sock, req->pid);
          helper_before = child > 0 ? count_fds (child) : -1;
          client_before = count_fds (getpid ());
          continue;
        }
      for (long j = 0; j < k; j++)
        rtt[i + j] = (t1 - t0) / (uint64_t) k;
      i += k - 1;
    }
  settle (sock, req->pid);
  int helper_after = child > 0 ? count_fds (child) : -1;
  int client_after = count_fds (getpid ());
  qsort (rtt, (size_t) n, sizeof *rtt, compare_u64);
  double sum = 0;
  for (long i = 0; i < n; i++)
    sum += (double) rtt[i];
  size_t p99 = (size_t) ((n * 99 + 99) / 100 - 1);
  printf ("requests %ld ok %ld way %s median_us %.1f p99_us %.1f mean_us %.1f\n", n, ok, way,
          rtt[n / 2] / 1e3, rtt[p99] / 1e3, sum / (double) n / 1e3);
  printf ("fds helper %d -> %d client %d -> %d\n", helper_before, helper_after, client_before,
          client_after);
  if (ok != n)
    printf ("last error: %s\n", last_error);
  free (rtt);
  return finish (sock, child) | (ok != n);
}

int
main (int argc, char **argv)
{
  if (argc < 5 || (strcmp (argv[2], "open") != 0 && strcmp (argv[2], "rtt") != 0))
    {
      fprintf (stderr, "usage: %s HELPER-OR-SOCKET open PID PATH [WAY] [NS-FD]\n"
                       "       %s HELPER-OR-SOCKET rtt PID PATH [N [WAY [BATCH]]]\n", argv[0],
               argv[0]);
      return 2;
    }
  bool rtt = strcmp (argv[2], "rtt") == 0;
  struct st_nsh_request req = { .op = ST_NSH_OP_OPEN, .pid = atoi (argv[3]),
                                .ways = ST_NSH_WAYS_ALL };
  snprintf (req.path, sizeof req.path, "%s", argv[4]);
  req.has_range = find_range (req.pid, req.path, &req.start, &req.end);
  const char *way = argc > (rtt ? 6 : 5) ? argv[rtt ? 6 : 5] : NULL;
  if (way != NULL && strcmp (way, "all") != 0)
    {
      int w = st_nsh_way_lookup (way);
      if (w < 0)
        {
          fprintf (stderr, "unknown way %s\n", way);
          return 2;
        }
      req.ways = 1u << w;
    }
  pid_t child;
  int sock = connect_helper (argv[1], &child);
  if (rtt)
    {
      long batch = argc > 7 ? atol (argv[7]) : 1;
      return do_rtt (sock, child, &req, argc > 5 ? atol (argv[5]) : 10000,
                     batch >= 1 ? batch : 1);
    }
  return do_open (sock, child, &req, argc > 6 ? atoi (argv[6]) : -1);
}
