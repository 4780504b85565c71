/* perf.data reader: file mode and pipe mode (`perf record -o -`).
 *
 * Parses the header, the attributes (stepping by attr_size), the build-id
 * feature section and every record, and delivers them as st_events in time
 * order (see ordered-queue.h).  Any sample_type layout perf can write is
 * understood; fields this tool does not use are stepped over.  */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "core/event.h"
#include "core/input/input.h"
#include "core/input/source.h"

struct st_perf_source;

/* True when the first 8 bytes of an input are a perf.data magic.  */
bool st_perf_source_probe (const uint8_t *magic, size_t len);

/* perf record --threads writes a directory (perf-dir.c): opens its
   header file, "DIR/data", the one to read (st_perf_source_open then
   finds the others beside it); a regular file, never waited on.  0, or
   -errno with WHY saying which file and why.  */
int st_perf_source_open_dir (const char *dir, struct st_input **out, struct st_why *why);

/* Reads the headers.  IN stays owned by the caller.  Returns 0, -EBADMSG or
   -ENOTSUP with ERR filled, or -errno for I/O errors.  */
int st_perf_source_open (struct st_input *in, struct st_perf_source **out,
                         struct st_why *err);
void st_perf_source_free (struct st_perf_source *src);

/* Delivers every event to FN.  Stops early, after delivering what is
   queued, when *STOP becomes non-zero.  Returns 0 at the end of the input,
   FN's negative return, or an error as st_perf_source_open does; on a
   malformed record the events before it have all been delivered.  */
int st_perf_source_run (struct st_perf_source *src, st_event_fn fn, void *arg,
                        volatile sig_atomic_t *stop, struct st_why *err);

bool st_perf_source_is_pipe (const struct st_perf_source *src);

/* Live mode (see source-live.c): records come from ring buffers.  The
   source parses them with ATTR (the one event every buffer carries) and
   delivers events to FN in time order, round by round.  MMAP_BUILD_IDS:
   the sideband event asked for build-ids in mapping records (only then is
   PERF_RECORD_MISC_MMAP_BUILD_ID believed).  */
struct perf_event_attr;
int st_perf_source_new_live (const struct perf_event_attr *attr, bool mmap_build_ids,
                             st_event_fn fn, void *arg, struct st_why *err,
                             struct st_perf_source **out);
/* One record, copied: the ring buffer may reuse its bytes at once.  */
int st_perf_source_feed (struct st_perf_source *src, const uint8_t *rec, uint32_t size);
/* One record queued where it is: its bytes must stay until the end of the
   round after the one it was fed in (every record fed before a round ends
   is released by the end of the next one).  */
int st_perf_source_feed_in_place (struct st_perf_source *src, const uint8_t *rec,
                                  uint32_t size);
/* Every buffer has been read once: release what can no longer be overtaken. */
int st_perf_source_end_round (struct st_perf_source *src);
/* The latest record time fed so far: a record fed now with this time is
   delivered after every record fed before it.  */
uint64_t st_perf_source_max_time (const struct st_perf_source *src);
/* The end: release everything.  */
int st_perf_source_flush (struct st_perf_source *src);
void st_perf_source_free_live (struct st_perf_source *src);
