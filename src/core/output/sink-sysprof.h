/* -f sysprof's insides, shared by its two files (nothing else includes
 * this): sink-sysprof.c turns events and samples into frames,
 * sink-sysprof-out.c is the byte path those frames take to the output (the
 * header held back, the writer's frames relayed from its memfd in order
 * with the frames written by hand, one buffer).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sysprof-capture-writer.h>

#include "core/event.h"
#include "core/output/sysprof-host.h"
#include "core/output/sysprof-procs.h"
#include "core/input/sysprof-format.h"

#define BUF_SIZE (1u << 20)
/* Frames left in the writer before they are relayed: the output lags the
   input by at most this much plus BUF_SIZE.  */
#define RELAY_EVERY (128u << 10)

struct st_sink {
  int fd;                       /* the output */
  bool seekable;                /* a regular file that starts at offset 0 */
  int error;                    /* the first error, -errno */

  bool started;                 /* the first event chose the header */
  bool capture_input;           /* the input is a Sysprof capture */
  bool header_written;          /* buf no longer starts with the header */
  struct st_sysprof_file_header header;

  SysprofCaptureWriter *writer; /* encodes into a memfd ... */
  int relay_fd;                 /* ... that this reads back */
  size_t lib_pending;           /* bytes given to the writer, not relayed */

  uint8_t *buf;                 /* output not yet written */
  size_t len;

  int64_t first_time, last_time;

  const struct st_regs_arch *arch;  /* stack-user registers: this machine's */
  uint64_t regs_mask;

  struct st_sysprof_procs *procs;   /* names and maps, for Sysprof */
  struct st_sysprof_clock clock;    /* the recording's, if known */
  bool cpuinfo_written;             /* the /proc/cpuinfo file chunk */
  char cpu_model[128];              /* the recording's, "" if not known */

  uint64_t cut_chains, cut_stacks;
  uint64_t addrs[ST_SYSPROF_SAMPLE_MAX_ADDRS];
};

/* Keeps R, a -errno, when it is the sink's first error.  */
void st_sysprof_fail (struct st_sink *s, int r);
/* Widens the span of frame times the header gives to TIME (ns).  */
void st_sysprof_note_time (struct st_sink *s, int64_t time);
/* Sets the header's capture_time to TIME as the recording's wall clock.  */
void st_sysprof_set_capture_time (struct st_sink *s, int64_t time);
/* The first event decides the header: the input's (EV is its file header)
   or a new one.  */
void st_sysprof_start (struct st_sink *s, const struct st_event *ev);
/* Writes out the buffer (the header first, once); 0 or the first error.  */
int st_sysprof_flush_buf (struct st_sink *s);
/* Moves the writer's frames into the buffer, in order; 0 or the first
   error.  */
int st_sysprof_relay (struct st_sink *s);
/* Room for a hand-written frame of LEN bytes, zeroed, after every frame
   the writer holds; NULL after an error.  */
uint8_t *st_sysprof_reserve (struct st_sink *s, size_t len);
/* After a frame of LEN bytes (unaligned) given to the writer, which
   returned OK: relays now and then; 0 or the first error.  */
int st_sysprof_wrote (struct st_sink *s, bool ok, size_t len);
