#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns-helper/pool.h"

void
st_pool_init (struct st_pool *pool)
{
  memset (pool, 0, sizeof *pool);
  for (size_t i = 0; i < ST_POOL_MAX; i++)
    pool->w[i].sock = -1;
}

static void
worker_drop (struct st_pool_worker *w)
{
  /* Its socket closed, the worker exits.  */
  if (w->sock >= 0)
    close (w->sock);
  w->sock = -1;
}

static bool
same_key (const struct st_pool_key *a, const struct st_pool_key *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->user_dev == b->user_dev
         && a->user_ino == b->user_ino;
}

static struct st_pool_worker *
find (struct st_pool *pool, const struct st_pool_key *key)
{
  for (size_t i = 0; i < ST_POOL_MAX; i++)
    if (pool->w[i].sock >= 0 && same_key (&pool->w[i].key, key))
      return &pool->w[i];
  return NULL;
}

static long long
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec;
}

/* Did a worker hang in KEY's namespace less than ST_POOL_HUNG_S ago?  */
static bool
hung (const struct st_pool *pool, const struct st_pool_key *key)
{
  long long now = now_s ();
  for (size_t i = 0; i < ST_POOL_MAX; i++)
    if (pool->hung[i].until > now && same_key (&pool->hung[i].key, key))
      return true;
  return false;
}

/* A worker hung in KEY's namespace: in place of the entry that ends
   first.  */
static void
mark_hung (struct st_pool *pool, const struct st_pool_key *key)
{
  size_t first = 0;
  for (size_t i = 1; i < ST_POOL_MAX; i++)
    if (pool->hung[i].until < pool->hung[first].until)
      first = i;
  pool->hung[first].key = *key;
  pool->hung[first].until = now_s () + ST_POOL_HUNG_S;
}

/* A free entry, or the least recently used one, let go.  */
static struct st_pool_worker *
free_entry (struct st_pool *pool)
{
  struct st_pool_worker *lru = &pool->w[0];
  for (size_t i = 0; i < ST_POOL_MAX; i++)
    {
      if (pool->w[i].sock < 0)
        return &pool->w[i];
      if (pool->w[i].last_use < lru->last_use)
        lru = &pool->w[i];
    }
  worker_drop (lru);
  return lru;
}

int
st_pool_open (struct st_pool *pool, struct st_broker *b, const struct st_pin *pin,
              int userns_fd, const char *const *paths, size_t n, int *fds, int *errs)
{
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = -1;
      errs[i] = EIO;
    }
  /* The namespace's dev and ino were taken once, with the pin.  */
  struct stat user;
  if (userns_fd >= 0 && fstat (userns_fd, &user) != 0)
    return -errno;
  struct st_pool_key key = { .dev = pin->mnt_dev, .ino = pin->mnt_ino };
  if (userns_fd >= 0)
    {
      key.user_dev = user.st_dev;
      key.user_ino = user.st_ino;
    }
  if (hung (pool, &key))
    return -ETIME;
  struct st_pool_worker *w = find (pool, &key);
  bool gone;
  if (w != NULL)
    {
      int r = st_broker_worker_open (w->sock, paths, n, fds, errs, &gone);
      if (r == -ETIMEDOUT)
        mark_hung (pool, &key);
      if (r == 0 || (r != -EPIPE && r != -ECONNRESET && r != -ENOTCONN))
        {
          /* Served, or broken (a timeout, nonsense): given up either way
             when it says so or did not answer.  */
          if (r < 0 || gone)
            worker_drop (w);
          else
            {
              w->last_use = ++pool->clock;
              pool->reused++;
            }
          return r;
        }
      /* It exited (its process did, or it was idle) before it read the
         job: start another.  */
      worker_drop (w);
    }
  w = free_entry (pool);
  int sock;
  int r = st_broker_spawn (b, pin->mnt_fd, userns_fd, pin->pidfd, &sock);
  if (r < 0)
    return r;
  pool->started++;
  r = st_broker_worker_open (sock, paths, n, fds, errs, &gone);
  if (r == -ETIMEDOUT)
    mark_hung (pool, &key);
  if (r == -ECONNRESET || r == -EPIPE)
    {
      /* Its process exited as it started (it then serves nothing): this
         job in a worker of its own, in the namespace the pin keeps.  */
      close (sock);
      return st_broker_open (b, pin->mnt_fd, userns_fd, paths, n, fds, errs);
    }
  if (r < 0 || gone)
    {
      close (sock);
      return r;
    }
  *w = (struct st_pool_worker) { .sock = sock, .key = key, .last_use = ++pool->clock };
  return 0;
}
