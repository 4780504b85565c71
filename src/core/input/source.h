/* What every input source shares: how it reports a malformed input (a
 * struct st_why with the byte offset where it went wrong: -EBADMSG for a
 * malformed input, -ENOTSUP for valid input this build cannot read).  */
#pragma once

#include <stdint.h>

#include "basic/why.h"

/* A source of events: a file-like input format (perf.data, Sysprof
   capture), recognized by its first bytes and read to the end, or live
   sampling (source-live.h), made by its own constructor, that runs until
   told to stop.  Every one runs the same way: run, report, free.  */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/input/input.h"

struct st_source_ops {
  const char *name;
  /* A source that runs until told to stop (live sampling): a stop is its
     normal end, not an input cut short.  */
  bool endless;
  /* True when MAGIC (LEN bytes, up to 8) starts this format.  */
  bool (*probe) (const uint8_t *magic, size_t len);
  /* Reads the input's headers.  (Probe and open are NULL for live.)  */
  int (*open) (struct st_input *in, void **state, struct st_why *err);
  /* Delivers every event to FN; see st_perf_source_run.  0, or -EINTR
     when a stop request interrupted a read (every event read before it
     is delivered), -ECANCELED when a second one gave up on a stream, or
     another -errno.  */
  int (*run) (void *state, st_event_fn fn, void *arg, volatile sig_atomic_t *stop,
              struct st_why *err);
  /* The recording machine's architecture (uname -m), or NULL: this one's.  */
  const char *(*arch) (const void *state);
  /* Logs what the run skipped, at the end (may be NULL).  */
  void (*report) (const void *state);
  void (*free) (void *state);
};

/* Defines the ops table VAR of a file format NAME read by the typed
   functions PREFIX_probe, PREFIX_open, PREFIX_run and PREFIX_free of a
   struct PREFIX (as st_perf_source_open and the others are declared):
   the adapters from the table's void *state, and the table, with ARCH_FN
   and REPORT_FN as they are.  */
#define ST_DEFINE_FILE_SOURCE(var, name_, prefix, arch_fn, report_fn)          \
  static int                                                                  \
  prefix##_open_state (struct st_input *in, void **state, struct st_why *err) \
  {                                                                           \
    return prefix##_open (in, (struct prefix **) state, err);                 \
  }                                                                           \
  static int                                                                  \
  prefix##_run_state (void *state, st_event_fn fn, void *arg,                 \
                      volatile sig_atomic_t *stop, struct st_why *err)        \
  {                                                                           \
    return prefix##_run (state, fn, arg, stop, err);                          \
  }                                                                           \
  static void                                                                 \
  prefix##_free_state (void *state)                                           \
  {                                                                           \
    prefix##_free (state);                                                    \
  }                                                                           \
  const struct st_source_ops var = {                                          \
    .name = name_,                                                            \
    .probe = prefix##_probe,                                                  \
    .open = prefix##_open_state,                                              \
    .run = prefix##_run_state,                                                \
    .arch = arch_fn,                                                          \
    .report = report_fn,                                                      \
    .free = prefix##_free_state,                                              \
  }

extern const struct st_source_ops st_source_perf;
extern const struct st_source_ops st_source_sysprof;

/* The format of an input whose first bytes are MAGIC, or NULL.  */
const struct st_source_ops *st_source_detect (const uint8_t *magic, size_t len);
/* "perf.data": the formats this build reads, for messages.  */
const char *st_source_names (void);
