/* The one failure convention of the tree.
 *
 * A function that can fail returns 0 (or a count) on success and -errno on
 * failure; constructors return int and hand the object out through a
 * pointer parameter, so "none" (a positive answer, often 0 with *out NULL)
 * and "failed" (-ENOMEM, ...) can never be confused.  When the caller needs
 * more than the errno to say what went wrong (a path, a record, a field),
 * the function also takes a struct st_why *, which may be NULL, and fills it
 * with st_why_set/st_why_at in the same statement that returns:
 *
 *   return st_why_set (why, EBADMSG, "%s: no ELF header", path);
 *
 * st_why is small and lives on the caller's stack; its text never includes
 * the errno string (the caller prints "TEXT: strerror(-ret)" when it wants
 * it), and OFFSET says where in an input file it happened.  */
#pragma once

#include <stdarg.h>
#include <stdint.h>

#define ST_WHY_NO_OFFSET UINT64_MAX

struct st_why {
  uint64_t offset;   /* byte offset in the input, or ST_WHY_NO_OFFSET */
  /* The file OFFSET is in, when the input is several (a perf.data
     directory) and it is not the one the caller opened; NULL otherwise.
     It points into the reader's state.  */
  const char *input;
  char text[256];
};

/* Fills WHY (when not NULL) with the formatted text, for a failure at
   byte OFFSET of an input (or ST_WHY_NO_OFFSET); returns -ERR.  ERR is a
   positive errno value.  */
int st_why_at (struct st_why *why, int err, uint64_t offset, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
/* The same, with no offset.  */
#define st_why_set(why, err, ...) st_why_at ((why), (err), ST_WHY_NO_OFFSET, __VA_ARGS__)
/* st_why_set for a function that takes its own arguments.  */
int st_why_vset (struct st_why *why, int err, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 3, 0)));
/* Empties WHY: no text, no offset.  */
void st_why_clear (struct st_why *why);
