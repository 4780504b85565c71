/* From raw pcs to frames with a module, a file address and a function.  */
#pragma once

#include <elfutils/libdwfl.h>

#include "core/output/callchain.h"
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

/* True when LOOKUP lies in the function at its module's ELF entry point
   (_start).  Some entry points (ld.so's) have no CFI to say they are the
   outermost frame; reaching one is still the end of the stack.  */
bool st_symbolize_in_entry_function (Dwfl_Module *mod, uint64_t lookup);

/* True when LOOKUP lies in a Go function past which Go's own traceback
   does not go (st_gopclntab_is_outermost), in a module named from its
   .gopclntab.  */
bool st_symbolize_is_go_outermost (Dwfl_Module *mod, uint64_t lookup);
