/* Stepping a libdwfl frame of 32-bit ARM code by its file's .ARM.exidx
 * (arm-exidx.h), where libdw 0.188 found no CFI: the fallback
 * dwfl-unwind.c takes on ARM.  The caller's registers go back to libdwfl
 * as the first frame of a new walk, so that code with CFI is still
 * unwound by libdwfl's own rules.  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/why.h"
#include "core/unwind/arm-exidx.h"
#include "core/unwind/callchain.h"
#include "core/unwind/regs.h"

/* A frame as libdwfl reported it.  */
struct st_arm_frame {
  struct st_arm_regs regs;    /* r0..r14 that libdwfl knows; r15 unused */
  uint64_t pc;
  bool activation;            /* pc is exact; else a return address */
};

/* Records STATE's pc and core registers in OUT: all of them in a
   sample's first frame, those the CFI restored (r4-r11, sp) after a
   step.  */
void st_arm_frame_save (Dwfl_Frame *state, struct st_arm_frame *out);

/* Dwfl_Thread_Callbacks' memory_read: the sample's stack copy.  */
typedef bool (*st_arm_memory_fn) (Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg);

/* Steps from FRAME to its caller by the .ARM.exidx entry of FRAME's
   module (its main ELF, with its load bias).  Returns 1 and the caller's
   registers in CALLER, ready for libdwfl's set_initial_registers, with
   *PC the caller's pc and *EXACT true when it is not a return address but
   the pc a signal interrupted.  For a return address CALLER->pc is *PC - 1:
   libdwfl looks up the CFI of a first frame at its exact pc, and the call
   may have been a function's last instruction.  Returns 0 at the
   outermost frame (a return address of 0), -ENOENT when no exidx entry
   covers FRAME's pc (libdwfl's own reason for stopping stands), or the
   negative errno of st_exidx_execute, WHY saying which.  */
int st_arm_exidx_step (Dwfl *dwfl, const struct st_arm_frame *frame, st_arm_memory_fn memory_read,
                       void *arg, struct st_dwarf_regs *caller, uint64_t *pc, bool *exact,
                       struct st_why *why);

/* Why an unwind stopped where st_arm_exidx_step returned ERR (<= 0, not
   -ENOENT) for FRAME; RAN_OUT says the unwind wanted stack beyond the
   copy.  */
enum st_stop_reason st_arm_exidx_stop (Dwfl *dwfl, const struct st_arm_frame *frame, int err,
                                       bool ran_out);
