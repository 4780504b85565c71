#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/resolve/ns-client.h"
#include "basic/procfs.h"
#include "ns-helper/protocol.h"

#define HELPER_NAME "eu-stacktrace-ns-helper"
/* A helper that keeps dying is a bug to report, not to retry forever.  */
#define MAX_RESTARTS 3
/* No request takes long (a few opens and reads of ELF headers): a helper
   silent for this long is stuck, on a hung file system for instance.  */
#define REPLY_TIMEOUT_S 5

enum mode {
  MODE_AUTO,
  MODE_SPAWN,
  MODE_SOCKET,
};

/* One cached answer: a descriptor (ours; callers get dups) or an error.  */
struct answer {
  int fd;
  int error;
  enum st_nsh_way way;
  char *why;
  char *found_path;
};

struct st_ns_client {
  pthread_mutex_t lock;
  enum mode mode;
  char *socket_path;           /* MODE_SOCKET */
  unsigned ways;               /* EU_STACKTRACE_NS_HELPER_WAYS, or all */
  bool root;
  /* The connection.  */
  int sock;                    /* -1: none yet, or lost */
  pid_t child;                 /* a spawned helper, or -1 */
  char *connected_to;          /* for messages: the socket, or the helper spawned */
  unsigned restarts;           /* connections lost */
  unsigned reconnects;         /* connections the service closed while idle */
  bool disabled;
  char disabled_why[256];
  uint64_t next_id;
  struct st_hashmap *cache;    /* key (see cache_key) -> struct answer */
  /* --stats  */
  uint64_t requests, found, not_found, failed, by_way[ST_NSH_WAY_N];
  uint64_t *rtt_ns;            /* every round trip, for the median and p99 */
  size_t n_rtt, cap_rtt;
  /* The first reply of a connection waits for the helper to start: it is
     counted apart.  */
  bool fresh;
  uint64_t startup_ns;
};

bool
st_ns_client_mode_valid (const char *mode)
{
  return strcmp (mode, "auto") == 0 || strcmp (mode, "spawn") == 0
         || strcmp (mode, "none") == 0 || strchr (mode, '/') != NULL;
}

static void
answer_free (void *p)
{
  struct answer *a = p;
  if (a->fd >= 0)
    close (a->fd);
  free (a->why);
  free (a->found_path);
  free (a);
}

/* EU_STACKTRACE_NS_HELPER_WAYS=way,way: restrict the helper to these ways
   (for tests and for diagnosing which way works).  */
static unsigned
ways_from_environment (void)
{
  const char *env = getenv ("EU_STACKTRACE_NS_HELPER_WAYS");
  if (env == NULL || *env == '\0')
    return ST_NSH_WAYS_ALL;
  unsigned ways = 0;
  char *copy = strdup (env), *save = NULL;
  for (char *tok = copy ? strtok_r (copy, ",", &save) : NULL; tok != NULL;
       tok = strtok_r (NULL, ",", &save))
    {
      int way = st_nsh_way_lookup (tok);
      if (way < 0)
        st_warning ("EU_STACKTRACE_NS_HELPER_WAYS: unknown way `%s' (known: map_files, "
                    "openat2, setns)", tok);
      else
        ways |= 1u << way;
    }
  free (copy);
  return ways ? ways : ST_NSH_WAYS_ALL;
}

struct st_ns_client *
st_ns_client_new (const char *mode)
{
  if (mode == NULL || strcmp (mode, "none") == 0)
    return NULL;
  struct st_ns_client *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  c->sock = -1;
  c->child = -1;
  c->root = geteuid () == 0;
  c->ways = ways_from_environment ();
  if (strcmp (mode, "auto") == 0)
    c->mode = MODE_AUTO;
  else if (strcmp (mode, "spawn") == 0)
    c->mode = MODE_SPAWN;
  else
    {
      c->mode = MODE_SOCKET;
      c->socket_path = strdup (mode);
    }
  c->cache = st_hashmap_new (answer_free);
  if (c->cache == NULL || (c->mode == MODE_SOCKET && c->socket_path == NULL))
    {
      st_hashmap_free (c->cache);
      free (c->socket_path);
      free (c);
      return NULL;
    }
  pthread_mutex_init (&c->lock, NULL);
  return c;
}

/* The connection.  */

