#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "core/resolve/ns-client-private.h"
#include "core/resolve/ns-client.h"

/* One cached answer: a descriptor (ours; callers get dups) or an error.  */
struct answer {
  int fd;
  int error;
  enum st_nsh_way way;
  char *why;
  char *found_path;
  uint64_t used;           /* the client's clock when last asked for */
  bool pinned;             /* a file the helper failed on: never forgotten */
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

int
st_ns_client_new (const char *mode, struct st_ns_client **out)
{
  *out = NULL;
  if (mode == NULL || strcmp (mode, "none") == 0)
    return 0;
  _cleanup_free_ struct st_ns_client *c = calloc (1, sizeof *c);
  if (c == NULL)
    return -ENOMEM;
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
  c->cache_sweep_at = ST_NS_CACHE_KEPT;
  if (c->cache == NULL || (c->mode == MODE_SOCKET && c->socket_path == NULL))
    {
      st_hashmap_free (c->cache);
      free (c->socket_path);
      return -ENOMEM;
    }
  pthread_mutex_init (&c->lock, NULL);
  *out = ST_TAKE_PTR (c);
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
answer_use (const struct answer *a, const char **way, char **found_path, struct st_why *why)
{
  if (a->fd < 0)
    {
      return st_why_set (why, a->error, "%s", a->why ? a->why : "?");
    }
  int fd = fcntl (a->fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    {
      int e = errno;
      return st_why_set (why, e, "dup: %s", strerror (e));
    }
  *way = st_nsh_way_name (a->way);
  if (found_path != NULL)
    *found_path = a->found_path ? strdup (a->found_path) : NULL;
  return fd;
}

/* The answer REPLY (with descriptor FD, or -1) gives, counted; NULL (FD
   closed) when out of memory.  */
static struct answer *
answer_keep (struct st_ns_client *c, const struct st_nsh_reply *reply, int fd)
{
  struct answer *a = calloc (1, sizeof *a);
  if (a == NULL)
    {
      if (fd >= 0)
        close (fd);
      return NULL;
    }
  a->fd = fd;
  a->error = reply->ok ? 0 : reply->error;
  a->way = reply->way;
  a->why = reply->ok ? NULL : strdup (reply->message);
  a->found_path = reply->ok && reply->path[0] ? strdup (reply->path) : NULL;
  if (reply->ok)
    {
      c->found++;
      c->by_way[reply->way]++;
    }
  else
    c->not_found++;
  return a;
}

/* For st_hashmap_evict_oldest: any answer may go but a pinned one.  */
static bool
unpinned_age (const void *value, uint64_t *used)
{
  const struct answer *a = value;
  *used = a->used;
  return !a->pinned;
}

/* Forgets the answers beyond the ST_NS_CACHE_KEPT asked for last (but
   the pinned ones), closing their descriptors: the resolver holds the
   files it uses, and a file asked for again is asked of the helper again.
   Out of memory, it forgets nothing.  */
static void
cache_forget_old (struct st_ns_client *c)
{
  c->forgotten += st_hashmap_evict_oldest (c->cache, ST_NS_CACHE_KEPT, unpinned_age, NULL);
  c->cache_sweep_at = st_hashmap_size (c->cache) + ST_NS_CACHE_KEPT;
}

/* Caches A under KEY, as the answer asked for last (A is freed when it
   cannot be kept).  */
static void
cache_put (struct st_ns_client *c, const char *key, size_t key_len, struct answer *a)
{
  a->used = ++c->clock;
  if (st_hashmap_put (c->cache, key, key_len, a) < 0)
    {
      answer_free (a);
      return;
    }
  if (st_hashmap_size (c->cache) > c->cache_sweep_at)
    cache_forget_old (c);
}

/* The cached answer at KEY, now the one asked for last, or NULL.  */
static struct answer *
cache_get (struct st_ns_client *c, const char *key, size_t key_len)
{
  struct answer *a = st_hashmap_get (c->cache, key, key_len);
  if (a != NULL)
    a->used = ++c->clock;
  return a;
}

/* The process's start time, which the helper checks the pid against (a
   pid reused since is another process).  */
static void
add_start_time (struct st_nsh_request *req)
{
  uint64_t start_time;
  if (st_proc_start_time (req->pid, &start_time))
    {
      req->has_start_time = true;
      req->start_time = start_time;
    }
}

/* Asks for REQ (PID's file of cache key KEY), caches the answer, hands it
   out.  */
static int
ask (struct st_ns_client *c, struct st_nsh_request *req, const char *key, size_t key_len,
     const char **way, char **found_path, struct st_why *why)
{
  req->ways = c->ways;
  add_start_time (req);
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
  int r = st_ns_round_trip (c, req, ns_fd, &reply, &fd, why);
  /* A helper that died (killed, crashed on an earlier request) is started
     again, and asked again, once: a request that itself kills helpers
     fails after two, and MAX_RESTARTS bounds them all.  */
  if (r < 0 && !c->disabled)
    r = st_ns_round_trip (c, req, ns_fd, &reply, &fd, why);
  if (ns_fd >= 0)
    close (ns_fd);
  if (r < 0)
    return r;   /* not cached: a restarted helper may answer */
  struct answer *a = answer_keep (c, &reply, fd);
  if (a == NULL)
    return -ENOMEM;
  r = answer_use (a, way, found_path, why);
  cache_put (c, key, key_len, a);
  return r;
}

/* The helper's request for the file REQ maps, in *Q, and its cache key
   in KEY (of ST_NSH_PATH_MAX + 160 bytes); returns the key's length, or 0
   when REQ is no file of a process.  */
static size_t
open_request (const struct st_mapping_request *req, struct st_nsh_request *q, char *key)
{
  *q = (struct st_nsh_request) { .op = ST_NSH_OP_OPEN, .pid = req->pid };
  /* The name a deleted file had: map_files finds it whatever its name.  */
  snprintf (q->path, sizeof q->path, "%s", req->path);
  size_t len = strlen (q->path);
  static const char deleted[] = " (deleted)";
  if (len > sizeof deleted - 1 && strcmp (q->path + len - (sizeof deleted - 1), deleted) == 0)
    q->path[len - (sizeof deleted - 1)] = '\0';
  if (q->path[0] != '/' || req->pid <= 0)
    return 0;
  q->has_range = req->end > req->start;
  q->start = req->start;
  q->end = req->end;
  q->has_ino = req->has_dev_ino;
  q->ino = req->ino;
  q->build_id_size = req->build_id_size <= ST_NSH_BUILD_ID_MAX ? req->build_id_size : 0;
  memcpy (q->build_id, req->build_id, q->build_id_size);
  char ns[64];
  namespace_of (req->pid, ns, sizeof ns);
  return cache_key ('F', ns, q->path, q->build_id, q->build_id_size,
                    q->has_ino ? &q->ino : NULL, key, ST_NSH_PATH_MAX + 160);
}

int
st_ns_client_open (struct st_ns_client *c, const struct st_mapping_request *req,
                   const char **way, struct st_why *why)
{
  struct st_nsh_request q;
  char key[ST_NSH_PATH_MAX + 160];
  size_t key_len = open_request (req, &q, key);
  if (key_len == 0)
    {
      return st_why_set (why, EINVAL, "not a file of a process");
    }

  pthread_mutex_lock (&c->lock);
  struct answer *a = cache_get (c, key, key_len);
  int r = a != NULL ? answer_use (a, way, NULL, why)
                    : ask (c, &q, key, key_len, way, NULL, why);
  pthread_mutex_unlock (&c->lock);
  return r;
}

int
st_ns_client_open_debuginfo (struct st_ns_client *c, pid_t pid, const char *path,
                             const uint8_t *build_id, size_t build_id_size,
                             const char *debuglink, char **found_path, const char **way,
                             struct st_why *why)
{
  *found_path = NULL;
  if (build_id_size == 0 || build_id_size > ST_NSH_BUILD_ID_MAX || path[0] != '/')
    {
      return st_why_set (why, EINVAL, "no build-id to check a debuginfo file against");
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
  struct answer *a = cache_get (c, key, key_len);
  int r = a != NULL ? answer_use (a, way, found_path, why)
                    : ask (c, &q, key, key_len, way, found_path, why);
  pthread_mutex_unlock (&c->lock);
  return r;
}

static int
compare_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Whether Q fits in a message whatever its id: a name of control bytes,
   each written as \u00XX, may not.  One that does not is asked alone,
   which reports it as its own failure.  */
static bool
encodes (const struct st_nsh_request *q)
{
  char buf[ST_NSH_MAX_MESSAGE + 1];
  struct st_nsh_request longest = *q;
  longest.id = UINT64_MAX;
  return st_nsh_encode_request (&longest, buf, sizeof buf) >= 0;
}

/* The helper's refusals that say "not now" rather than "no": what a
   batch may meet (replies unread, too many descriptors in flight) and a
   request alone would not.  */
static bool
is_transient (int error)
{
  return error == EBUSY || error == ETOOMANYREFS || error == EMFILE || error == ENFILE
         || error == EAGAIN || error == EINTR;
}

bool
st_ns_client_batches (struct st_ns_client *c)
{
  if (c == NULL || !c->root)
    return false;
  pthread_mutex_lock (&c->lock);
  struct stat st;
  bool yes = !c->disabled
             && (c->sock >= 0 ? c->child > 0
                 : c->mode == MODE_SPAWN
                   || (c->mode == MODE_AUTO
                       && !(stat (ST_NSH_SYSTEM_SOCKET, &st) == 0 && S_ISSOCK (st.st_mode))));
  pthread_mutex_unlock (&c->lock);
  return yes;
}

/* st_ns_client_prefetch's requests, their replies and cache keys: some
   10 KiB each, on the heap rather than a worker thread's stack.  */
struct prefetch {
  struct st_nsh_request q[ST_NS_PREFETCH_MAX];
  struct st_nsh_reply replies[ST_NS_PREFETCH_MAX];
  int fds[ST_NS_PREFETCH_MAX];
  char keys[ST_NS_PREFETCH_MAX][ST_NSH_PATH_MAX + 160];
  size_t key_len[ST_NS_PREFETCH_MAX];
};

void
st_ns_client_prefetch (struct st_ns_client *c, const struct st_mapping_request *reqs, size_t n)
{
  if (c == NULL || !c->root || n < 2)
    return;
  if (n > ST_NS_PREFETCH_MAX)
    n = ST_NS_PREFETCH_MAX;
  _cleanup_free_ struct prefetch *b = malloc (sizeof *b);
  if (b == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    {
      b->key_len[m] = open_request (&reqs[i], &b->q[m], b->keys[m]);
      if (b->key_len[m] == 0 || st_hashmap_get (c->cache, b->keys[m], b->key_len[m]) != NULL)
        continue;
      bool twice = false;
      for (size_t j = 0; j < m && !twice; j++)
        twice = b->key_len[j] == b->key_len[m]
                && memcmp (b->keys[j], b->keys[m], b->key_len[m]) == 0;
      b->q[m].ways = c->ways;
      add_start_time (&b->q[m]);
      if (!twice && encodes (&b->q[m]))
        m++;
    }
  struct st_why why = { 0 };
  /* A service's connection, or none to be had, and the files are asked
     for one at a time, as without this.  */
  size_t answered = 0;
  bool lost = false;
  if (m >= 2 && st_ns_connect (c, false, &why) == 0 && c->child > 0)
    {
      answered = st_ns_round_trips (c, b->q, m, b->replies, b->fds, &lost, &why);
      c->prefetches++;
    }
  for (size_t i = 0; i < answered; i++)
    {
      /* The helper's "no" is kept as its "yes" is, but for the refusals
         that only a batch meets (its replies unread, descriptors in
         flight): the file's own request, later, asks again.  */
      if (!b->replies[i].ok && is_transient (b->replies[i].error))
        continue;
      c->requests++;
      c->prefetched++;
      struct answer *a = answer_keep (c, &b->replies[i], b->fds[i]);
      if (a != NULL)
        cache_put (c, b->keys[i], b->key_len[i], a);
    }
  /* The helper failed (stalled past the timeout, or died) on the request
     after the last answered: that file is not asked for again, as a
     one-at-a-time request that failed twice is not; the helper is
     started again for the others.  (Asked again, a file that stalls
     the helper would cost a second timeout and a second restart, and a
     few such files, which any user can plant, would give up the helper
     for every container of the run.)  */
  if (lost && answered < m)
    {
      struct answer *a = calloc (1, sizeof *a);
      if (a != NULL)
        {
          a->fd = -1;
          a->error = EIO;
          a->why = strdup (why.text);
          /* Never asked again, however many files come after: each ask
             would cost a timeout and a restart of the helper.  At most
             MAX_RESTARTS + 1 such answers.  */
          a->pinned = true;
          cache_put (c, b->keys[answered], b->key_len[answered], a);
        }
    }
  pthread_mutex_unlock (&c->lock);
}

void
st_ns_client_prepare (struct st_ns_client *c)
{
  if (c == NULL)
    return;
  struct st_why why = { 0 };
  pthread_mutex_lock (&c->lock);
  if (st_ns_connect (c, true, &why) < 0)
    st_debug ("namespace helper: not started ahead: %s", why.text);
  pthread_mutex_unlock (&c->lock);
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
  if (c->prefetches > 0)
    fprintf (out, "  asked together:   %" PRIu64 " files in %" PRIu64
             " batches (a process's files, %d requests in flight)\n",
             c->prefetched, c->prefetches, ST_NS_PIPELINE_WINDOW);
  if (c->startup_ns > 0)
    fprintf (out, "  first replies:    %.3f ms (the first request, and the helper's start or what was left of it)\n",
             c->startup_ns / 1e6);
  if (c->forgotten > 0)
    fprintf (out, "  answers forgotten: %" PRIu64 " (the %d asked for last are kept, each with "
             "its descriptor)\n", c->forgotten, ST_NS_CACHE_KEPT);
  if (c->reconnects > 0)
    fprintf (out, "  reconnected:      %u times (the service hung up while idle)\n",
             c->reconnects);
  if (c->restarts > 0)
    fprintf (out, "  lost:             %u times, started again %u times\n", c->restarts,
             c->restarts - (c->mode != MODE_SOCKET && c->disabled));
  if (c->disabled)
    fprintf (out, "  not available:    %s\n", c->disabled_why.text);
  pthread_mutex_unlock (&c->lock);
}

void
st_ns_client_free (struct st_ns_client *c)
{
  if (c == NULL)
    return;
  /* A helper started ahead and never asked anything is still setting
     up, maybe: waiting for it to see the hang-up and end cost a short
     run 40 ms.  It holds nothing: killed (its processes follow it, by
     their parent-death signal).  */
  st_ns_disconnect (c, c->fresh && c->child > 0);
  st_hashmap_free (c->cache);
  pthread_mutex_destroy (&c->lock);
  free (c->socket_path);
  free (c->connected_to);
  free (c->rtt_ns);
  free (c);
}
