/* Unwinding one sample with libdwfl, from the registers and the stack copy
 * the sample carries.  The process's Dwfl is attached once with callbacks
 * that read from a "slot"; each sample only changes what the slot points
 * at (~25x cheaper than a Dwfl per sample).  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"
#include "core/unwind/regs.h"

/* Why an unwind ended.  */
enum st_stop_reason {
  ST_STOP_END,              /* reached the outermost frame */
  ST_STOP_STACK_EXHAUSTED,  /* needed memory outside the stack copy */
  ST_STOP_NO_MODULE,        /* a pc outside every known file */
  ST_STOP_NO_UNWIND_INFO,   /* the module has no CFI and no frame pointer helped */
  ST_STOP_FRAME_LIMIT,      /* --max-frames reached */
  ST_STOP_NO_USER_STACK,    /* the sample has no user registers or stack */
  ST_STOP_NO_PROCESS_FILES, /* none of the process's files could be found */
  ST_STOP_UNWIND_ERROR,     /* libdwfl gave up for another reason */
  ST_STOP_NOT_UNWOUND,      /* -m passthru: the sample was not unwound */
  ST_STOP_KERNEL_CHAIN,     /* shown as the kernel's frame-pointer call chain */
  ST_STOP_N
};

const char *st_stop_reason_name (enum st_stop_reason reason);

struct st_unwind_slot;
struct st_unwind_slot *st_unwind_slot_new (void);
void st_unwind_slot_free (struct st_unwind_slot *slot);

/* Attaches DWFL (with at least one module reported) to SLOT.  */
bool st_unwind_attach (Dwfl *dwfl, pid_t pid, struct st_unwind_slot *slot);

struct st_raw_frame {
  uint64_t pc;
  bool activation;          /* pc is exact (frame 0, or after a signal) */
};

struct st_unwind_result {
  struct st_raw_frame *frames;
  size_t n_frames;
  enum st_stop_reason stop;
  const char *detail;       /* libdwfl's message, when it had one */
};

/* Unwinds SAMPLE (already converted registers in REGS) through DWFL, which
   must be attached to SLOT.  FRAMES has room for MAX_FRAMES.  */
void st_unwind_sample (Dwfl *dwfl, struct st_unwind_slot *slot, const struct st_sample *sample,
                       const struct st_dwarf_regs *regs, struct st_raw_frame *frames,
                       size_t max_frames, struct st_unwind_result *result);
