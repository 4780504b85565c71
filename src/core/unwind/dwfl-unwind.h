/* Unwinding one sample with libdwfl, from the registers and the stack copy
 * the sample carries.  The process's Dwfl is attached once with callbacks
 * that read from a "slot"; each sample only changes what the slot points
 * at (~25x cheaper than a Dwfl per sample).  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/event.h"
#include "core/unwind/callchain.h"
#include "core/unwind/regs.h"

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
  /* Bytes above the sampled sp the unwind read or wanted: what a stack
     copy needs to hold for this result (a lower bound when the copy ran
     out).  */
  uint64_t stack_needed;
  size_t n_by_cache;        /* the first frames, stepped from by the unwind-rule
                               cache; libdwfl stepped from the others */
};

/* Unwinds SAMPLE (already converted registers in REGS) through DWFL, which
   must be attached to SLOT.  FRAMES has room for MAX_FRAMES.  With
   USE_CACHE the unwind-rule cache (unwind-cache.h) steps the sample when
   it can, with the same result; otherwise libdwfl does.  */
void st_unwind_sample (Dwfl *dwfl, struct st_unwind_slot *slot, const struct st_sample *sample,
                       const struct st_dwarf_regs *regs, struct st_raw_frame *frames,
                       size_t max_frames, bool use_cache, struct st_unwind_result *result);

/* The word at ADDR of a sample's stack copy (SIZE bytes of STACK, taken
   from SP up) into *VALUE, in the recording machine's byte order
   (BIG_ENDIAN: s390x), moving *READ_END past it; false, and nothing read,
   when ADDR is outside the copy.  The one reader of the copy that libdwfl's
   callback and the unwind-rule cache share, so both read the same.  */
static inline bool
st_stack_copy_read (const uint8_t *stack, size_t size, uint64_t sp, bool big_endian,
                    uint64_t addr, uint64_t *read_end, uint64_t *value)
{
  if (addr < sp || addr - sp >= size)
    return false;
  if (addr + 8 > *read_end)
    *read_end = addr + 8;
  uint64_t off = addr - sp;
  size_t avail = size - off;
  uint64_t v = 0;
  if (!big_endian && avail >= sizeof v)
    {
      /* The common case in one fixed-size load.  */
      memcpy (&v, stack + off, sizeof v);
      *value = v;
      return true;
    }
  /* A 32-bit task's last word may be only 4 bytes from the end.  */
  size_t n = avail < sizeof v ? avail : sizeof v;
  if (big_endian)
    for (size_t i = 0; i < n; i++)
      v |= (uint64_t) stack[off + i] << (8 * (sizeof v - 1 - i));
  else
    memcpy (&v, stack + off, n);
  *value = v;
  return true;
}
