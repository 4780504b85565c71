/* -f sysprof: a Sysprof capture (sysprof-format.h), from any input.
 *
 * The frames Sysprof defines (sample, map, process, fork, exit) are encoded
 * by Debian's libsysprof-capture-4 writer.  Three things it cannot do are
 * done here: the header (the writer stamps its own, with the current time
 * as the capture's start, which on a pipe cannot be corrected afterwards),
 * frames passed through byte for byte, and stack-user frames (type 18,
 * which the writer asserts against).  So the writer writes into a memfd,
 * and this sink relays its frames, after the header, in order with the
 * frames written here: everything reaches the output through one buffer.
 *
 * The input decides the rest.  A Sysprof input (its first event is the
 * file header, see source-sysprof.h) keeps its header, every frame the
 * unwinder did not consume passes through unchanged, and each stack-user
 * frame becomes a sample frame with the same cpu, pid, time and tid.  Any
 * other input (perf.data) gets a new header and process, map, fork and exit
 * frames from the events the session forwards, so that Sysprof can
 * symbolize it.
 *
 * A sample frame's addresses are what Sysprof's own perf source writes:
 * PERF_CONTEXT_KERNEL and the kernel frames, when the input has them, then
 * PERF_CONTEXT_USER and the raw user pcs, innermost first (the first one the
 * exact pc, the others return addresses).  Sysprof 3.46 symbolizes only
 * addresses that follow PERF_CONTEXT_USER.
 *
 * With -m passthru the samples are not unwound: each becomes a stack-user
 * frame with the stack copy and the registers in the order the stream
 * defines (x86_64: AX..IP, R8..R15): that is how a perf.data recording
 * becomes the stream that `eu-stacktrace -m naive' reads.
 *
 * A frame's length is a u16: a chain or a stack copy that would not fit is
 * cut (its outermost frames, the top of the stack copy), counted and warned
 * about; no sample is dropped.  The header's start is the first frame's
 * time (a Sysprof input keeps its own), and its end the last frame's, set
 * at the end when the output is a file.  */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sysprof-capture-writer.h>

#include "basic/log.h"
#include "core/unwind/regs.h"
#include "core/output/sink.h"
#include "core/output/sink-sysprof.h"
#include "core/output/sysprof-host.h"
#include "core/output/sysprof-procs.h"
#include "core/input/sysprof-format.h"

static void sysprof_free (struct st_sink *s);

