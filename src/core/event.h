/* The one event model every source produces and the session consumes.
 *
 * perf.data files, perf pipes, Sysprof streams and live perf_event_open
 * buffers all describe the same things: samples with a copy of the user
 * stack, file mappings, thread names, forks and exits.  Sources translate
 * their records into these structures; nothing downstream knows where an
 * event came from.  Pointers inside an event are valid only for the
 * duration of the callback that receives it.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/build-id.h"

enum st_event_kind {
  ST_EVENT_SAMPLE,
  ST_EVENT_MMAP,
  ST_EVENT_COMM,
  ST_EVENT_FORK,
  ST_EVENT_EXIT,
  ST_EVENT_LOST,
  ST_EVENT_BUILD_ID,
  ST_EVENT_RAW,
  ST_EVENT_RECORDING,
};

/* Register ABI of a sample, as perf_event reports it.  */
enum st_regs_abi {
  ST_REGS_ABI_NONE = 0,
  ST_REGS_ABI_32 = 1,
  ST_REGS_ABI_64 = 2,
};

struct st_sample {
  pid_t pid, tid;
  uint64_t time;
  uint32_t cpu;
  uint64_t period;
  uint64_t ip;             /* the sampled pc, possibly in the kernel */
  bool user_mode;          /* the sample interrupted user code */
  /* User registers in perf numbering, only those set in regs_mask, in
     ascending perf register order.  */
  enum st_regs_abi abi;
  uint64_t regs_mask;
  const uint64_t *regs;
  size_t n_regs;
  /* The copy of the user stack, starting at the sampled stack pointer.  */
  const uint8_t *stack;
  size_t stack_size;
  /* Kernel frames perf recorded itself (PERF_SAMPLE_CALLCHAIN), if any.  */
  size_t n_kernel_ips;
  const uint64_t *kernel_ips;
  /* The user call chain the kernel made (perf record -g, --call-graph fp),
     innermost first, the sampled pc included; used when there is no stack
     copy to unwind.  */
  size_t n_user_ips;
  const uint64_t *user_ips;
  bool user_chain_lbr;     /* USER_IPS came from the LBR call stack */
  uint64_t input_offset;   /* where in the input it came from, for messages */
  /* The file INPUT_OFFSET is in when the input is several files (a
     perf.data directory's data.N), for messages; NULL: the input.  */
  const char *input_file;
};

struct st_mmap_event {
  pid_t pid, tid;
  uint64_t start, len, pgoff;
  uint32_t prot;           /* PROT_* (PROT_EXEC assumed for plain MMAP) */
  uint32_t flags;
  bool has_dev_ino;
  uint32_t maj, min;
  uint64_t ino, ino_generation;
  uint8_t build_id[ST_BUILD_ID_MAX];
  uint8_t build_id_size;   /* 0: none recorded */
  const char *filename;
};

struct st_comm_event {
  pid_t pid, tid;
  bool exec;               /* the thread exec'd: its old image is gone */
  const char *comm;
};
/* Room for a thread's name and its NUL: the kernel's are at most 15 bytes
   (TASK_COMM_LEN); a longer one (a crafted recording) is cut there.  */
#define ST_COMM_SIZE 16

struct st_task_event {     /* FORK and EXIT */
  pid_t pid, ppid, tid, ptid;
};

struct st_lost_event {
  uint64_t lost;
};

/* A build-id the recorder knew for a file (perf's HEADER_BUILD_ID).  */
struct st_build_id_event {
  pid_t pid;               /* -1: any process */
  uint8_t build_id[ST_BUILD_ID_MAX];
  uint8_t build_id_size;
  const char *filename;
};

/* A record of the input that only a sink of the same format understands
   (a Sysprof frame the unwinder has no use for): passed through as is.  */
struct st_raw_event {
  uint32_t type;           /* the input format's own record type */
  int32_t pid;
  int32_t cpu;
  const uint8_t *data;     /* the whole record, header included */
  size_t size;
};

/* What a recording's header says of where and when it was made (perf's
   HEADER_CPUDESC, HEADER_CLOCK_DATA, HEADER_SAMPLE_TIME and the file's
   time), for the sinks that carry it: a Sysprof capture's start time and
   CPU model.  A source may send several, each with what it knows.  */
struct st_recording_event {
  char cpu_model[128];     /* "": not recorded */
  /* The wall clock (CLOCK_REALTIME, ns) when the samples' clock read
     WALL_AT; WALL_NS 0: unknown.  */
  uint64_t wall_ns, wall_at;
  /* WALL_NS is the file's time at its last sample, not a clock reading
     perf recorded: a copy of the file has a later one.  */
  bool wall_from_file;
};

struct st_event {
  enum st_event_kind kind;
  uint64_t time;
  union {
    struct st_sample sample;
    struct st_mmap_event mmap;
    struct st_comm_event comm;
    struct st_task_event task;
    struct st_lost_event lost;
    struct st_build_id_event build_id;
    struct st_raw_event raw;
    struct st_recording_event recording;
  };
};

/* Sources deliver events through this callback; a negative return stops
   the source and is passed back to its caller.  */
typedef int (*st_event_fn) (const struct st_event *event, void *arg);
