#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "basic/hashmap.h"
#include "core/resolve/jit-budget.h"

struct user {
  uint64_t held;           /* bytes read into maps still there */
  uint64_t tokens;         /* bytes that may be read now, at most the burst */
  uint64_t refilled_ns;    /* when TOKENS was last brought up to date */
  bool refused;            /* a read of this user's was refused */
  unsigned kept;           /* files its processes' maps keep open */
};

struct st_jit_budget {
  /* The unwinding threads share one budget: a user's process moves
     between them, and a budget each would multiply the user's.  */
  pthread_mutex_t lock;
  struct st_hashmap *users;      /* uid -> user */
  uid_t unbudgeted;
  uint64_t reads_refused;
  unsigned users_refused;
  unsigned kept;                 /* files kept open, all users' */
  bool warned, warned_dumps;
};

struct st_jit_budget *
st_jit_budget_new (uid_t unbudgeted)
{
  struct st_jit_budget *b = calloc (1, sizeof *b);
  if (b == NULL)
    return NULL;
  b->unbudgeted = unbudgeted;
  b->users = st_hashmap_new (free);
  if (b->users == NULL)
    {
      free (b);
      return NULL;
    }
  pthread_mutex_init (&b->lock, NULL);
  return b;
}

void
st_jit_budget_free (struct st_jit_budget *b)
{
  if (b == NULL)
    return;
  st_hashmap_free (b->users);
  pthread_mutex_destroy (&b->lock);
  free (b);
}

/* UID's entry, NULL without memory.  There is one per user whose JIT file
   was read: users, not processes, so no entry is ever removed.  */
static struct user *
user_of (struct st_jit_budget *b, uid_t uid, uint64_t now_ns)
{
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL)
    return u;
  u = calloc (1, sizeof *u);
  if (u == NULL)
    return NULL;
  u->tokens = ST_JIT_USER_BURST_BYTES;
  u->refilled_ns = now_ns;
  if (st_hashmap_put_u64 (b->users, (uint32_t) uid, u) < 0)
    {
      free (u);
      return NULL;
    }
  return u;
}

/* What UID may read at NOW_NS; B is locked.  */
static uint64_t
available_locked (struct st_jit_budget *b, uid_t uid, uint64_t now_ns)
{
  struct user *u = user_of (b, uid, now_ns);
  if (u == NULL)
    return 0;
  if (now_ns > u->refilled_ns)
    {
      /* In whole microseconds, so that the product stays far from
         overflowing whatever time has passed.  */
      uint64_t us = (now_ns - u->refilled_ns) / 1000;
      uint64_t room = ST_JIT_USER_BURST_BYTES - u->tokens;
      uint64_t more = us >= 1000000 * (uint64_t) (ST_JIT_USER_BURST_BYTES / ST_JIT_USER_RATE_BYTES)
                        ? room
                        : us * ST_JIT_USER_RATE_BYTES / 1000000;
      u->tokens += more < room ? more : room;
      u->refilled_ns += us * 1000;
    }
  uint64_t unheld = u->held < ST_JIT_USER_HELD_BYTES ? ST_JIT_USER_HELD_BYTES - u->held : 0;
  return u->tokens < unheld ? u->tokens : unheld;
}

uint64_t
st_jit_budget_available (struct st_jit_budget *b, uid_t uid, uint64_t now_ns)
{
  if (uid == b->unbudgeted)
    return UINT64_MAX;
  pthread_mutex_lock (&b->lock);
  uint64_t n = available_locked (b, uid, now_ns);
  pthread_mutex_unlock (&b->lock);
  return n;
}

uint64_t
st_jit_budget_reserve (struct st_jit_budget *b, uid_t uid, uint64_t want, uint64_t now_ns)
{
  if (uid == b->unbudgeted)
    return want;
  pthread_mutex_lock (&b->lock);
  uint64_t n = available_locked (b, uid, now_ns);
  if (n > want)
    n = want;
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL)
    {
      u->held += n;
      u->tokens -= n;
    }
  pthread_mutex_unlock (&b->lock);
  return n;
}

