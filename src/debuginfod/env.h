/* Inside src/debuginfod/ only: the environment that libdebuginfod reads,
 * set for our own requests.  See env.c.  */
#pragma once

/* Makes sure every variable a request sets exists, so that setting it
   from a thread later only replaces a value.  Before any thread starts.  */
void st_debuginfod_env_prepare (void);

/* Around one of our requests: the lock is held, and libdebuginfod sees
   URLS, TIMEOUT seconds and no retries.  End restores the user's values. */
void st_debuginfod_env_begin_request (const char *urls, unsigned timeout);
void st_debuginfod_env_end_request (void);
