/* An unwound, symbolized sample: what every output sink receives.  It is
 * the unwinder's result, and says nothing of libdwfl: a sink compiles
 * without it.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "container/label.h"
#include "core/event.h"

/* Why an unwind ended.  */
enum st_stop_reason {
  ST_STOP_END,              /* reached the outermost frame */
  ST_STOP_STACK_EXHAUSTED,  /* needed memory outside the stack copy */
  ST_STOP_NO_MODULE,        /* a pc outside every known file */
  ST_STOP_NO_UNWIND_INFO,   /* no CFI for the last frame, and no frame pointer helped */
  ST_STOP_FRAME_LIMIT,      /* --max-frames reached */
  ST_STOP_NO_USER_STACK,    /* the sample has no user registers or stack */
  ST_STOP_NO_PROCESS_FILES, /* none of the process's files could be found */
  ST_STOP_UNWIND_ERROR,     /* libdwfl gave up for another reason */
  ST_STOP_NOT_UNWOUND,      /* -m passthru: the sample was not unwound */
  ST_STOP_FRAME_POINTER_END,/* frames without CFI were walked by frame pointer,
                               until the chain ended */
  ST_STOP_KERNEL_CHAIN,     /* shown as the kernel's frame-pointer call chain */
  ST_STOP_LBR_CHAIN,        /* shown as the LBR call stack (--call-graph lbr) */
  ST_STOP_N
};

const char *st_stop_reason_name (enum st_stop_reason reason);

struct st_frame {
  uint64_t pc;              /* raw: the exact pc, or a return address */
  bool activation;          /* pc is exact; else symbolized at pc - 1 */
  bool inlined;             /* an inlined call inside the next frame */
  const char *module;       /* file path, or NULL when no mapping covers pc */
  const char *build_id;     /* hex, or NULL */
  bool has_elf_address;
  uint64_t elf_address;     /* pc in the file's own addresses (pc - bias) */
  const char *symbol;       /* NULL: unknown; demangled (demangle.h) */
  const char *raw_symbol;   /* the symbol's name in the file (mangled), or NULL */
  uint64_t offset;          /* from the symbol's start to the lookup pc */
};

struct st_callchain {
  const struct st_sample *sample;
  const char *comm;
  const struct st_container_label *container;  /* NULL: the host */
  const struct st_frame *frames;  /* innermost first */
  size_t n_frames;
  enum st_stop_reason stop;
  const char *stop_detail;
  /* Set when the sink's format op already ran (in an unwinding thread). */
  const char *formatted;
  size_t formatted_len;
};
