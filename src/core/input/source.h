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

/* A file-like input format (perf.data, Sysprof capture): recognized by
   its first bytes, then read to the end.  Live sampling is not one of
   these: it has no input file.  */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/input/input.h"

struct st_source_ops {
  const char *name;
  /* True when MAGIC (LEN bytes, up to 8) starts this format.  */
  bool (*probe) (const uint8_t *magic, size_t len);
  int (*open) (struct st_input *in, void **state, struct st_source_error *err);
  /* Delivers every event to FN; see st_perf_source_run.  0, or -EINTR
     when a stop request interrupted a read (every event read before it
     is delivered), -ECANCELED when a second one gave up on a stream, or
     another -errno.  */
  int (*run) (void *state, st_event_fn fn, void *arg, volatile sig_atomic_t *stop,
              struct st_source_error *err);
  /* The recording machine's architecture (uname -m), or NULL.  */
  const char *(*arch) (const void *state);
  /* Logs what the run skipped, at the end (may be NULL).  */
  void (*report) (const void *state);
  void (*free) (void *state);
};

extern const struct st_source_ops st_source_perf;
extern const struct st_source_ops st_source_sysprof;

/* The format of an input whose first bytes are MAGIC, or NULL.  */
const struct st_source_ops *st_source_detect (const uint8_t *magic, size_t len);
/* "perf.data": the formats this build reads, for messages.  */
const char *st_source_names (void);
