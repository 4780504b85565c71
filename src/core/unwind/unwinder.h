/* One unwinder: a process table with its Dwfls, a resolver and its files,
 * and the buffers to unwind and symbolize one sample at a time.
 *
 * libdw 0.188 is not thread-safe, so no libdw object is shared: parallel
 * unwinding runs one unwinder per thread, each fed every process event in
 * input order and its own share of the samples.  What the unwinders share
 * is our own tables of each file, symbols and unwind rows, built once per
 * run and immutable once published (opts.shared_files, file-shared.h).  What a result points
 * to stays valid after the unwinder has moved on: symbol names until the
 * unwinder is freed, the files' names and the mappings' paths until
 * st_unwinder_release_files says the result is written (--jobs), and the
 * thread's name is copied into it.  */
#pragma once

#include <string.h>

#include "core/unwind/callchain.h"
#include "core/event.h"
#include "core/unwind/regs.h"
#include "core/resolve/resolver.h"

struct st_unwinder_options {
  size_t max_frames;          /* --max-frames */
  bool inline_frames;         /* --inline */
  bool unwinder_libdwfl;      /* --unwinder=libdwfl: no unwind-rule cache */
  bool live;                  /* sampling processes that run now */
  /* NULL: the recording names none; each sample's is the ELF header's of
     the files it ran in.  */
  const struct st_regs_arch *arch;
  struct st_debuginfod *debuginfod; /* NULL: off; shared, it locks */
  struct st_ns_client *ns_client;   /* NULL: off; shared, it locks */
  const struct st_sysroot *sysroot; /* NULL: off; read-only, shared */
  unsigned containers;        /* --container: ST_CONTAINER_* kinds to detect */
  /* NULL: none; the files' tables every unwinder reads (file-shared.h) */
  struct st_shared_files *shared_files;
  /* NULL: no bound; the users' budgets for JIT files, shared by every
     unwinder (jit-budget.h), it locks */
  struct st_jit_budget *jit_budget;
};

struct st_unwound {
  struct st_frame *frames;    /* room for st_unwinder_max_out_frames() */
  size_t n_frames;
  enum st_stop_reason stop;
  const char *detail;
  uint64_t stack_needed;      /* st_unwind_result's: bytes of stack it read */
  /* Frames the unwind-rule cache stepped, and libdwfl (unwind-cache.h).  */
  size_t frames_by_cache, frames_by_libdwfl;
  /* The thread's name: comm_buf, or NULL when it was never named.  A copy,
     since a result may be written after later events renamed the thread
     or ended it (--jobs).  */
  const char *comm;
  char comm_buf[ST_COMM_SIZE];
  const struct st_container_label *container;  /* NULL: the host */
};

/* Sets OUT's name to a copy of COMM (NULL: none).  */
static inline void
st_unwound_set_comm (struct st_unwound *out, const char *comm)
{
  if (comm == NULL)
    {
      out->comm = NULL;
      return;
    }
  size_t n = strnlen (comm, ST_COMM_SIZE - 1);
  memcpy (out->comm_buf, comm, n);
  out->comm_buf[n] = '\0';
  out->comm = out->comm_buf;
}

struct st_unwinder;

/* 0 or -ENOMEM.  */
int st_unwinder_new (const struct st_unwinder_options *opts, struct st_unwinder **out);
void st_unwinder_free (struct st_unwinder *u);

/* Frames a result can hold (more than max_frames with inline frames).  */
size_t st_unwinder_max_out_frames (const struct st_unwinder *u);

/* Applies a process event (mmap, comm, fork, exit, build-id).  */
int st_unwinder_event (struct st_unwinder *u, const struct st_event *ev);
/* The thread's name, as of the events applied so far.  */
const char *st_unwinder_comm (struct st_unwinder *u, pid_t pid, pid_t tid);
/* Unwinds and symbolizes SAMPLE into OUT.  Returns 0 or -ENOMEM.  */
int st_unwinder_sample (struct st_unwinder *u, const struct st_sample *sample,
                        struct st_unwound *out);

const struct st_resolver *st_unwinder_resolver (const struct st_unwinder *u);
/* Mappings not kept, of processes over their path budget (process.h).  */
uint64_t st_unwinder_mappings_refused (const struct st_unwinder *u);
/* Mappings its table gave no module: ST_PROCESS_MAX_MODULES (process.h).  */
uint64_t st_unwinder_modules_refused (const struct st_unwinder *u);
/* Processes that mapped more jitdumps than their JIT map reads (process.h).  */
uint64_t st_unwinder_jit_dumps_refused (const struct st_unwinder *u);
/* For a thread whose samples are written later, by another: the files
   let go and the mappings' paths dropped from now on are kept, with the
   names the frames point to, until st_unwinder_release_files says every
   sample before STAMP is written (resolver.h: st_resolver_park).  */
void st_unwinder_park_files (struct st_unwinder *u, uint64_t stamp);
void st_unwinder_release_files (struct st_unwinder *u, uint64_t written);
/* The architecture unwound: the options', or the first the files said.  */
const struct st_regs_arch *st_unwinder_arch (const struct st_unwinder *u);
