/* The Sysprof capture reader: the file header, the frames read one by one
 * and checked, each delivered raw and, when the session needs it, decoded
 * (see source-sysprof.h).  What /proc adds for processes the stream gave no
 * maps: sysprof-proc.c.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "basic/bytes.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/unwind/regs.h"
#include "core/input/source-sysprof.h"
#include "core/input/sysprof-format.h"
#include "core/input/sysprof-reader.h"

bool
st_sysprof_source_probe (const uint8_t *magic, size_t len)
{
  return len >= 4 && st_get_u32 (magic) == ST_SYSPROF_MAGIC;
}

void
st_sysprof_source_free (struct st_sysprof_source *src)
{
  if (src == NULL)
    return;
  st_hashmap_free (src->pids);
  free (src->scratch);
  free (src);
}

ST_DEFINE_CLEANUP (sysprof_source_freep, struct st_sysprof_source, st_sysprof_source_free)

int
st_sysprof_source_open (struct st_input *in, struct st_sysprof_source **out,
                        struct st_why *err)
{
  _cleanup_ (sysprof_source_freep) struct st_sysprof_source *src = calloc (1, sizeof *src);
  if (src == NULL)
    return -ENOMEM;
  src->in = in;
  src->stream = !st_input_seekable (in);
  src->pids = st_hashmap_new (NULL);
  src->scratch = malloc (ST_SYSPROF_FRAME_MAX + 1);
  src->arch = st_regs_arch_lookup (NULL);
  int r = 0;
  if (src->pids == NULL || src->scratch == NULL)
    r = -ENOMEM;
  else if (src->arch == NULL)
    r = st_why_at (err, ENOTSUP, 0, "this machine's architecture cannot unwind the "
                   "registers of a Sysprof stream");
  if (r < 0)
    return r;
  src->regs_mask = st_regs_sample_mask (src->arch);
  src->mask_regs = (size_t) __builtin_popcountll (src->regs_mask);

  ssize_t n = st_input_read (in, &src->header, sizeof src->header);
  if (n < 0)
    r = n;
  else if ((size_t) n < sizeof src->header)
    r = st_why_at (err, EBADMSG, n, "truncated Sysprof file header (%zd of %zu bytes)",
                   n, sizeof src->header);
  else if (src->header.magic != ST_SYSPROF_MAGIC)
    r = st_why_at (err, EBADMSG, 0, "not a Sysprof capture (bad magic %#" PRIx32 ")",
                   src->header.magic);
  else if (!(src->header.flags & ST_SYSPROF_LITTLE_ENDIAN))
    r = st_why_at (err, ENOTSUP, offsetof (struct st_sysprof_file_header, flags),
                   "big-endian Sysprof capture: convert it on a big-endian "
                   "machine (sysprof-cat)");
  if (r < 0)
    return r;
  *out = ST_TAKE_PTR (src);
  return 0;
}

unsigned
st_sysprof_pid_flags (const struct st_sysprof_source *src, pid_t pid)
{
  return (unsigned) (uintptr_t) st_hashmap_get_u64 (src->pids, (uint32_t) pid);
}

int
st_sysprof_pid_set_flags (struct st_sysprof_source *src, pid_t pid, unsigned flags)
{
  if (flags == 0)
    {
      st_hashmap_remove_u64 (src->pids, (uint32_t) pid);
      return 0;
    }
  return st_hashmap_put_u64 (src->pids, (uint32_t) pid, (void *) (uintptr_t) flags);
}

static int
emit_raw (struct st_sysprof_source *src, const uint8_t *frame, size_t len, uint32_t type)
{
  struct st_sysprof_frame h;
  memcpy (&h, frame, sizeof h);
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_RAW;
  ev.time = h.time;
  ev.raw.type = type;
  ev.raw.pid = h.pid;
  ev.raw.cpu = h.cpu;
  ev.raw.data = frame;
  ev.raw.size = len;
  return src->fn (&ev, src->fn_arg);
}

/* A NUL-terminated copy of a frame's trailing string, however the frame
   ends (Sysprof's own reader forces the last byte to NUL).  */
