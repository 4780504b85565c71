/* PERF_RECORD_COMPRESSED (perf record -z): the kernel records perf read
 * from its ring buffers, zstd-compressed as one stream.  A record may be cut
 * between two compressed records (a ring buffer that wrapped), so the tail
 * of one is kept for the next, as perf's own reader does.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_why;
struct st_perf_decompressor;

int st_perf_decompressor_new (struct st_perf_decompressor **out);
void st_perf_decompressor_free (struct st_perf_decompressor *d);

/* Called for each whole record decompressed; REC is valid during the call
   only.  A negative return stops and is returned.  */
typedef int (*st_perf_record_fn) (const uint8_t *rec, uint32_t size, void *arg);

/* Decompresses PAYLOAD (a compressed record without its 8-byte header) and
   calls FN for each record it completes.  Returns 0, FN's error, or
   -EBADMSG with WHY saying what the zstd stream or a record got wrong.  */
int st_perf_decompress (struct st_perf_decompressor *d, const uint8_t *payload, size_t len,
                        st_perf_record_fn fn, void *arg, struct st_why *why);

/* The records inside are of the other byte order (their sizes are read
   swapped; the records themselves are handed out as they are).  */
void st_perf_decompressor_set_swapped (struct st_perf_decompressor *d, bool swapped);

/* Bytes left over that no record completed (a cut stream at the end).  */
size_t st_perf_decompressor_pending (const struct st_perf_decompressor *d);