static void
reap (pid_t pid)
{
  /* A helper told to go (its socket closed) goes at once; one that does
     not within a second is stuck, and killed.  */
  for (int i = 0; i < 100; i++)
    {
      pid_t r = waitpid (pid, NULL, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR))
        return;
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

static void
disconnect (struct st_ns_client *c, bool kill_child)
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
connect_socket (struct st_ns_client *c, const char *path, char *why, size_t why_size)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    {
      snprintf (why, why_size, "%s: socket path too long", path);
      return -ENAMETOOLONG;
    }
  strcpy (addr.sun_path, path);
  int sock = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0 || connect (sock, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      int e = errno;
      snprintf (why, why_size, "cannot connect to %s: %s", path, strerror (e));
      if (sock >= 0)
        close (sock);
      return -e;
    }
  set_timeouts (sock);
  c->sock = sock;
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
spawn_helper (struct st_ns_client *c, char *why, size_t why_size)
{
  char *path = helper_path ();
  if (path == NULL)
    return -ENOMEM;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    {
      int e = errno;
      snprintf (why, why_size, "socketpair: %s", strerror (e));
      free (path);
      return -e;
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
      snprintf (why, why_size, "cannot start %s: %s", path, strerror (r));
      close (sv[0]);
      free (path);
      return -r;
    }
  set_timeouts (sv[0]);
  c->sock = sv[0];
  c->child = pid;
  c->fresh = true;
  free (c->connected_to);
  c->connected_to = path;
  st_debug ("namespace helper: started %s (pid %d)", path, pid);
  return 0;
}

static int
ensure_connected (struct st_ns_client *c, char *why, size_t why_size)
{
  if (c->sock >= 0)
    return 0;
  if (c->disabled)
    {
      snprintf (why, why_size, "%s", c->disabled_why);
      return -ENOTCONN;
    }
  int r;
  if (c->mode == MODE_SOCKET)
    r = connect_socket (c, c->socket_path, why, why_size);
  else
    {
      struct stat st;
      r = -1;
      if (c->mode == MODE_AUTO && stat (ST_NSH_SYSTEM_SOCKET, &st) == 0 && S_ISSOCK (st.st_mode))
        r = connect_socket (c, ST_NSH_SYSTEM_SOCKET, why, why_size);
      if (r < 0)
        r = spawn_helper (c, why, why_size);
    }
  if (r < 0)
    {
      /* What cannot start now will not start later in the run.  */
      c->disabled = true;
      snprintf (c->disabled_why, sizeof c->disabled_why, "%s", why);
      st_info ("namespace helper: %s", why);
    }
  return r;
}

/* The connection broke or desynchronized: drop it, and say what happened
   in WHY.  A spawned helper is started again at the next request, a few
   times.  */
static void
connection_lost (struct st_ns_client *c, const char *what, char *why, size_t why_size)
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
    disconnect (c, false);
  c->restarts++;
  if (c->restarts > MAX_RESTARTS)
    {
      c->disabled = true;
      snprintf (c->disabled_why, sizeof c->disabled_why,
                "the helper failed %u times; not started again", c->restarts);
    }
  st_warning ("namespace helper %s: %s%s; %s", c->connected_to ? c->connected_to : "", what, how,
              c->disabled ? "giving up on it" : "starting it again for the next file");
  snprintf (why, why_size, "the helper failed: %s%s%s", what, how,
            c->disabled ? "; not started again" : "");
}

static void
record_rtt (struct st_ns_client *c, uint64_t ns)
{
  if (c->n_rtt == c->cap_rtt)
    {
      size_t cap = c->cap_rtt ? 2 * c->cap_rtt : 64;
      uint64_t *rtt = realloc (c->rtt_ns, cap * sizeof *rtt);
      if (rtt == NULL)
        return;
      c->rtt_ns = rtt;
      c->cap_rtt = cap;
    }
  c->rtt_ns[c->n_rtt++] = ns;
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
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
  disconnect (c, false);
  c->reconnects++;
  return true;
}

static int round_trip_once (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
                            struct st_nsh_reply *reply, int *fd, bool *retry, char *why,
                            size_t why_size);

/* One request and its reply.  Returns 0 with REPLY (and *FD when it
   carried one), or -errno when the connection failed (then dropped).  */
