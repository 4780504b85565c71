/* The unwind-rule cache in front of libdwfl (x86_64).
 *
 * For each module of a process's Dwfl, the CFA and register rules of the
 * pc ranges samples land in, taken once from libdw (dwarf_cfi_addrframe on
 * the module's .eh_frame, else its .debug_frame) and kept in a sorted
 * table.  A sample whose every step has simple rules (CFA = register +
 * offset; registers undefined, same value, or at CFA + offset) is unwound
 * here directly on its stack copy, with the same arithmetic and the same
 * reads libdwfl's frame_unwind.c does.  Anything else (a DWARF expression,
 * a signal frame, a pc without CFI, a Go module's outermost frame) leaves
 * the rest of the sample to libdwfl from that frame's registers, and at the
 * first frame or after a read above the copy the whole sample, so the
 * result is libdwfl's own wherever the cache could differ.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/event.h"
#include "core/unwind/dwfl-unwind.h"
#include "core/unwind/regs.h"

struct st_unwind_cache;

/* 0 or -ENOMEM.  */
int st_unwind_cache_new (struct st_unwind_cache **out);
void st_unwind_cache_free (struct st_unwind_cache *c);
/* Forgets every module's rules: their Dwfl is gone or was rebuilt.  */
void st_unwind_cache_clear (struct st_unwind_cache *c);

/* True when REGS are of an architecture the cache can step (x86_64).  */
bool st_unwind_cache_applies (const struct st_dwarf_regs *regs);

/* Where libdwfl takes over a sample the cache stepped part of: the
   registers of frame N_FRAMES (REGS.pc its pc, a return address), which
   the cache has no rules for.  */
struct st_unwind_handoff {
  size_t n_frames;          /* frames before it, in FRAMES; 0: no hand-off */
  uint64_t read_end;        /* as stack_needed, from the sampled sp */
  struct st_dwarf_regs regs;
  /* rbx, not in REGS where libdwfl would have lost it (known by the ABI
     alone since frame RBX_LOST_AT, 0: never): libdwfl goes on without it,
     and on past an end for the want of it (dwfl-unwind.c's note_rbx).  */
  size_t rbx_lost_at;
  uint64_t rbx;
};

/* Unwinds SAMPLE by the cached rules of DWFL's modules into FRAMES (room for
   MAX_FRAMES) and RESULT, as st_unwind_sample would.  False when some step
   needs libdwfl: then nothing in RESULT is meaningful, and HANDOFF says
   where libdwfl is to go on (n_frames 0: from the sampled registers).  */
bool st_unwind_cache_sample (struct st_unwind_cache *c, Dwfl *dwfl,
                             const struct st_sample *sample, const struct st_dwarf_regs *regs,
                             struct st_raw_frame *frames, size_t max_frames,
                             struct st_unwind_result *result, struct st_unwind_handoff *handoff);