static const char *
frame_string (struct st_sysprof_source *src, const uint8_t *p, size_t len)
{
  memcpy (src->scratch, p, len);
  src->scratch[len] = '\0';
  return (const char *) src->scratch;
}

/* The thread name a PROCESS frame's command line stands for: Sysprof's
   perf source writes the kernel's comm there, its /proc source the
   command line.  */
static void
comm_of_cmdline (const char *cmdline, char *comm, size_t size)
{
  size_t len = strlen (cmdline);
  if (len < 16 && strchr (cmdline, '/') == NULL)
    {
      snprintf (comm, size, "%s", cmdline);
      return;
    }
  size_t word = strcspn (cmdline, " ");
  const char *start = cmdline;
  for (size_t i = 0; i < word; i++)
    if (cmdline[i] == '/')
      start = cmdline + i + 1;
  size_t n = cmdline + word - start;
  if (n > 15)
    n = 15;
  snprintf (comm, size, "%.*s", (int) n, start);
}

bool
st_sysprof_is_code_path (const char *name)
{
  /* [heap], [stack] and friends name no file; the vdso is code.  */
  return name[0] != '\0' && (name[0] != '[' || strcmp (name, "[vdso]") == 0);
}

int
st_sysprof_handle_map (struct st_sysprof_source *src, const uint8_t *frame, size_t len,
                       uint64_t offset, bool from_proc, uint32_t prot)
{
  struct st_sysprof_map m;
  if (len < sizeof m)
    return st_why_at (src->err, EBADMSG, offset,
                      "map frame of %zu bytes is smaller than its %zu-byte header",
                      len, sizeof m);
  memcpy (&m, frame, sizeof m);
  if (m.end < m.start)
    return st_why_at (src->err, EBADMSG, offset + offsetof (struct st_sysprof_map, end),
                      "map frame ends (%#" PRIx64 ") before it starts (%#" PRIx64 ")",
                      m.end, m.start);
  int r = emit_raw (src, frame, len, ST_SYSPROF_MAP);
  if (r < 0)
    return r;
  pid_t pid = m.frame.pid;
  if (!from_proc)
    {
      r = st_sysprof_pid_set_flags (src, pid, st_sysprof_pid_flags (src, pid) | PID_STREAM_MAPS);
      if (r < 0)
        return r;
    }
  const char *name = frame_string (src, frame + sizeof m, len - sizeof m);
  if (!st_sysprof_is_code_path (name) || m.end == m.start)
    return 0;
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_MMAP;
  ev.time = m.frame.time;
  ev.mmap.pid = ev.mmap.tid = pid;
  ev.mmap.start = m.start;
  ev.mmap.len = m.end - m.start;
  ev.mmap.pgoff = m.offset;
  /* Sysprof's MAP frames say nothing of permissions: take them for code. */
  ev.mmap.prot = prot;
  ev.mmap.ino = m.inode;
  ev.mmap.filename = name;
  return src->fn (&ev, src->fn_arg);
}

int
st_sysprof_handle_process (struct st_sysprof_source *src, const uint8_t *frame, size_t len,
                           bool from_proc)
{
  struct st_sysprof_process p;
  memcpy (&p, frame, sizeof p);
  int r = emit_raw (src, frame, len, ST_SYSPROF_PROCESS);
  if (r < 0)
    return r;
  pid_t pid = p.frame.pid;
  unsigned flags = st_sysprof_pid_flags (src, pid);
  /* A process named again may have exec'd.  When its maps came from the
     stream, the new image's MAP frames replace the old ones; when they
     came from /proc, read them again at its next sample.  */
  bool exec = !from_proc && (flags & PID_PROC_MAPS);
  if (exec)
    flags &= ~(PID_PROC_MAPS | PID_PROC_TRIED);
  r = st_sysprof_pid_set_flags (src, pid, flags | PID_PROCESS_FRAME);
  if (r < 0)
    return r;
  char comm[16];
  comm_of_cmdline (frame_string (src, frame + sizeof p, len - sizeof p), comm, sizeof comm);
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_COMM;
  ev.time = p.frame.time;
  ev.comm.pid = ev.comm.tid = pid;
  ev.comm.exec = exec;
  ev.comm.comm = comm;
  return src->fn (&ev, src->fn_arg);
}

