/* The perf.data reader's insides, shared by its three files and by
 * nothing else: perf-header.c reads the file header, the attributes and the
 * feature sections; perf-record.c decodes one record into an st_event, with
 * no I/O; source-perf.c reads records in order (from an input, or fed by
 * the live source) and delivers them.  */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "basic/hashmap.h"
#include "basic/why.h"
#include "core/event.h"
#include "core/input/input.h"
#include "core/input/ordered-queue.h"
#include "core/input/perf-compressed.h"
#include "core/input/perf-format.h"

#define MAX_ATTRS 4096

struct st_perf_dir;

struct attr_info {
  uint64_t sample_type;
  uint64_t read_format;
  uint64_t sample_regs_user;
  uint64_t branch_sample_type;
  bool sample_id_all;
};

/* A build-id entry of the feature section, kept until the run starts.  */
struct feature_record {
  uint64_t offset;
  uint32_t size;
  uint8_t data[];
};

struct st_perf_source {
  struct st_input *in;
  bool pipe_mode;
  /* An event of the recording asked for build-ids in its MMAP2 records
     (attr.build_id): only then does PERF_RECORD_MISC_MMAP_BUILD_ID mean
     one.  The kernel leaves that bit set in the MMAP2 records it writes
     for the other events on the machine after one that asked (a
     perf_event_mmap_output defect, seen on 6.18 while live sampling ran
     beside a perf record): there the bytes are maj, min and ino.  */
  bool mmap_build_ids;
  uint64_t data_end;          /* file mode: end of the data section */
  struct attr_info *attrs;
  size_t n_attrs;
  struct st_hashmap *attr_by_id;  /* sample id -> attr index + 1 */
  char arch[32];
  uint64_t skipped_records;
  /* feature section build-ids, delivered before the first record */
  struct feature_record **build_ids;
  size_t n_build_ids;
  /* file mode: what the header says of the recording, delivered before
     the first record too */
  struct st_recording_event recording;
  uint64_t first_sample_time, last_sample_time;

  uint64_t live_offset;       /* live mode: bytes fed so far */
  bool in_place;              /* live mode: the record at hand stays put */
  uint64_t *lbr_ips;          /* a sample's LBR call stack as a chain */
  size_t lbr_cap;
  bool swapped;               /* written in the other byte order (perf-swap.c) */
  uint8_t *swap_buf[2];       /* a record in this machine's order; [1]: one
                                 out of a compressed record */
  struct st_perf_decompressor *zstd;  /* perf record -z, from the first one */
  bool decompressing;         /* the records at hand are zstd's output */
  bool record_malformed;      /* the last delivery failed on the record itself */
  /* Copies of queued records (-a's samples, decompressed or swapped ones)
     go back here when released, by size class (256 bytes to 64 KiB), for
     the next copy: a malloc and fresh pages for each 8 KiB sample cost
     more than copying it.  */
  struct {
    void **bufs;
    size_t n, cap;
  } pool[9];
  size_t pool_bytes;

  /* perf record --threads: a directory, whose header file's
     HEADER_DIR_FORMAT (version, 0 when absent) says that the records are
     also in the data.N files beside it (perf-dir.c).  While they are
     read, IN, DATA_END and ZSTD are those of the file at hand, FILE.  */
  uint64_t dir_version;
  struct st_perf_dir *dir;
  uint32_t file;
  uint32_t record_file;       /* the file of the record being decoded */

  /* state of one run */
  struct st_ordered_queue *queue;
  st_event_fn fn;
  void *fn_arg;
  struct st_why *err;
};

/* Records the input keeps (st_input_keep) stay where they were read until
   released, and a live ring's samples fed in place until the round after
   next; other records are copied before they are queued.  */
static inline bool
st_perf_records_stable (const struct st_perf_source *src)
{
  return src->in_place || (src->in != NULL && st_input_stable (src->in));
}

