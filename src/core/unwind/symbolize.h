/* From raw pcs to frames with a module, a file address and a function.  */
#pragma once

#include <elfutils/libdwfl.h>

#include "core/unwind/callchain.h"
#include "core/unwind/dwfl-unwind.h"
#include "core/unwind/process.h"

struct st_symbolize_options {
  bool inline_frames;       /* expand inlined calls from DWARF */
};

/* Fills OUT (room for MAX) from RAW frames of process P, whose Dwfl is DWFL
   (NULL when no module could be reported).  Returns the number of frames,
   which exceeds N_RAW only with inline frames.  */
size_t st_symbolize (const struct st_symbolize_options *opts, Dwfl *dwfl,
                     const struct st_process *p, const struct st_raw_frame *raw,
                     size_t n_raw, struct st_frame *out, size_t max);
