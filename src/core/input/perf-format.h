/* The perf.data container format: what tools/perf writes around the kernel's
 * records.  The kernel's own record layouts come from <linux/perf_event.h>;
 * this header adds the file header, the user-space record types perf
 * inserts, and the feature section numbers.  */
#pragma once

#include <stdint.h>
#include <linux/perf_event.h>

#define PERF_MAGIC2 0x32454c4946524550ULL  /* "PERFILE2" read as little-endian */
#define PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL

struct perf_file_section {
  uint64_t offset;
  uint64_t size;
};

/* File mode: 104 bytes, then the attrs, the data and the feature sections.  */
struct perf_file_header {
  uint64_t magic;
  uint64_t size;
  uint64_t attr_size;       /* one attrs entry: perf_event_attr + ids section */
  struct perf_file_section attrs;
  struct perf_file_section data;
  struct perf_file_section event_types;
  uint64_t features[4];     /* bitmap of HEADER_* feature sections */
};

/* Pipe mode: just the magic and this header's size.  */
struct perf_pipe_file_header {
  uint64_t magic;
  uint64_t size;
};

/* Record types perf itself writes (never produced by the kernel).  */
enum {
  PERF_RECORD_USER_TYPE_START = 64,
  PERF_RECORD_HEADER_ATTR = 64,
  PERF_RECORD_HEADER_EVENT_TYPE = 65,
  PERF_RECORD_HEADER_TRACING_DATA = 66,
  PERF_RECORD_HEADER_BUILD_ID = 67,
  PERF_RECORD_FINISHED_ROUND = 68,
  PERF_RECORD_ID_INDEX = 69,
  PERF_RECORD_AUXTRACE_INFO = 70,
  PERF_RECORD_AUXTRACE = 71,
  PERF_RECORD_AUXTRACE_ERROR = 72,
  PERF_RECORD_THREAD_MAP = 73,
  PERF_RECORD_CPU_MAP = 74,
  PERF_RECORD_STAT_CONFIG = 75,
  PERF_RECORD_STAT = 76,
  PERF_RECORD_STAT_ROUND = 77,
  PERF_RECORD_EVENT_UPDATE = 78,
  PERF_RECORD_TIME_CONV = 79,
  PERF_RECORD_HEADER_FEATURE = 80,
  PERF_RECORD_COMPRESSED = 81,
  PERF_RECORD_FINISHED_INIT = 82,
};

/* Feature section numbers (bits of perf_file_header.features).  */
enum {
  PERF_HEADER_TRACING_DATA = 1,
  PERF_HEADER_BUILD_ID = 2,
  PERF_HEADER_ARCH = 6,
  PERF_HEADER_CPUDESC = 8,         /* perf string: the CPU model */
  PERF_HEADER_SAMPLE_TIME = 21,    /* u64 first, last sample times */
  PERF_HEADER_DIR_FORMAT = 24,     /* u64 version: perf record --threads' directory */
  PERF_HEADER_CLOCK_DATA = 29,     /* u32 version, clockid; u64 wall ns, clock ns */
  PERF_HEADER_LAST_FEATURE_PIPE = 32,  /* ends the features of a pipe */
  PERF_HEADER_FEATURE_BITS = 256,
};

/* A build-id entry, in the HEADER_BUILD_ID section and in
   PERF_RECORD_HEADER_BUILD_ID records.  */
struct perf_build_id_entry {
  struct perf_event_header header;
  int32_t pid;
  uint8_t build_id[24];     /* 20 bytes used, padded to 8 */
  /* followed by a NUL-terminated filename, padded to 8 bytes */
};
#define PERF_BUILD_ID_MISC_SIZE (1 << 15)  /* build_id[20] holds the size */

/* Markers inside PERF_SAMPLE_CALLCHAIN ip arrays.  */
#define PERF_CONTEXT_KERNEL_MARK ((uint64_t) -128)
#define PERF_CONTEXT_USER_MARK ((uint64_t) -512)
#define PERF_CONTEXT_MAX_MARK ((uint64_t) -4095)
