#include "config.h"

#include "core/unwind/callchain.h"

const char *
st_stop_reason_name (enum st_stop_reason reason)
{
  static const char *const names[ST_STOP_N] = {
    [ST_STOP_END] = "end",
    [ST_STOP_STACK_EXHAUSTED] = "stack copy exhausted",
    [ST_STOP_NO_MODULE] = "no module",
    [ST_STOP_NO_UNWIND_INFO] = "no unwind info",
    [ST_STOP_FRAME_POINTER_END] = "frame pointer chain ended",
    [ST_STOP_KERNEL_CHAIN] = "kernel call chain (frame pointers)",
    [ST_STOP_LBR_CHAIN] = "LBR call stack (--call-graph lbr)",
    [ST_STOP_FRAME_LIMIT] = "frame limit",
    [ST_STOP_NO_USER_STACK] = "no user stack",
    [ST_STOP_NO_PROCESS_FILES] = "no files of the process found",
    [ST_STOP_UNWIND_ERROR] = "unwind error",
    [ST_STOP_NOT_UNWOUND] = "not unwound (passthru)",
  };
  return reason < ST_STOP_N ? names[reason] : "?";
}