void
st_jit_budget_charge (struct st_jit_budget *b, uid_t uid, uint64_t reserved, uint64_t held,
                      uint64_t read)
{
  pthread_mutex_lock (&b->lock);
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL)
    {
      /* The reservation undone, then what was done charged.  */
      u->held -= reserved < u->held ? reserved : u->held;
      u->tokens += reserved;
      if (u->tokens > ST_JIT_USER_BURST_BYTES)
        u->tokens = ST_JIT_USER_BURST_BYTES;
      u->held += held;
      u->tokens -= read < u->tokens ? read : u->tokens;
    }
  pthread_mutex_unlock (&b->lock);
}

static void
give_back_locked (struct st_jit_budget *b, uid_t uid, uint64_t bytes)
{
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL)
    u->held -= bytes < u->held ? bytes : u->held;
}

void
st_jit_budget_give_back (struct st_jit_budget *b, uid_t uid, uint64_t bytes)
{
  pthread_mutex_lock (&b->lock);
  give_back_locked (b, uid, bytes);
  pthread_mutex_unlock (&b->lock);
}

void
st_jit_budget_move (struct st_jit_budget *b, uid_t from, uid_t to, uint64_t bytes,
                    uint64_t now_ns)
{
  pthread_mutex_lock (&b->lock);
  give_back_locked (b, from, bytes);
  if (to != b->unbudgeted)
    {
      struct user *u = user_of (b, to, now_ns);
      if (u != NULL)
        u->held += bytes;
    }
  pthread_mutex_unlock (&b->lock);
}

bool
st_jit_budget_keep_file (struct st_jit_budget *b, uid_t uid)
{
  pthread_mutex_lock (&b->lock);
  struct user *u = user_of (b, uid, 0);
  bool keep = u != NULL && u->kept < ST_JIT_USER_KEPT_FILES && b->kept < ST_JIT_KEPT_FILES;
  if (keep)
    u->kept++, b->kept++;
  pthread_mutex_unlock (&b->lock);
  return keep;
}

void
st_jit_budget_let_go_file (struct st_jit_budget *b, uid_t uid)
{
  pthread_mutex_lock (&b->lock);
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL && u->kept > 0 && b->kept > 0)
    u->kept--, b->kept--;
  pthread_mutex_unlock (&b->lock);
}

unsigned
st_jit_budget_kept (struct st_jit_budget *b, uid_t uid)
{
  pthread_mutex_lock (&b->lock);
  const struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  unsigned n = u != NULL ? u->kept : 0;
  pthread_mutex_unlock (&b->lock);
  return n;
}

bool
st_jit_budget_refused (struct st_jit_budget *b, uid_t uid)
{
  pthread_mutex_lock (&b->lock);
  b->reads_refused++;
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL && !u->refused)
    {
      u->refused = true;
      b->users_refused++;
    }
  bool first = !b->warned;
  b->warned = true;
  pthread_mutex_unlock (&b->lock);
  return first;
}

bool
st_jit_budget_dump_refused (struct st_jit_budget *b)
{
  pthread_mutex_lock (&b->lock);
  bool first = !b->warned_dumps;
  b->warned_dumps = true;
  pthread_mutex_unlock (&b->lock);
  return first;
}

/* The counts below are read when the unwinding threads may still run
   (--stats of a live run is printed after they stop, but tests read them
   any time): under the lock too.  */
uint64_t
st_jit_budget_reads_refused (struct st_jit_budget *b)
{
  pthread_mutex_lock (&b->lock);
  uint64_t n = b->reads_refused;
  pthread_mutex_unlock (&b->lock);
  return n;
}

unsigned
st_jit_budget_users_refused (struct st_jit_budget *b)
{
  pthread_mutex_lock (&b->lock);
  unsigned n = b->users_refused;
  pthread_mutex_unlock (&b->lock);
  return n;
}

uint64_t
st_jit_budget_held (struct st_jit_budget *b, uid_t uid)
{
  pthread_mutex_lock (&b->lock);
  const struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  uint64_t n = u != NULL ? u->held : 0;
  pthread_mutex_unlock (&b->lock);
  return n;
}
