/* What every input source shares: how it reports a malformed input.  */
#pragma once

#include <stdint.h>

struct st_source_error {
  uint64_t offset;         /* byte offset in the input where it went wrong */
  char message[256];
};

/* Fills ERR and returns -EBADMSG: the input is malformed at OFFSET.  */
int st_source_bad_input (struct st_source_error *err, uint64_t offset,
                         const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
/* Fills ERR and returns -ENOTSUP: valid input this build cannot read.  */
int st_source_unsupported (struct st_source_error *err, uint64_t offset,
                           const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