static int
handle_fork (struct st_sysprof_source *src, const uint8_t *frame, size_t len, uint64_t offset)
{
  struct st_sysprof_fork f;
  if (len < offsetof (struct st_sysprof_fork, child_pid) + sizeof f.child_pid)
    return st_why_at (src->err, EBADMSG, offset,
                      "fork frame of %zu bytes is smaller than its 28 bytes", len);
  memcpy (&f, frame, offsetof (struct st_sysprof_fork, child_pid) + sizeof f.child_pid);
  int r = emit_raw (src, frame, len, ST_SYSPROF_FORK);
  if (r < 0)
    return r;
  pid_t parent = f.frame.pid, child = f.child_pid;
  /* Sysprof writes a new thread as a fork of the process into itself.  */
  if (child <= 0 || child == parent)
    return 0;
  unsigned inherited = st_sysprof_pid_flags (src, parent) & (PID_STREAM_MAPS | PID_PROC_MAPS);
  r = st_sysprof_pid_set_flags (src, child, inherited | (inherited ? PID_PROC_TRIED : 0));
  if (r < 0)
    return r;
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_FORK;
  ev.time = f.frame.time;
  ev.task.pid = ev.task.tid = child;
  ev.task.ppid = ev.task.ptid = parent;
  return src->fn (&ev, src->fn_arg);
}

static int
handle_exit (struct st_sysprof_source *src, const uint8_t *frame, size_t len)
{
  struct st_sysprof_frame h;
  memcpy (&h, frame, sizeof h);
  int r = emit_raw (src, frame, len, ST_SYSPROF_EXIT);
  if (r < 0)
    return r;
  /* A later process with the same pid starts afresh.  */
  st_sysprof_pid_set_flags (src, h.pid, 0);
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_EXIT;
  ev.time = h.time;
  ev.task.pid = ev.task.tid = h.pid;
  ev.task.ppid = ev.task.ptid = -1;
  return src->fn (&ev, src->fn_arg);
}

/* A stack-user frame says only how many registers it carries and their
   ABI: the writer put in those of its own machine's unwinding mask
   (st_regs_sample_mask), and each architecture's count is its own.  This
   machine's is taken when it fits; the unwinder then reads them with the
   table the files' ELF headers name (a 32-bit task's by its ABI).  */
static const struct st_regs_arch *
regs_arch (const struct st_sysprof_source *src, uint32_t n_regs)
{
  static const char *const arches[] = {
    "x86_64", "aarch64", "i386", "arm", "ppc64le", "s390x", "riscv64",
  };
  if (n_regs == src->mask_regs)
    return src->arch;
  for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
    {
      const struct st_regs_arch *a = st_regs_arch_lookup (arches[i]);
      if (a != NULL && (uint32_t) __builtin_popcountll (st_regs_sample_mask (a)) == n_regs)
        return a;
    }
  return NULL;
}