/* Records need not be aligned in a hostile file: copy the header out.  */
static inline struct perf_event_header
st_perf_record_header (const uint8_t *rec)
{
  struct perf_event_header h;
  memcpy (&h, rec, sizeof h);
  return h;
}

/* perf-header.c */
/* Records one attribute and the sample ids that select it; OFFSET is where
   it was read, for messages.  */
int st_perf_add_attr (struct st_perf_source *src, const uint8_t *attr, size_t attr_len,
                      const uint64_t *ids, size_t n_ids, uint64_t offset);
/* HEADER_ARCH, from a feature section or a pipe's feature record.  */
void st_perf_set_arch (struct st_perf_source *src, const uint8_t *data, size_t len);
/* HEADER_CPUDESC, HEADER_CLOCK_DATA and HEADER_SAMPLE_TIME into
   SRC->recording.  True when FEATURE was one of them.  */
bool st_perf_parse_recording_feature (struct st_perf_source *src, unsigned feature,
                                      const uint8_t *data, size_t len);

/* perf-dir.c: a perf.data directory's files, read merged by time.  */
/* Opens the data.N files beside SRC's input (whose header said
   HEADER_DIR_FORMAT): 0, or an error with SRC->err filled.  */
int st_perf_dir_open (struct st_perf_source *src);
void st_perf_dir_free (struct st_perf_dir *dir);
/* Reads every file to its end, NEXT reading and handling one record of
   SRC->in (0, 1 at its end, or an error), the files taken in the order
   of their records' times; releases from SRC->queue what no file can
   overtake any more.  Stops early when *STOP becomes non-zero.  */
int st_perf_dir_run (struct st_perf_source *src, int (*next) (struct st_perf_source *src),
                     volatile sig_atomic_t *stop);
/* A record of time TIME of the file at hand was queued (SRC->dir set).  */
void st_perf_dir_queued (struct st_perf_source *src, uint64_t time);
/* What the reading of the directory found, for the run's end (st_info).  */
void st_perf_dir_report (const struct st_perf_source *src);
/* The path of FILE, for messages: NULL for the header's own.  */
const char *st_perf_dir_file_name (const struct st_perf_source *src, uint32_t file);

/* perf-swap.c: the pieces of a perf.data of the other byte order, turned
   into this machine's order in place.  */
void st_perf_swap_file_header (struct perf_file_header *fh);
void st_perf_swap_attr (uint8_t *attr, size_t len);
void st_perf_swap_feature (unsigned feature, uint8_t *data, size_t len);
void st_perf_swap_record (const struct st_perf_source *src, uint8_t *rec, uint32_t size);

/* perf-record.c */
/* The byte offset of the sample id that picks REC's attribute, 0: none.  */
size_t st_perf_record_id_offset (const struct st_perf_source *src, const uint8_t *rec,
                                 uint32_t size);
const struct attr_info *st_perf_attr_for_record (const struct st_perf_source *src,
                                                 const uint8_t *rec, uint32_t size);
/* The size of the sample_id_all trailer of a non-sample record.  */
size_t st_perf_id_trailer_size (const struct attr_info *a);
/* The timestamp of a record, if it has one.  */
bool st_perf_record_time (const struct st_perf_source *src, const uint8_t *rec,
                          uint32_t size, uint64_t *time);
/* Decodes a kernel record at input OFFSET into *EV: 0, 1 for a record this
   tool has no use for, or -EBADMSG with src->err filled.  */
int st_perf_parse_record (struct st_perf_source *src, const uint8_t *rec, uint32_t size,
                          uint64_t offset, struct st_event *ev);
/* A HEADER_BUILD_ID record or feature-section entry, as an ST_EVENT_BUILD_ID.  */
int st_perf_parse_build_id_entry (struct st_perf_source *src, const uint8_t *rec,
                                  uint32_t size, uint64_t offset, struct st_event *ev);
