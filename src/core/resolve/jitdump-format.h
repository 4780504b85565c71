/* The jitdump format (perf's tools/perf/util/jitdump.h): what the parsers
 * in jit-parse.c read and jit-map.c's reader needs to resume a file in the
 * middle of its records.  */
#pragma once

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_HEADER_MIN 40
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1
#define JIT_RECORD_PREFIX 16
#define JIT_CODE_LOAD_FIXED (JIT_RECORD_PREFIX + 40)
/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
#define JIT_CODE_MOVE_SIZE (JIT_RECORD_PREFIX + 48)
/* Bytes read from a file at a time.  A jitdump record larger than this
   (a code blob of megabytes) is skipped unnamed; a header
   larger than this is not a jitdump.  */
#define WINDOW (4u << 20)