static int
handle_stack_user (struct st_sysprof_source *src, const uint8_t *frame, size_t len,
                   uint64_t offset)
{
  const size_t head = sizeof (struct st_sysprof_stack_user);
  if (len < head)
    return st_why_at (src->err, EBADMSG, offset,
                      "stack-user frame of %zu bytes is smaller than its "
                      "%zu-byte header", len, head);
  struct st_sysprof_stack_user su;
  memcpy (&su, frame, head);
  if (su.size > len - head)
    return st_why_at (src->err, EBADMSG, offset + offsetof (struct st_sysprof_stack_user, size),
                      "stack-user stack size %" PRIu64 " overflows its %zu-byte frame",
                      su.size, len);
  size_t regs_at = head + su.size;
  struct st_sysprof_user_regs ur;
  if (len - regs_at < sizeof ur)
    return st_why_at (src->err, EBADMSG, offset + regs_at,
                      "stack-user registers header (8 bytes at frame offset %zu) "
                      "overflows its %zu-byte frame", regs_at, len);
  memcpy (&ur, frame + regs_at, sizeof ur);
  if (ur.n_regs > (len - regs_at - sizeof ur) / 8)
    return st_why_at (src->err, EBADMSG, offset + regs_at,
                      "stack-user n_regs %" PRIu32 " overflows its %zu-byte frame",
                      ur.n_regs, len);
  if (ur.n_regs > MAX_REGS)
    return st_why_at (src->err, EBADMSG, offset + regs_at,
                      "stack-user n_regs %" PRIu32 " is more than perf can sample "
                      "(%d)", ur.n_regs, MAX_REGS);
  if (ur.abi > ST_REGS_ABI_64)
    return st_why_at (src->err, EBADMSG, offset + regs_at + 4,
                      "unknown user register abi %" PRIu32, ur.abi);
  src->stack_user++;

  pid_t pid = su.frame.pid;
  if (!(st_sysprof_pid_flags (src, pid) & (PID_STREAM_MAPS | PID_PROC_TRIED)))
    {
      int r = st_sysprof_synthesize_from_proc (src, pid, su.frame.time);
      if (r < 0)
        return r;
    }

  /* The registers may sit at any alignment after the stack bytes.  */
  const struct st_regs_arch *arch = regs_arch (src, ur.n_regs);
  uint64_t mask = arch != NULL ? st_regs_sample_mask (arch) : src->regs_mask;
  size_t mask_regs = (size_t) __builtin_popcountll (mask);
  size_t n_regs = ur.n_regs < mask_regs ? ur.n_regs : mask_regs;
  memcpy (src->regs, frame + regs_at + sizeof ur, n_regs * 8);
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_SAMPLE;
  ev.time = su.frame.time;
  struct st_sample *s = &ev.sample;
  s->pid = pid;
  s->tid = su.tid;
  s->time = su.frame.time;
  s->cpu = (uint32_t) (int32_t) su.frame.cpu;
  s->user_mode = true;
  s->input_offset = offset;
  s->abi = ur.abi;
  if (ur.abi != ST_REGS_ABI_NONE)
    {
      s->regs_mask = mask;
      s->regs = src->regs;
      s->n_regs = n_regs;
      struct st_dwarf_regs dw;
      if (st_regs_to_dwarf (arch != NULL ? arch : src->arch, s, &dw) == 0)
        s->ip = dw.pc;
    }
  s->stack = frame + head;
  s->stack_size = su.size;
  return src->fn (&ev, src->fn_arg);
}

static int
handle_frame (struct st_sysprof_source *src, const uint8_t *frame, size_t len, uint64_t offset)
{
  struct st_sysprof_frame h;
  memcpy (&h, frame, sizeof h);
  uint32_t type = ST_SYSPROF_FRAME_TYPE (h.type);
  src->frames++;
  switch (type)
    {
    case ST_SYSPROF_STACK_USER:
      return handle_stack_user (src, frame, len, offset);
    case ST_SYSPROF_MAP:
      return st_sysprof_handle_map (src, frame, len, offset, false, PROT_READ | PROT_EXEC);
    case ST_SYSPROF_PROCESS:
      return st_sysprof_handle_process (src, frame, len, false);
    case ST_SYSPROF_FORK:
      return handle_fork (src, frame, len, offset);
    case ST_SYSPROF_EXIT:
      return handle_exit (src, frame, len);
    default:
      src->passed++;
      return emit_raw (src, frame, len, type);
    }
}

/* Reads one frame: 0 with *FRAME and *LEN, 1 at a clean end of input, or
   an error.  */
