/* What a Sysprof capture says of when and where its recording was made:
 * the header's capture_time (Sysprof's "Recorded At") and the
 * /proc/cpuinfo file chunk its details page takes the CPU model from.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The recording's clocks, as its header gives them (event.h's
   st_recording_event); all 0 when it gave none.  */
struct st_sysprof_clock {
  uint64_t wall_ns, wall_at;
  bool from_file;
};

/* TIME of the samples' clock as the wall clock, ISO 8601 in UTC as
   Sysprof's writer formats it, into OUT (NUL-padded to SIZE).  */
void st_sysprof_capture_time (const struct st_sysprof_clock *clock, int64_t time, char *out,
                              size_t size);

/* The text of the /proc/cpuinfo chunk: "model name : MODEL" for a
   recording's model, else (MODEL NULL or "") this machine's whole
   /proc/cpuinfo.  0 with *TEXT malloc'd (NULL when there is none), or
   -ENOMEM.  */
int st_sysprof_cpuinfo_text (const char *model, char **text, size_t *len);