static int
round_trip (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
            struct st_nsh_reply *reply, int *fd, char *why, size_t why_size)
{
  drop_if_hung_up (c);
  bool retry = false;
  int r = round_trip_once (c, req, ns_fd, reply, fd, &retry, why, why_size);
  /* It hung up just as the request went: once more, on a new connection.  */
  if (retry)
    r = round_trip_once (c, req, ns_fd, reply, fd, &retry, why, why_size);
  return r;
}

static int
round_trip_once (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
                 struct st_nsh_reply *reply, int *fd, bool *retry, char *why, size_t why_size)
{
  *fd = -1;
  *retry = false;
  int r = ensure_connected (c, why, why_size);
  if (r < 0)
    return r;
  bool was_idle = !c->fresh && c->child <= 0;
  req->id = ++c->next_id;
  char buf[ST_NSH_MAX_MESSAGE + 1];
  int len = st_nsh_encode_request (req, buf, sizeof buf);
  if (len < 0)
    {
      snprintf (why, why_size, "the request does not fit in a message");
      return len;
    }
  uint64_t t0 = now_ns ();
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
      got = st_nsh_recv (c->sock, buf, sizeof buf - 1, fds, 1, &n_fds, &flags);
      if (got < 0)
        r = (int) got;
      else if (got == 0)
        r = -ECONNRESET;
      else if (flags != 0)
        r = -EPROTO;
    }
  if (r == 0)
    {
      char decode_why[128];
      r = st_nsh_decode_reply (buf, (size_t) got, reply, decode_why, sizeof decode_why);
      /* Id 0, not ok: the service refused the connection itself (too many
         of this user's), and hung up.  */
      if (r == 0 && reply->id == 0 && !reply->ok && n_fds == 0)
        {
          snprintf (why, why_size, "the helper refused the connection: %s", reply->message);
          st_warning ("namespace helper %s: %s", c->connected_to ? c->connected_to : "",
                      reply->message);
          disconnect (c, false);
          c->failed++;
          if (++c->restarts > MAX_RESTARTS)
            {
              c->disabled = true;
              snprintf (c->disabled_why, sizeof c->disabled_why, "%s", why);
            }
          return -(reply->error ? reply->error : ECONNREFUSED);
        }
      if (r == 0 && reply->id != req->id)
        r = -EPROTO;
      if (r == 0 && reply->ok != (n_fds == 1))
        r = -EPROTO;
    }
  if (r < 0 && was_idle && (r == -EPIPE || r == -ECONNRESET || r == -ENOTCONN))
    {
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      disconnect (c, false);
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
                       why, why_size);
      return r;
    }
  if (c->fresh)
    c->startup_ns += now_ns () - t0;
  else
    record_rtt (c, now_ns () - t0);
  c->fresh = false;
  if (n_fds == 1)
    {
      /* Trust, but check: a regular file opened read-only.  */
      struct stat st;
      int mode = fcntl (fds[0], F_GETFL);
      if (fstat (fds[0], &st) != 0 || !S_ISREG (st.st_mode) || mode < 0
          || (mode & O_ACCMODE) != O_RDONLY)
        {
          close (fds[0]);
          reply->ok = false;
          reply->error = EINVAL;
          snprintf (reply->message, sizeof reply->message,
                    "the helper sent something that is not a read-only regular file");
          return 0;
        }
      *fd = fds[0];
    }
  return 0;
}

/* What identifies process PID's view of the file system: its mount
   namespace, or the pid when that cannot be read.  */
static void
namespace_of (pid_t pid, char *out, size_t size)
{
  char path[64], link[64];
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  ssize_t n = readlink (path, link, sizeof link - 1);
  if (n > 0)
    {
      link[n] = '\0';
      snprintf (out, size, "%s", link);
    }
  else
    snprintf (out, size, "pid:%d", (int) pid);
}

/* The cache key: kind, namespace, path, then the build-id or inode.  */
static size_t
cache_key (char kind, const char *ns, const char *path, const uint8_t *build_id, size_t n,
           const uint64_t *ino, char *key, size_t size)
{
  int len = snprintf (key, size, "%c%s%c%s", kind, ns, '\0', path);
  size_t pos = len > 0 && (size_t) len < size ? (size_t) len + 1 : size;
  if (n > 0 && pos + n <= size)
    {
      memcpy (key + pos, build_id, n);
      pos += n;
    }
  else if (ino != NULL && pos + sizeof *ino <= size)
    {
      memcpy (key + pos, ino, sizeof *ino);
      pos += sizeof *ino;
    }
  return pos;
}

