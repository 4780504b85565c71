/* Sysprof capture format, as it is laid out on disk and in pipes.
 *
 * Checked against Debian 12's libsysprof-capture-4 (Sysprof 3.46,
 * /usr/include/sysprof-4/sysprof-capture-types.h), plus the stack-user frame
 * (type 18) that elfutils' eu-stacktrace (0.192 to 0.195) defined and that
 * upstream Sysprof does not know.  Our own structs, without bit fields, so
 * that the layout is the format's and not the compiler's: the 8-bit fields
 * that Sysprof declares as bit fields are the low bits of a u32 here.
 *
 * A capture is a 256-byte file header, then frames.  Every frame starts
 * with the 24-byte frame header, its len counts the whole frame (header
 * included, at most 65535) and frames are 8-byte aligned.  Everything is
 * little-endian on the machines we run on; the header's little_endian bit
 * says which order the writer used.  */
#pragma once

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#define ST_SYSPROF_MAGIC 0xFDCA975Eu    /* little-endian u32 at offset 0 */
#define ST_SYSPROF_ALIGN 8
#define ST_SYSPROF_FRAME_MAX 65535u     /* len is a u16 */

enum st_sysprof_frame_type {
  ST_SYSPROF_TIMESTAMP = 1,
  ST_SYSPROF_SAMPLE = 2,       /* a call chain: u16 n_addrs, tid, addrs[] */
  ST_SYSPROF_MAP = 3,          /* start, end, offset, inode, file name */
  ST_SYSPROF_PROCESS = 4,      /* the command line of frame.pid */
  ST_SYSPROF_FORK = 5,         /* frame.pid forked child_pid */
  ST_SYSPROF_EXIT = 6,         /* frame.pid exited */
  ST_SYSPROF_JITMAP = 7,
  ST_SYSPROF_CTRDEF = 8,
  ST_SYSPROF_CTRSET = 9,
  ST_SYSPROF_MARK = 10,
  ST_SYSPROF_METADATA = 11,
  ST_SYSPROF_LOG = 12,
  ST_SYSPROF_FILE_CHUNK = 13,
  ST_SYSPROF_ALLOCATION = 14,
  ST_SYSPROF_OVERLAY = 15,
  ST_SYSPROF_STACK_USER = 18,  /* eu-stacktrace: a raw user stack + registers */
};

/* The address markers that Sysprof (like perf) puts in a sample's addrs
   to say whose addresses follow: PERF_CONTEXT_KERNEL and _USER.  */
#define ST_SYSPROF_CONTEXT_KERNEL ((uint64_t) -128)
#define ST_SYSPROF_CONTEXT_USER ((uint64_t) -512)
#define ST_SYSPROF_CONTEXT_MAX ((uint64_t) -4095)   /* markers are >= this */

struct st_sysprof_file_header {
  uint32_t magic;
  uint32_t flags;              /* bits 0-7 version, bit 8 little_endian */
  char capture_time[64];       /* ISO 8601, NUL-terminated */
  int64_t time;                /* start, CLOCK_MONOTONIC nanoseconds */
  int64_t end_time;            /* 0 when the writer did not set it */
  char suffix[168];
};
#define ST_SYSPROF_VERSION(flags) ((flags) & 0xffu)
#define ST_SYSPROF_LITTLE_ENDIAN 0x100u

struct st_sysprof_frame {
  uint16_t len;
  int16_t cpu;
  int32_t pid;
  int64_t time;
  uint32_t type;               /* bits 0-7; the rest is padding */
  uint32_t padding;
};
#define ST_SYSPROF_FRAME_TYPE(type_field) ((type_field) & 0xffu)

struct st_sysprof_map {
  struct st_sysprof_frame frame;
  uint64_t start, end, offset, inode;
  char filename[];             /* NUL-terminated inside the frame */
};

struct st_sysprof_process {
  struct st_sysprof_frame frame;
  char cmdline[];              /* NUL-terminated inside the frame */
};

struct st_sysprof_sample {
  struct st_sysprof_frame frame;
  uint32_t n_addrs;            /* bits 0-15; the rest is padding */
  int32_t tid;
  uint64_t addrs[];
};

struct st_sysprof_fork {
  struct st_sysprof_frame frame;
  int32_t child_pid;
};

/* Type 18: the stack copy, then at once (no alignment) the registers.  */
struct st_sysprof_stack_user {
  struct st_sysprof_frame frame;
  uint64_t size;               /* bytes of data[] */
  int32_t tid;
  uint32_t padding;
  uint8_t data[];
};

struct st_sysprof_user_regs {
  uint32_t n_regs;
  uint32_t abi;                /* PERF_SAMPLE_REGS_ABI_{NONE,32,64} */
  uint64_t regs[];             /* perf order; x86_64: mask 0xff01ff */
};

static_assert (sizeof (struct st_sysprof_file_header) == 256, "file header");
static_assert (sizeof (struct st_sysprof_frame) == 24, "frame header");
static_assert (sizeof (struct st_sysprof_map) == 56, "map frame");
static_assert (sizeof (struct st_sysprof_process) == 24, "process frame");
static_assert (sizeof (struct st_sysprof_sample) == 32, "sample frame");
static_assert (offsetof (struct st_sysprof_fork, child_pid) == 24, "fork frame");
static_assert (sizeof (struct st_sysprof_stack_user) == 40, "stack-user frame");
static_assert (sizeof (struct st_sysprof_user_regs) == 8, "user registers");

/* The most addresses a sample frame can hold (len is a u16).  */
#define ST_SYSPROF_SAMPLE_MAX_ADDRS \
  ((ST_SYSPROF_FRAME_MAX - sizeof (struct st_sysprof_sample)) / 8)

/* N rounded up to the frame alignment.  */
static inline size_t
st_sysprof_align (size_t n)
{
  return (n + ST_SYSPROF_ALIGN - 1) & ~(size_t) (ST_SYSPROF_ALIGN - 1);
}

/* The Sysprof source delivers the input's file header, before any frame,
   as an ST_EVENT_RAW of this type (outside the 8 bits of frame types), so
   that a Sysprof output can keep it.  */
#define ST_SYSPROF_RAW_FILE_HEADER 0x100u
