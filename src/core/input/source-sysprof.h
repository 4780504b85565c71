/* Sysprof capture reader: files, pipes and FIFOs, as Sysprof hands them to
 * eu-stacktrace in its pipeline (see sysprof-format.h for the layout).
 *
 * Frames are read one by one and every length is checked against the frame
 * and the input before anything is read from it.  What the session gets:
 *
 *   - first, the 256-byte file header as an ST_EVENT_RAW of type
 *     ST_SYSPROF_RAW_FILE_HEADER;
 *   - each stack-user frame (type 18) as an ST_EVENT_SAMPLE, registers in
 *     perf order under the architecture's sample mask (x86_64: 0xff01ff);
 *   - every other frame, known type or not, as an ST_EVENT_RAW holding its
 *     bytes verbatim, so that a Sysprof output copies it byte for byte;
 *   - MAP, PROCESS, FORK and EXIT frames also decoded, as ST_EVENT_MMAP,
 *     _COMM, _FORK and _EXIT, right after their ST_EVENT_RAW.  A sink that
 *     writes Sysprof takes the raw frame and skips its decoded twin.
 *
 * Maps come from the stream's own MAP frames.  A process that has none by
 * its first sample has them read once from /proc/PID/maps (executable file
 * mappings), and its command line from /proc/PID/cmdline when the stream
 * has no PROCESS frame for it; they are delivered as MAP and PROCESS frames
 * (raw and decoded) as if the stream had carried them.  That is skipped
 * when /proc/PID is a newer process than the sample (the pid was reused).
 *
 * Ctrl-C: on a pipe or FIFO the first stop request is acknowledged (the
 * flag is cleared) and the stream is read to its end, as elfutils'
 * eu-stacktrace did: Sysprof stops its own writer and closes the pipe, and
 * the frames still in flight are kept; a second stop request gives up on
 * the rest (-ECANCELED).  On a regular file the run stops at the next
 * frame.  A read that a stop request interrupted (st_input_set_interrupt)
 * ends the run with -EINTR, after every frame read before it.  */
#pragma once

#include <signal.h>
#include <stdbool.h>

#include "core/event.h"
#include "core/input/input.h"
#include "core/input/source.h"

struct st_sysprof_source;

/* True when MAGIC starts a Sysprof capture (0xFDCA975E, little-endian).  */
bool st_sysprof_source_probe (const uint8_t *magic, size_t len);

/* Reads the file header.  IN stays owned by the caller.  Returns 0,
   -EBADMSG or -ENOTSUP with ERR filled, or -errno.  */
int st_sysprof_source_open (struct st_input *in, struct st_sysprof_source **out,
                            struct st_why *err);
void st_sysprof_source_free (struct st_sysprof_source *src);

/* Delivers every frame to FN (see above).  Returns 0 at the end of the
   input, FN's negative return, -EBADMSG with ERR filled (every frame before
   the bad one has been delivered), or -errno.  */
int st_sysprof_source_run (struct st_sysprof_source *src, st_event_fn fn, void *arg,
                           volatile sig_atomic_t *stop, struct st_why *err);