/* Hands out a cached answer: a dup of its descriptor, or its error.  */
static int
answer_use (const struct answer *a, const char **way, char **found_path, char *why,
            size_t why_size)
{
  if (a->fd < 0)
    {
      snprintf (why, why_size, "%s", a->why ? a->why : "?");
      return -a->error;
    }
  int fd = fcntl (a->fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    {
      snprintf (why, why_size, "dup: %s", strerror (errno));
      return -errno;
    }
  *way = st_nsh_way_name (a->way);
  if (found_path != NULL)
    *found_path = a->found_path ? strdup (a->found_path) : NULL;
  return fd;
}

/* Asks for REQ (PID's file of cache key KEY), caches the answer, hands it
   out.  */
static int
ask (struct st_ns_client *c, struct st_nsh_request *req, const char *key, size_t key_len,
     const char **way, char **found_path, char *why, size_t why_size)
{
  req->ways = c->ways;
  uint64_t start_time;
  if (st_proc_start_time (req->pid, &start_time))
    {
      req->has_start_time = true;
      req->start_time = start_time;
    }
  /* Proof that we may read the process, for a helper with privileges of
     its own: opening its ns/mnt took the ptrace read check.  */
  int ns_fd = -1;
  if (!c->root)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) req->pid);
      ns_fd = open (path, O_RDONLY | O_CLOEXEC);
      req->ns_fd = ns_fd >= 0;
    }
  struct st_nsh_reply reply;
  int fd;
  int r = round_trip (c, req, ns_fd, &reply, &fd, why, why_size);
  /* A helper that died (killed, crashed on an earlier request) is started
     again, and asked again, once: a request that itself kills helpers
     fails after two, and MAX_RESTARTS bounds them all.  */
  if (r < 0 && !c->disabled)
    r = round_trip (c, req, ns_fd, &reply, &fd, why, why_size);
  if (ns_fd >= 0)
    close (ns_fd);
  if (r < 0)
    return r;   /* not cached: a restarted helper may answer */
  struct answer *a = calloc (1, sizeof *a);
  if (a == NULL)
    {
      if (fd >= 0)
        close (fd);
      return -ENOMEM;
    }
  a->fd = fd;
  a->error = reply.ok ? 0 : reply.error;
  a->way = reply.way;
  a->why = reply.ok ? NULL : strdup (reply.message);
  a->found_path = reply.ok && reply.path[0] ? strdup (reply.path) : NULL;
  if (reply.ok)
    {
      c->found++;
      c->by_way[reply.way]++;
    }
  else
    c->not_found++;
  r = answer_use (a, way, found_path, why, why_size);
  if (st_hashmap_put (c->cache, key, key_len, a) < 0)
    answer_free (a);
  return r;
}

int
st_ns_client_open (struct st_ns_client *c, const struct st_mapping_request *req,
                   const char **way, char *why, size_t why_size)
{
  struct st_nsh_request q = { .op = ST_NSH_OP_OPEN, .pid = req->pid };
  /* The name a deleted file had: map_files finds it whatever its name.  */
  snprintf (q.path, sizeof q.path, "%s", req->path);
  size_t len = strlen (q.path);
  static const char deleted[] = " (deleted)";
  if (len > sizeof deleted - 1 && strcmp (q.path + len - (sizeof deleted - 1), deleted) == 0)
    q.path[len - (sizeof deleted - 1)] = '\0';
  if (q.path[0] != '/' || req->pid <= 0)
    {
      snprintf (why, why_size, "not a file of a process");
      return -EINVAL;
    }
  q.has_range = req->end > req->start;
  q.start = req->start;
  q.end = req->end;
  q.has_ino = req->has_dev_ino;
  q.ino = req->ino;
  q.build_id_size = req->build_id_size <= ST_NSH_BUILD_ID_MAX ? req->build_id_size : 0;
  memcpy (q.build_id, req->build_id, q.build_id_size);

  pthread_mutex_lock (&c->lock);
  char ns[64], key[ST_NSH_PATH_MAX + 160];
  namespace_of (req->pid, ns, sizeof ns);
  size_t key_len = cache_key ('F', ns, q.path, q.build_id, q.build_id_size,
                              q.has_ino ? &q.ino : NULL, key, sizeof key);
  struct answer *a = st_hashmap_get (c->cache, key, key_len);
  int r = a != NULL ? answer_use (a, way, NULL, why, why_size)
                    : ask (c, &q, key, key_len, way, NULL, why, why_size);
  pthread_mutex_unlock (&c->lock);
  return r;
}

