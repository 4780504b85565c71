/* libdebuginfod, opened at the client's first request, not linked: it
 * brings libcurl, GnuTLS, Kerberos and LDAP (27 more libraries), whose
 * loading and constructors were half of the start-up time of every run,
 * with debuginfod or without (and, opened when the client was made, about
 * 5 ms of CPU of every run with debuginfod on).  */
#pragma once

#include <elfutils/debuginfod.h>

struct st_debuginfod_lib {
  debuginfod_client *(*begin) (void);
  void (*end) (debuginfod_client *);
  void *(*get_user_data) (debuginfod_client *);
  void (*set_user_data) (debuginfod_client *, void *);
  const char *(*get_url) (debuginfod_client *);
  void (*set_progressfn) (debuginfod_client *, debuginfod_progressfn_t);
  int (*find_debuginfo) (debuginfod_client *, const unsigned char *, int, char **);
  int (*find_executable) (debuginfod_client *, const unsigned char *, int, char **);
};

/* Opens the library once and hands out its functions, all of them set:
   0, or -ENOENT (the library or one of its functions is missing, said on
   stderr).  Not thread-safe: the client calls it under its lock.  */
int st_debuginfod_lib_load (const struct st_debuginfod_lib **out);
