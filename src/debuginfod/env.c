/* The environment that libdebuginfod reads.
 *
 * libdebuginfod 0.188 takes its servers (DEBUGINFOD_URLS), its timeout
 * (DEBUGINFOD_TIMEOUT, 90 s by default) and its retries
 * (DEBUGINFOD_RETRY_LIMIT, 2 by default) from the environment at each
 * request; it has no other way to be told.  And libdwfl 0.188's
 * dwfl_standard_find_debuginfo, the host step of our find_debuginfo chain,
 * asks libdebuginfod on its own whenever the host has no debug file: with
 * those defaults, for every stripped library, once per module and Dwfl
 * (that is, per process and unwinding thread), outside any budget.  A server
 * that accepts and never answers then costs 3 x 90 s per module.
 *
 * So, under one lock: a host lookup runs with DEBUGINFOD_URLS empty
 * (libdebuginfod then returns ENOSYS at once, without touching the network
 * or its cache), and our own requests run with our servers, our timeout and
 * no retries.  Between the two the user's values are back, for the command
 * that live sampling starts and for anything else that reads them.
 *
 * setenv from one thread while others call getenv is safe in glibc only
 * when the variable exists already: the value is then one pointer that is
 * replaced, and the old string is kept.  Adding a variable may move the
 * whole array.  st_debuginfod_env_prepare, called before any thread starts,
 * adds the variables our requests set, each with a value that means the
 * same to libdebuginfod as its absence.  The environment is the process's:
 * so is this lock.  */
#include "config.h"

#include <elfutils/debuginfod.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfod/debuginfod.h"
#include "debuginfod/env.h"

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

/* The variables we set, what stands for "unset", and the user's values
   (captured once, under the lock).  */
static struct {
  const char *name;
  const char *as_if_unset;  /* libdebuginfod 0.188's default */
  char *user;               /* NULL: not set by the user */
} vars[] = {
  { DEBUGINFOD_URLS_ENV_VAR, "", NULL },
  { DEBUGINFOD_TIMEOUT_ENV_VAR, "90", NULL },
  { DEBUGINFOD_RETRY_LIMIT_ENV_VAR, "2", NULL },
};
enum { URLS, TIMEOUT, RETRY_LIMIT, N_VARS };
static bool captured;

static void
capture_locked (void)
{
  if (captured)
    return;
  for (int i = 0; i < N_VARS; i++)
    {
      const char *value = getenv (vars[i].name);
      vars[i].user = value != NULL ? strdup (value) : NULL;
    }
  captured = true;
}

/* The user's value, or the one that means the same.  */
static const char *
user_value (int i)
{
  return vars[i].user != NULL ? vars[i].user : vars[i].as_if_unset;
}

void
st_debuginfod_env_prepare (void)
{
  pthread_mutex_lock (&env_lock);
  capture_locked ();
  for (int i = 0; i < N_VARS; i++)
    if (getenv (vars[i].name) == NULL)
      setenv (vars[i].name, vars[i].as_if_unset, 1);
  pthread_mutex_unlock (&env_lock);
}

void
st_debuginfod_env_begin_host (void)
{
  pthread_mutex_lock (&env_lock);
  capture_locked ();
  /* Set only when there is something to hide: without our client and
     without the user's DEBUGINFOD_URLS, nothing ever adds it.  */
  const char *urls = getenv (DEBUGINFOD_URLS_ENV_VAR);
  if (urls != NULL && urls[0] != '\0')
    setenv (DEBUGINFOD_URLS_ENV_VAR, "", 1);
}

void
st_debuginfod_env_end_host (void)
{
  const char *urls = getenv (DEBUGINFOD_URLS_ENV_VAR);
  if (urls != NULL && strcmp (urls, user_value (URLS)) != 0)
    setenv (DEBUGINFOD_URLS_ENV_VAR, user_value (URLS), 1);
  pthread_mutex_unlock (&env_lock);
}

void
st_debuginfod_env_begin_request (const char *urls, unsigned timeout)
{
  pthread_mutex_lock (&env_lock);
  capture_locked ();
  char seconds[16];
  snprintf (seconds, sizeof seconds, "%u", timeout);
  setenv (DEBUGINFOD_URLS_ENV_VAR, urls, 1);
  setenv (DEBUGINFOD_TIMEOUT_ENV_VAR, seconds, 1);
  /* A server that did not answer is not asked again (the client marks it
     down): retries would only multiply the wait.  */
  setenv (DEBUGINFOD_RETRY_LIMIT_ENV_VAR, "0", 1);
}

void
st_debuginfod_env_end_request (void)
{
  for (int i = 0; i < N_VARS; i++)
    setenv (vars[i].name, user_value (i), 1);
  pthread_mutex_unlock (&env_lock);
}