int
st_ns_client_open_debuginfo (struct st_ns_client *c, pid_t pid, const char *path,
                             const uint8_t *build_id, size_t build_id_size,
                             const char *debuglink, char **found_path, const char **way,
                             char *why, size_t why_size)
{
  *found_path = NULL;
  if (build_id_size == 0 || build_id_size > ST_NSH_BUILD_ID_MAX || path[0] != '/')
    {
      snprintf (why, why_size, "no build-id to check a debuginfo file against");
      return -EINVAL;
    }
  struct st_nsh_request q = { .op = ST_NSH_OP_DEBUGINFO, .pid = pid };
  snprintf (q.path, sizeof q.path, "%s", path);
  memcpy (q.build_id, build_id, build_id_size);
  q.build_id_size = build_id_size;
  if (debuglink != NULL && strchr (debuglink, '/') == NULL)
    snprintf (q.debuglink, sizeof q.debuglink, "%s", debuglink);

  pthread_mutex_lock (&c->lock);
  char ns[64], key[ST_NSH_PATH_MAX + 160];
  namespace_of (pid, ns, sizeof ns);
  size_t key_len = cache_key ('D', ns, q.path, build_id, build_id_size, NULL, key, sizeof key);
  struct answer *a = st_hashmap_get (c->cache, key, key_len);
  int r = a != NULL ? answer_use (a, way, found_path, why, why_size)
                    : ask (c, &q, key, key_len, way, found_path, why, why_size);
  pthread_mutex_unlock (&c->lock);
  return r;
}

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

void
st_ns_client_print_summary (struct st_ns_client *c, FILE *out)
{
  pthread_mutex_lock (&c->lock);
  if (c->requests == 0 && !c->disabled)
    {
      pthread_mutex_unlock (&c->lock);
      return;
    }
  fprintf (out, "namespace helper:   %" PRIu64 " requests, %" PRIu64 " found (", c->requests,
           c->found);
  for (int i = 0; i < ST_NSH_WAY_N; i++)
    fprintf (out, "%s%s %" PRIu64, i ? ", " : "", st_nsh_way_name (i), c->by_way[i]);
  fprintf (out, "), %" PRIu64 " not found, %" PRIu64 " failed\n", c->not_found, c->failed);
  if (c->n_rtt > 0)
    {
      qsort (c->rtt_ns, c->n_rtt, sizeof *c->rtt_ns, compare_u64);
      uint64_t total = 0;
      for (size_t i = 0; i < c->n_rtt; i++)
        total += c->rtt_ns[i];
      size_t p99 = (c->n_rtt * 99 + 99) / 100 - 1;
      fprintf (out, "  round trips:      median %.1f us, p99 %.1f us, total %.3f ms\n",
               c->rtt_ns[c->n_rtt / 2] / 1e3, c->rtt_ns[p99] / 1e3, total / 1e6);
    }
  if (c->startup_ns > 0)
    fprintf (out, "  first replies:    %.3f ms (the helper starting, and its first request)\n",
             c->startup_ns / 1e6);
  if (c->reconnects > 0)
    fprintf (out, "  reconnected:      %u times (the service hung up while idle)\n",
             c->reconnects);
  if (c->restarts > 0)
    fprintf (out, "  lost:             %u times, started again %u times\n", c->restarts,
             c->restarts - (c->mode != MODE_SOCKET && c->disabled));
  if (c->disabled)
    fprintf (out, "  not available:    %s\n", c->disabled_why);
  pthread_mutex_unlock (&c->lock);
}

void
st_ns_client_free (struct st_ns_client *c)
{
  if (c == NULL)
    return;
  disconnect (c, false);
  st_hashmap_free (c->cache);
  pthread_mutex_destroy (&c->lock);
  free (c->socket_path);
  free (c->connected_to);
  free (c->rtt_ns);
  free (c);
}
