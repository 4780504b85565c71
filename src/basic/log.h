/* Diagnostics: one place that decides what reaches stderr.
 *
 * Messages carry the program name, like every GNU tool, and the verbosity
 * comes from -v or ELFUTILS_STACKTRACE_VERBOSE so that Sysprof, which cannot
 * pass options through its pipeline, can still ask for them.
 *
 * A message is written with its control characters escaped
 * (st_log_write_escaped): what it names may be anyone's.  */
#pragma once

#include <stdarg.h>
#include <stdio.h>

enum st_log_level {
  ST_LOG_ERROR = 0,
  ST_LOG_WARNING = 1,
  ST_LOG_INFO = 2,   /* -v */
  ST_LOG_DEBUG = 3,  /* -vv or --debug */
};

void st_log_set_level (int level);
int st_log_get_level (void);
void st_log (enum st_log_level level, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
/* TEXT's LEN bytes to OUT, its control characters (C0, DEL, C1) as \xNN:
   for what else writes names anyone may choose to a terminal (--stats,
   progress lines).  */
void st_log_write_escaped (FILE *out, const char *text, size_t len);

#define st_error(...) st_log (ST_LOG_ERROR, __VA_ARGS__)
#define st_warning(...) st_log (ST_LOG_WARNING, __VA_ARGS__)
#define st_info(...) st_log (ST_LOG_INFO, __VA_ARGS__)
#define st_debug(...) st_log (ST_LOG_DEBUG, __VA_ARGS__)
