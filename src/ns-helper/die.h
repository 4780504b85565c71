/* The helper's last word: "eu-stacktrace-ns-helper: WHO: message" on
 * stderr, then exit(EXIT_FAILURE).  For the start-up (main.c) and the
 * parser, whose failures end the connection.  */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* WHO may be NULL (the helper as a whole).  FMT may use %m.  */
static inline void __attribute__ ((noreturn, format (printf, 2, 3)))
st_nsh_die (const char *who, const char *fmt, ...)
{
  int e = errno;
  va_list ap;
  va_start (ap, fmt);
  fprintf (stderr, "eu-stacktrace-ns-helper: %s%s", who ? who : "", who ? ": " : "");
  errno = e;   /* for %m */
  vfprintf (stderr, fmt, ap);
  fputc ('\n', stderr);
  va_end (ap);
  exit (EXIT_FAILURE);
}
