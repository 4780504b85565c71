/* Buffered reading of an input file or pipe, with the byte offset of every
 * read known, so that an error can always say where it happened.  */
#pragma once

#include <signal.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_input;

/* PATH "-" is standard input.  Returns 0 or -errno.  */
int st_input_open (const char *path, struct st_input **out);
/* The same for a descriptor opened by the caller, which IN then owns (and
   closes, also when this fails): NAME is its path, for messages.  */
int st_input_open_fd (int fd, const char *name, struct st_input **out);
/* The same for one of many inputs read side by side (a perf.data
   directory's files): its buffer is 128 KiB, not 2 MiB, and only the
   pages read into are there.  */
int st_input_open_small (int fd, const char *name, struct st_input **out);
void st_input_free (struct st_input *in);
/* A pipe or FIFO that has nothing to read blocks until it has, unless
   *FLAG is set (a stop was asked for): reads then return -EINTR, however
   the signal's handler was installed (SA_RESTART).  */
void st_input_set_interrupt (struct st_input *in, volatile sig_atomic_t *flag);

const char *st_input_name (const struct st_input *in);
bool st_input_seekable (const struct st_input *in);
uint64_t st_input_offset (const struct st_input *in);
/* The file's size when seekable, else 0.  */
uint64_t st_input_size (const struct st_input *in);

/* Consumes the next N bytes and points *DATA at them.  Returns N, fewer at
   end of input, or -errno.  The bytes stay valid until the next call on IN,
   or for as long as IN lives when st_input_stable() says so.  */
ssize_t st_input_next (struct st_input *in, size_t n, const uint8_t **data);
/* The whole of a record of N bytes whose header is at OFFSET: 0, -errno,
   or -EBADMSG with ERR saying "truncated WHAT: type TYPE says N bytes, the
   input has M" when the input ends first.  */
struct st_why;
int st_input_next_record (struct st_input *in, size_t n, const uint8_t **data,
                          const char *what, uint32_t type, uint64_t offset,
                          struct st_why *err);
/* True when st_input_next() pointers stay valid until
   st_input_release_before() passes them, so records need not be copied:
   after st_input_keep().  */
bool st_input_stable (const struct st_input *in);
/* From now on, bytes st_input_next() consumed stay where they are until
   st_input_release_before() passes them.  The caller must release as it
   goes: kept bytes are memory.  */
void st_input_keep (struct st_input *in);
/* Tells the input that nothing before OFFSET will be read again: a kept
   buffer wholly before it is let go.  */
void st_input_release_before (struct st_input *in, uint64_t offset);
/* A second holder of kept records (the unwinding threads): nothing from
   OFFSET on is let go, whatever st_input_release_before says, until the
   next st_input_hold.  UINT64_MAX holds nothing.  */
void st_input_hold (struct st_input *in, uint64_t offset);
/* True when P lies in bytes IN keeps: st_input_hold can keep them.  */
bool st_input_holds (const struct st_input *in, const void *p);

/* Makes the next N bytes visible without consuming them.  Returns how many
   are available (less than N only at end of input) or -errno.  */
ssize_t st_input_peek (struct st_input *in, size_t n, const uint8_t **data);
/* Reads exactly N bytes.  Returns N, fewer at end of input, or -errno.  */
ssize_t st_input_read (struct st_input *in, void *buf, size_t n);
/* Skips N bytes; returns N, fewer at end of input, or -errno.  */
ssize_t st_input_skip (struct st_input *in, uint64_t n);
/* Repositions a seekable input.  */
int st_input_seek (struct st_input *in, uint64_t offset);
/* Reads at an absolute offset without moving the stream (seekable only).  */
ssize_t st_input_pread (struct st_input *in, void *buf, size_t n, uint64_t offset);