static int
read_frame (struct st_sysprof_source *src, const uint8_t **frame, size_t *len,
            uint64_t *offset)
{
  *offset = st_input_offset (src->in);
  const uint8_t *p;
  ssize_t n = st_input_peek (src->in, sizeof (struct st_sysprof_frame), &p);
  if (n < 0)
    return n;
  if (n == 0)
    return 1;
  if ((size_t) n < sizeof (struct st_sysprof_frame))
    return st_why_at (src->err, EBADMSG, *offset,
                      "truncated frame header (%zd of %zu bytes)", n,
                      sizeof (struct st_sysprof_frame));
  struct st_sysprof_frame h;
  memcpy (&h, p, sizeof h);
  uint32_t type = ST_SYSPROF_FRAME_TYPE (h.type);
  if (h.len < sizeof h)
    return st_why_at (src->err, EBADMSG, *offset,
                      "frame of type %" PRIu32 " has length %u, smaller than "
                      "its %zu-byte header", type, h.len, sizeof h);
  if (h.len % ST_SYSPROF_ALIGN != 0)
    return st_why_at (src->err, EBADMSG, *offset,
                      "frame of type %" PRIu32 " has length %u, not a multiple "
                      "of %d", type, h.len, ST_SYSPROF_ALIGN);
  if (st_input_seekable (src->in) && st_input_size (src->in) - *offset < h.len)
    return st_why_at (src->err, EBADMSG, *offset,
                      "frame of type %" PRIu32 " and %u bytes runs past the end "
                      "of the input (%" PRIu64 " bytes)", type, h.len,
                      st_input_size (src->in));
  *len = h.len;
  return st_input_next_record (src->in, h.len, frame, "frame", type, *offset, src->err);
}

int
st_sysprof_source_run (struct st_sysprof_source *src, st_event_fn fn, void *arg,
                       volatile sig_atomic_t *stop, struct st_why *err)
{
  src->fn = fn;
  src->fn_arg = arg;
  src->err = err;

  /* The file header, for a Sysprof output to keep.  */
  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_RAW;
  ev.time = src->header.time;
  ev.raw.type = ST_SYSPROF_RAW_FILE_HEADER;
  ev.raw.pid = -1;
  ev.raw.cpu = -1;
  ev.raw.data = (const uint8_t *) &src->header;
  ev.raw.size = sizeof src->header;
  int r = fn (&ev, arg);

  /* A stream (Sysprof's pipeline) is read to its end after the first stop:
     Sysprof stops its writer and closes the pipe, and what is still in the
     FIFO is the end of the capture.  A second stop gives up on the rest:
     -ECANCELED.  A read that a stop interrupted says -EINTR.  */
  bool reading_to_end = false;
  while (r == 0 || r == -EINTR)
    {
      if (r == -EINTR || (stop != NULL && *stop))
        {
          if (!src->stream)
            {
              r = r == -EINTR ? -EINTR : 0;
              break;
            }
          /* Two requests may have come before the first look.  */
          if (reading_to_end || (stop != NULL && *stop >= 2))
            {
              r = -ECANCELED;
              break;
            }
          reading_to_end = true;
          if (stop != NULL)
            *stop = 0;
          st_warning ("interrupted: reading the stream to its end (Ctrl-C again to stop "
                      "at once)");
        }
      const uint8_t *frame = NULL;
      size_t len = 0;
      uint64_t offset = 0;
      r = read_frame (src, &frame, &len, &offset);
      if (r == 0)
        {
          r = handle_frame (src, frame, len, offset);
          st_input_release_before (src->in, offset + len);
        }
    }
  return r == 1 ? 0 : r;
}

/* The generic face of this source (see source.h).  */
static const char *
sysprof_arch (const void *state)
{
  /* A capture does not name its machine: the files' ELF headers do (see
     regs_arch for the registers).  */
  return NULL;
}

static void
sysprof_report (const void *state)
{
  const struct st_sysprof_source *src = state;
  st_info ("%s: %" PRIu64 " frames, %" PRIu64 " stack-user samples, %" PRIu64
           " other frames passed through", st_input_name (src->in), src->frames,
           src->stack_user, src->passed);
  if (src->proc_maps > 0)
    st_info ("%" PRIu64 " processes had no map frames: their maps were read from /proc",
             src->proc_maps);
  if (src->proc_skipped > 0)
    st_warning ("%" PRIu64 " processes had no map frames and no usable /proc entry: "
                "their samples cannot be unwound (see -v)", src->proc_skipped);
}

ST_DEFINE_FILE_SOURCE (st_source_sysprof, "sysprof", st_sysprof_source, sysprof_arch,
                       sysprof_report);