static struct st_sink *
sysprof_new (FILE *out, const struct st_sink_options *opts)
{
  struct st_sink *s = calloc (1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->relay_fd = -1;
  s->buf = malloc (BUF_SIZE);
  s->arch = st_regs_arch_lookup (NULL);
  int memfd = memfd_create ("eu-stacktrace-sysprof", MFD_CLOEXEC);
  s->relay_fd = memfd >= 0 ? dup (memfd) : -1;
  /* The writer owns (and closes) MEMFD; RELAY_FD shares its offset.  */
  s->writer = s->relay_fd >= 0 ? sysprof_capture_writer_new_from_fd (memfd, 0) : NULL;
  if (s->writer == NULL && memfd >= 0)
    close (memfd);
  if (s->buf == NULL || s->arch == NULL || s->writer == NULL
      || st_sysprof_procs_new (&s->procs) < 0)
    {
      sysprof_free (s);
      return NULL;
    }
  s->regs_mask = st_regs_sample_mask (s->arch);
  s->fd = fileno (out);
  struct stat st;
  int fl = fcntl (s->fd, F_GETFL);
  s->seekable = fstat (s->fd, &st) == 0 && S_ISREG (st.st_mode) && fl >= 0
                && !(fl & O_APPEND) && lseek (s->fd, 0, SEEK_CUR) == 0;
  return s;
}

static void
sysprof_free (struct st_sink *s)
{
  st_sysprof_procs_free (s->procs);
  if (s->writer != NULL)
    sysprof_capture_writer_unref (s->writer);
  if (s->relay_fd >= 0)
    close (s->relay_fd);
  free (s->buf);
  free (s);
}

/* -m passthru: the sample as a stack-user frame, registers in the order
   the stream defines (the ones the sample lacks are 0).  */
static int
write_stack_user (struct st_sink *s, const struct st_sample *smp)
{
  uint64_t regs[64];
  size_t n_regs = 0;
  if (smp->abi != ST_REGS_ABI_NONE)
    for (int bit = 0; bit < 64; bit++)
      {
        if (!(s->regs_mask & (1ULL << bit)))
          continue;
        uint64_t v = 0;
        if (smp->regs_mask & (1ULL << bit))
          {
            size_t idx = (size_t) __builtin_popcountll (smp->regs_mask & ((1ULL << bit) - 1));
            if (idx < smp->n_regs)
              memcpy (&v, &smp->regs[idx], sizeof v);
          }
        regs[n_regs++] = v;
      }
  const size_t head = sizeof (struct st_sysprof_stack_user);
  const size_t tail = sizeof (struct st_sysprof_user_regs) + n_regs * 8;
  size_t size = smp->stack_size;
  size_t max = (ST_SYSPROF_FRAME_MAX & ~(size_t) (ST_SYSPROF_ALIGN - 1)) - head - tail;
  if (size > max)
    {
      /* The copy starts at the stack pointer: cutting its top loses only
         the outermost frames.  */
      if (s->cut_stacks++ == 0)
        st_warning ("sample at byte %" PRIu64 "%s%s: its %zu-byte stack copy is cut to %zu "
                    "bytes to fit a Sysprof frame", smp->input_offset,
                    smp->input_file != NULL ? " of " : "",
                    smp->input_file != NULL ? smp->input_file : "", size, max);
      size = max;
    }
  size_t len = st_sysprof_align (head + size + tail);
  uint8_t *p = st_sysprof_reserve (s, len);
  if (p == NULL)
    return s->error;
  struct st_sysprof_stack_user h = {
    .frame = { .len = len, .cpu = (int16_t) smp->cpu, .pid = smp->pid, .time = smp->time,
               .type = ST_SYSPROF_STACK_USER },
    .size = size,
    .tid = smp->tid,
  };
  memcpy (p, &h, head);
  if (size > 0)
    memcpy (p + head, smp->stack, size);
  struct st_sysprof_user_regs ur = { .n_regs = n_regs, .abi = smp->abi };
  memcpy (p + head + size, &ur, sizeof ur);
  memcpy (p + head + size + sizeof ur, regs, n_regs * 8);
  return 0;
}

static int before_sample (struct st_sink *s, pid_t pid, int64_t time);

static int
sysprof_sample (struct st_sink *s, const struct st_callchain *c)
{
  const struct st_sample *smp = c->sample;
  st_sysprof_start (s, NULL);
  if (s->error < 0)
    return s->error;
  st_sysprof_note_time (s, smp->time);
  if (before_sample (s, smp->pid, smp->time) < 0)
    return s->error;
  if (c->stop == ST_STOP_NOT_UNWOUND)
    return write_stack_user (s, smp);

  const size_t max = ST_SYSPROF_SAMPLE_MAX_ADDRS;
  size_t n = 0;
  if (smp->n_kernel_ips > 0)
    {
      s->addrs[n++] = ST_SYSPROF_CONTEXT_KERNEL;
      for (size_t i = 0; i < smp->n_kernel_ips && n < max / 2; i++)
        memcpy (&s->addrs[n++], &smp->kernel_ips[i], sizeof (uint64_t));
    }
  size_t user = 0;
  for (size_t i = 0; i < c->n_frames; i++)
    user += !c->frames[i].inlined;   /* inlined frames repeat a pc */
  if (user > 0)
    {
      s->addrs[n++] = ST_SYSPROF_CONTEXT_USER;
      if (user > max - n && s->cut_chains++ == 0)
        st_warning ("sample at byte %" PRIu64 "%s%s: its %zu frames are cut to %zu to fit a "
                    "Sysprof frame", smp->input_offset, smp->input_file != NULL ? " of " : "",
                    smp->input_file != NULL ? smp->input_file : "", user, max - n);
      for (size_t i = 0; i < c->n_frames && n < max; i++)
        if (!c->frames[i].inlined)
          s->addrs[n++] = c->frames[i].pc;
    }
  /* Sysprof's call graph skips a sample without addresses: a lone marker
     keeps it counted, under its process's row.  */
  if (n == 0)
    s->addrs[n++] = ST_SYSPROF_CONTEXT_USER;
  errno = 0;
  bool ok = sysprof_capture_writer_add_sample (s->writer, smp->time, (int16_t) smp->cpu,
                                               smp->pid, smp->tid, s->addrs, n);
  return st_sysprof_wrote (s, ok, sizeof (struct st_sysprof_sample) + n * 8);
}

/* A code mapping of PID.  Its inode is 0, as Sysprof's own perf source
   writes it: Sysprof checks a non-zero inode against the file on disk, so
   that a binary replaced by a same-content copy (a rebuild, `cp -p` and
   `mv`, another machine) would show as "inode mismatch".  */
static int
write_map (struct st_sink *s, pid_t pid, const struct st_sysprof_proc_map *m)
{
  errno = 0;
  bool ok = sysprof_capture_writer_add_map (s->writer, m->time, -1, pid, m->start, m->end,
                                            m->pgoff, 0, m->filename);
  return st_sysprof_wrote (s, ok, sizeof (struct st_sysprof_map) + strlen (m->filename) + 1);
}

/* The PROCESS frame that names P in Sysprof: its first one is the one
   Sysprof shows.  */
static int
write_process (struct st_sink *s, struct st_sysprof_proc *p)
{
  p->named = true;
  errno = 0;
  bool ok = sysprof_capture_writer_add_process (s->writer, p->name_time, -1, p->pid, p->name);
  return st_sysprof_wrote (s, ok, sizeof (struct st_sysprof_process) + strlen (p->name) + 1);
}

/* A name held back (of a forked child that never exec'd, or of a process
   the recording found running) is written when no better one can come.  */
static int
name_now (struct st_sink *s, struct st_sysprof_proc *p)
{
  if (p == NULL || p->named || p->name == NULL)
    return s->error;
  return write_process (s, p);
}

static int
name_now_cb (struct st_sysprof_proc *p, void *arg)
{
  return name_now (arg, p);
}

/* The CPU model, as Sysprof's recorder gives it: its hostinfo source adds
   /proc/cpuinfo as a file chunk (its details page shows the first "model
   name" line).  The recording's own model when its header has one (perf's
   HEADER_CPUDESC), else this machine's whole /proc/cpuinfo (a live
   capture: this is the machine).  */
static int
write_cpuinfo (struct st_sink *s, int64_t time)
{
  s->cpuinfo_written = true;
  char *text = NULL;
  size_t len = 0;
  int r = st_sysprof_cpuinfo_text (s->cpu_model, &text, &len);
  if (r < 0)
    {
      st_sysprof_fail (s, r);
      return s->error;
    }
  /* In chunks of 8 KiB, as Sysprof's writer splits a file.  */
  for (size_t at = 0; at < len && s->error == 0;)
    {
      size_t n = len - at < 8192 ? len - at : 8192;
      errno = 0;
      bool ok = sysprof_capture_writer_add_file (s->writer, time, -1, -1, "/proc/cpuinfo",
                                                 at + n == len, (const uint8_t *) text + at, n);
      st_sysprof_wrote (s, ok, sizeof (SysprofCaptureFileChunk) + n);
      at += n;
    }
  free (text);
  return s->error;
}

/* Before a sample of PID: the maps it inherited and has not been given
   yet, and the name of a process that was running before the recording
   (it will not exec before this sample).  */
static int
before_sample (struct st_sink *s, pid_t pid, int64_t time)
{
  if (!s->cpuinfo_written && !s->capture_input && write_cpuinfo (s, time) < 0)
    return s->error;
  struct st_sysprof_proc *p = st_sysprof_procs_get (s->procs, pid, false, NULL);
  if (p == NULL)
    return s->error;
  for (size_t i = 0; i < p->n_maps && s->error == 0; i++)
    if (!p->maps[i].written)
      {
        p->maps[i].written = true;
        write_map (s, pid, &p->maps[i]);
      }
  if (!p->forked)
    name_now (s, p);
  return s->error;
}

/* Keeps the process table of either kind of input: the names and maps of
   each pid.  WRITE: the input is not a capture, so the frames are this
   sink's to write.  */
static int
track_process_event (struct st_sink *s, const struct st_event *ev, bool write)
{
  struct st_sysprof_proc *p;
  int r = 0;
  switch (ev->kind)
    {
    case ST_EVENT_MMAP:
      /* Sysprof symbolizes code; data mappings would only weigh.  */
      if (!(ev->mmap.prot & PROT_EXEC))
        return 0;
      if ((p = st_sysprof_procs_get (s->procs, ev->mmap.pid, true, &r)) == NULL)
        return r;
      r = st_sysprof_proc_add_map (p, ev->mmap.start, ev->mmap.start + ev->mmap.len,
                                   ev->mmap.pgoff, ev->mmap.filename, ev->time, true);
      if (r == 0 && write)
        {
          struct st_sysprof_proc_map m = {
            .start = ev->mmap.start, .end = ev->mmap.start + ev->mmap.len,
            .pgoff = ev->mmap.pgoff, .time = ev->time, .filename = (char *) ev->mmap.filename,
          };
          r = write_map (s, ev->mmap.pid, &m);
        }
      return r;
    case ST_EVENT_COMM:
      /* A process's name; Sysprof has no thread names.  */
      if (ev->comm.pid != ev->comm.tid)
        return 0;
      if ((p = st_sysprof_procs_get (s->procs, ev->comm.pid, true, &r)) == NULL
          || (r = st_sysprof_proc_set_name (p, ev->comm.comm, ev->time)) < 0)
        return r;
      if (!write)
        {
          /* The stream's own PROCESS frame, written already.  After a fork
             it means an exec: the parent's maps are not the child's.  */
          p->named = true;
          if (p->forked)
            st_sysprof_proc_drop_unwritten (p);
          p->forked = false;
          return 0;
        }
      if (ev->comm.exec)
        {
          /* The name the process keeps: written at once, so that it is
             its first PROCESS frame (perf's `perf-exec' placeholder of the
             recorded command never is).  */
          st_sysprof_proc_clear_maps (p);
          p->forked = false;
          return write_process (s, p);
        }
      /* A rename, written for the readers of a stream; a first name
         waits (see before_sample).  */
      return p->named ? write_process (s, p) : 0;
    case ST_EVENT_FORK:
      if (ev->task.pid == ev->task.ppid)
        return 0;   /* a new thread */
      if ((r = st_sysprof_procs_fork (s->procs, ev->task.ppid, ev->task.pid, ev->time)) < 0
          || !write)
        return r;
      errno = 0;
      return st_sysprof_wrote (s, sysprof_capture_writer_add_fork (s->writer, ev->time, -1,
                                                                   ev->task.ppid,
                                                                   ev->task.pid),
                               sizeof (struct st_sysprof_fork));
    case ST_EVENT_EXIT:
      if (ev->task.pid != ev->task.tid)
        return 0;   /* a thread */
      name_now (s, st_sysprof_procs_get (s->procs, ev->task.pid, false, NULL));
      st_sysprof_procs_remove (s->procs, ev->task.pid);
      if (!write || s->error < 0)
        return s->error;
      errno = 0;
      return st_sysprof_wrote (s, sysprof_capture_writer_add_exit (s->writer, ev->time, -1,
                                                                   ev->task.pid),
                               sizeof (struct st_sysprof_frame));
    default:
      return 0;
    }
}

static int
sysprof_event (struct st_sink *s, const struct st_event *ev)
{
  st_sysprof_start (s, ev);
  if (s->error < 0)
    return s->error;
  if (!s->capture_input && ev->kind == ST_EVENT_RECORDING)
    {
      if (ev->recording.cpu_model[0] != '\0')
        memcpy (s->cpu_model, ev->recording.cpu_model, sizeof s->cpu_model);
      if (ev->recording.wall_ns > 0)
        {
          s->clock.wall_ns = ev->recording.wall_ns;
          s->clock.wall_at = ev->recording.wall_at;
          s->clock.from_file = ev->recording.wall_from_file;
        }
      return s->error;
    }
  if (!s->capture_input)
    {
      int r = track_process_event (s, ev, true);
      if (r < 0)
        st_sysprof_fail (s, r);
      st_sysprof_note_time (s, ev->time);
      return s->error;
    }
  /* A Sysprof input: its frames, verbatim.  Its MAP, PROCESS, FORK and
     EXIT frames also come decoded, after their raw bytes: those are
     twins of frames already written.  */
  if (ev->kind != ST_EVENT_RAW)
    {
      int r = track_process_event (s, ev, false);
      if (r < 0)
        st_sysprof_fail (s, r);
      return s->error;
    }
  if (ev->raw.type == ST_SYSPROF_RAW_FILE_HEADER)
    return 0;
  st_sysprof_note_time (s, ev->time);
  uint8_t *p = st_sysprof_reserve (s, ev->raw.size);
  if (p != NULL)
    memcpy (p, ev->raw.data, ev->raw.size);
  return s->error;
}

/* The header's times, once every frame is known.  */
static void
fix_header (struct st_sink *s)
{
  int64_t times[2] = { s->header.time, s->header.end_time };
  if (!s->capture_input && s->first_time > 0)
    times[0] = s->first_time;
  if (s->last_time > times[1])
    times[1] = s->last_time;
  if (times[1] < times[0])
    times[1] = times[0];   /* no timed frame (stopped before the first sample) */
  static_assert (offsetof (struct st_sysprof_file_header, end_time)
                 == offsetof (struct st_sysprof_file_header, time) + 8, "time fields");
  if (pwrite (s->fd, times, sizeof times, offsetof (struct st_sysprof_file_header, time))
      != (ssize_t) sizeof times)
    st_sysprof_fail (s, -errno);
  if (!s->capture_input && s->error == 0)
    {
      st_sysprof_set_capture_time (s, times[0]);
      const size_t n = sizeof s->header.capture_time;
      if (pwrite (s->fd, s->header.capture_time, n,
                  offsetof (struct st_sysprof_file_header, capture_time)) != (ssize_t) n)
        st_sysprof_fail (s, -errno);
    }
}

static int
sysprof_finish (struct st_sink *s)
{
  /* -m none, or an input without events: a header and no frame.  */
  st_sysprof_start (s, NULL);
  st_sysprof_procs_foreach (s->procs, name_now_cb, s);
  st_sysprof_relay (s);
  if (s->error == 0)
    {
      if (!s->header_written && s->last_time > s->header.end_time)
        s->header.end_time = s->last_time;   /* known before the first write */
      st_sysprof_flush_buf (s);
    }
  if (s->error == 0 && s->seekable)
    fix_header (s);
  if (s->cut_chains > 0)
    st_warning ("%" PRIu64 " samples had more frames than a Sysprof sample frame holds "
                "(%zu addresses): their outermost frames were cut", s->cut_chains,
                (size_t) ST_SYSPROF_SAMPLE_MAX_ADDRS);
  if (s->cut_stacks > 0)
    st_warning ("%" PRIu64 " stack copies were larger than a Sysprof stack-user frame "
                "holds: their top was cut, and their unwinding may stop early",
                s->cut_stacks);
  return s->error;
}

const struct st_sink_ops st_sink_sysprof = {
  .name = "sysprof",
  .description = "a Sysprof capture (process, map and call-chain frames)",
  .whole_file = true,
  .new = sysprof_new,
  .sample = sysprof_sample,
  .event = sysprof_event,
  .finish = sysprof_finish,
  .free = sysprof_free,
};
