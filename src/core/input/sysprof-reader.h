/* The Sysprof reader's insides, shared by source-sysprof.c (the frames)
 * and sysprof-proc.c (what /proc adds), and by nothing else.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/hashmap.h"
#include "basic/why.h"
#include "core/event.h"
#include "core/input/input.h"
#include "core/input/sysprof-format.h"
#include "core/unwind/regs.h"

#define MAX_REGS 64   /* a perf register mask has 64 bits */

/* What the stream told us about one process, to decide where its maps
   come from.  */
enum {
  PID_STREAM_MAPS = 1 << 0,   /* a MAP frame (or the parent's, at fork) */
  PID_PROC_MAPS = 1 << 1,     /* maps were read from /proc/PID/maps */
  PID_PROC_TRIED = 1 << 2,    /* /proc/PID was looked at (once) */
  PID_PROCESS_FRAME = 1 << 3, /* a PROCESS frame named it */
};

struct st_sysprof_source {
  struct st_input *in;
  struct st_sysprof_file_header header;
  bool stream;                    /* a pipe or FIFO: read it to its end */
  const struct st_regs_arch *arch;
  uint64_t regs_mask;             /* what stack-user registers stand for */
  size_t mask_regs;
  struct st_hashmap *pids;        /* pid -> flags, stored in the pointer */
  uint64_t regs[MAX_REGS];        /* one sample's registers, aligned */
  uint8_t *scratch;               /* frames made up from /proc */

  /* what the run saw, for the report */
  uint64_t frames, stack_user, passed;
  uint64_t proc_maps, proc_skipped;

  /* state of one run */
  st_event_fn fn;
  void *fn_arg;
  struct st_why *err;
};

unsigned st_sysprof_pid_flags (const struct st_sysprof_source *src, pid_t pid);
int st_sysprof_pid_set_flags (struct st_sysprof_source *src, pid_t pid, unsigned flags);
/* True when a mapping's NAME can hold code: a file, or the vdso.  */
bool st_sysprof_is_code_path (const char *name);
/* A MAP or PROCESS frame, from the stream or made up from /proc.  */
int st_sysprof_handle_map (struct st_sysprof_source *src, const uint8_t *frame, size_t len,
                           uint64_t offset, bool from_proc, uint32_t prot);
int st_sysprof_handle_process (struct st_sysprof_source *src, const uint8_t *frame, size_t len,
                               bool from_proc);
/* sysprof-proc.c: reads /proc/PID/maps (and cmdline) once, for a process
   the stream gave no maps by its sample at TIME.  */
int st_sysprof_synthesize_from_proc (struct st_sysprof_source *src, pid_t pid, int64_t time);
