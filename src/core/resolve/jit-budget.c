#include "config.h"

#include <stdlib.h>

#include "basic/hashmap.h"
#include "core/resolve/jit-budget.h"

struct user {
  uint64_t held;           /* bytes read into maps still there */
  uint64_t tokens;         /* bytes that may be read now, at most the burst */
  uint64_t refilled_ns;    /* when TOKENS was last brought up to date */
  bool refused;            /* a read of this user's was refused */
};

struct st_jit_budget {
  struct st_hashmap *users;      /* uid -> user */
  uid_t unbudgeted;
  uint64_t reads_refused;
  unsigned users_refused;
  bool warned;
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
  return b;
}

void
st_jit_budget_free (struct st_jit_budget *b)
{
  if (b == NULL)
    return;
  st_hashmap_free (b->users);
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

uint64_t
st_jit_budget_available (struct st_jit_budget *b, uid_t uid, uint64_t now_ns)
{
  if (uid == b->unbudgeted)
    return UINT64_MAX;
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

void
st_jit_budget_charge (struct st_jit_budget *b, uid_t uid, uint64_t held, uint64_t read)
{
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u == NULL)
    return;
  u->held += held;
  u->tokens -= read < u->tokens ? read : u->tokens;
}

void
st_jit_budget_give_back (struct st_jit_budget *b, uid_t uid, uint64_t bytes)
{
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u == NULL)
    return;
  u->held -= bytes < u->held ? bytes : u->held;
}

bool
st_jit_budget_refused (struct st_jit_budget *b, uid_t uid)
{
  b->reads_refused++;
  struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  if (u != NULL && !u->refused)
    {
      u->refused = true;
      b->users_refused++;
    }
  bool first = !b->warned;
  b->warned = true;
  return first;
}

uint64_t
st_jit_budget_reads_refused (const struct st_jit_budget *b)
{
  return b->reads_refused;
}

unsigned
st_jit_budget_users_refused (const struct st_jit_budget *b)
{
  return b->users_refused;
}

uint64_t
st_jit_budget_held (const struct st_jit_budget *b, uid_t uid)
{
  const struct user *u = st_hashmap_get_u64 (b->users, (uint32_t) uid);
  return u != NULL ? u->held : 0;
}
