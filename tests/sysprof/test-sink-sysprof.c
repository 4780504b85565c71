/* -f sysprof, fed by hand: the frames Sysprof defines come out as Sysprof's
 * own reader reads them; a call chain or a stack copy too large for a frame
 * is cut, written and counted in a warning, never dropped; -m passthru
 * samples become stack-user frames with the stream's register order.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <sysprof-capture.h>

#include "core/output/sink.h"
#include "core/input/sysprof-format.h"

#define N_FRAMES 9000
#define PERF_MASK 0xff0fffULL   /* what perf record --call-graph dwarf samples */

static struct st_frame frames[N_FRAMES];
static uint8_t stack[65528];

/* Runs the sink over a few events and two samples; returns the capture's
   path and the sink's standard error in ERR.  */
static void
write_capture (char *path, char *err, size_t err_size)
{
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  FILE *out = fdopen (fd, "w");
  assert_non_null (out);
  char err_path[] = "/tmp/test-sink-sysprof-err.XXXXXX";
  int err_fd = mkstemp (err_path);
  assert_true (err_fd >= 0);
  int saved_stderr = dup (STDERR_FILENO);
  dup2 (err_fd, STDERR_FILENO);

  struct st_sink_options opts = { .output_name = path };
  struct st_sink *sink = st_sink_sysprof.new (out, &opts);
  assert_non_null (sink);

  struct st_event ev;
  memset (&ev, 0, sizeof ev);
  ev.kind = ST_EVENT_COMM;
  ev.time = 1000;
  ev.comm = (struct st_comm_event) { .pid = 7, .tid = 7, .comm = "worker" };
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);
  ev.kind = ST_EVENT_MMAP;
  ev.time = 1001;
  ev.mmap = (struct st_mmap_event) { .pid = 7, .tid = 7, .start = 0x400000, .len = 0x2000,
                                     .pgoff = 0x1000, .prot = PROT_READ | PROT_EXEC,
                                     .filename = "/usr/bin/worker" };
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);
  ev.mmap.prot = PROT_READ;   /* data: not for Sysprof */
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);
  ev.kind = ST_EVENT_FORK;
  ev.time = 1002;
  ev.task = (struct st_task_event) { .pid = 8, .ppid = 7, .tid = 8, .ptid = 7 };
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);
  ev.task = (struct st_task_event) { .pid = 7, .ppid = 7, .tid = 9, .ptid = 7 };
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);   /* a thread: nothing */

  /* A chain longer than a sample frame holds.  */
  for (size_t i = 0; i < N_FRAMES; i++)
    frames[i] = (struct st_frame) { .pc = 0x401000 + i, .activation = i == 0 };
  uint64_t kernel[2] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
  struct st_sample smp = { .pid = 7, .tid = 9, .time = 2000, .cpu = 1,
                           .n_kernel_ips = 2, .kernel_ips = kernel };
  struct st_callchain chain = { .sample = &smp, .comm = "worker", .frames = frames,
                                .n_frames = N_FRAMES, .stop = ST_STOP_FRAME_LIMIT };
  assert_int_equal (st_sink_sysprof.sample (sink, &chain), 0);

  /* -m passthru: a 64 KiB stack copy and perf's 20 registers.  */
  uint64_t regs[20];
  for (int i = 0; i < 20; i++)
    regs[i] = 100 + i;
  for (size_t i = 0; i < sizeof stack; i++)
    stack[i] = (uint8_t) i;
  struct st_sample raw = { .pid = 7, .tid = 7, .time = 3000, .cpu = 0, .abi = ST_REGS_ABI_64,
                           .regs_mask = PERF_MASK, .regs = regs, .n_regs = 20,
                           .stack = stack, .stack_size = sizeof stack };
  struct st_callchain passthru = { .sample = &raw, .stop = ST_STOP_NOT_UNWOUND };
  assert_int_equal (st_sink_sysprof.sample (sink, &passthru), 0);

  ev.kind = ST_EVENT_EXIT;
  ev.time = 4000;
  ev.task = (struct st_task_event) { .pid = 8, .ppid = 8, .tid = 8, .ptid = 8 };
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);

  assert_int_equal (st_sink_sysprof.finish (sink), 0);
  st_sink_sysprof.free (sink);
  assert_int_equal (fclose (out), 0);

  fflush (stderr);
  dup2 (saved_stderr, STDERR_FILENO);
  close (saved_stderr);
  ssize_t n = pread (err_fd, err, err_size - 1, 0);
  err[n > 0 ? n : 0] = '\0';
  close (err_fd);
  unlink (err_path);
}

static void
test_frames_read_back_and_nothing_dropped (void **state)
{
  char path[] = "/tmp/test-sink-sysprof.XXXXXX";
  char err[4096];
  write_capture (path, err, sizeof err);

  /* Both cuts were said, with their counts.  */
  assert_non_null (strstr (err, "1 samples had more frames than a Sysprof sample frame"));
  assert_non_null (strstr (err, "1 stack copies were larger than a Sysprof stack-user"));

  SysprofCaptureReader *r = sysprof_capture_reader_new (path);
  assert_non_null (r);
  assert_int_equal (sysprof_capture_reader_get_start_time (r), 1000);
  assert_int_equal (sysprof_capture_reader_get_end_time (r), 4000);
  SysprofCaptureFrameType type;

  const SysprofCaptureMap *m = sysprof_capture_reader_read_map (r);
  assert_non_null (m);
  assert_int_equal (m->start, 0x400000);
  assert_int_equal (m->end, 0x402000);
  assert_int_equal (m->offset, 0x1000);
  assert_int_equal (m->inode, 0);   /* as Sysprof's perf source: no inode check */
  assert_string_equal (m->filename, "/usr/bin/worker");

  const SysprofCaptureFork *f = sysprof_capture_reader_read_fork (r);
  assert_non_null (f);
  assert_int_equal (f->frame.pid, 7);
  assert_int_equal (f->child_pid, 8);

  /* Before the first sample: this machine's /proc/cpuinfo (no CPU model
     came with the input), as Sysprof's hostinfo source adds it.  */
  size_t chunks = 0;
  while (sysprof_capture_reader_peek_type (r, &type) && type == SYSPROF_CAPTURE_FRAME_FILE_CHUNK)
    {
      const SysprofCaptureFileChunk *fc = sysprof_capture_reader_read_file (r);
      assert_non_null (fc);
      assert_string_equal (fc->path, "/proc/cpuinfo");
      chunks++;
    }
  assert_true (chunks > 0);

  /* A name that did not come with an exec is held until the process's
     first sample: it cannot exec before that one any more.  */
  const SysprofCaptureProcess *p = sysprof_capture_reader_read_process (r);
  assert_non_null (p);
  assert_int_equal (p->frame.pid, 7);
  assert_int_equal (p->frame.time, 1000);
  assert_string_equal (p->cmdline, "worker");

  const SysprofCaptureSample *s = sysprof_capture_reader_read_sample (r);
  assert_non_null (s);
  assert_int_equal (s->frame.len, 65528);
  assert_int_equal (s->n_addrs, ST_SYSPROF_SAMPLE_MAX_ADDRS);
  assert_int_equal (s->tid, 9);
  assert_int_equal (s->addrs[0], ST_SYSPROF_CONTEXT_KERNEL);
  assert_int_equal (s->addrs[1], 0xffffffff81000010ULL);
  assert_int_equal (s->addrs[3], ST_SYSPROF_CONTEXT_USER);
  assert_int_equal (s->addrs[4], 0x401000);                /* the innermost frame */
  assert_int_equal (s->addrs[s->n_addrs - 1], 0x401000 + s->n_addrs - 5);
  sysprof_capture_reader_unref (r);

  /* The stack-user frame, which Sysprof's reader does not know: by hand. */
  int fd = open (path, O_RDONLY);
  assert_true (fd >= 0);
  static uint8_t data[1 << 18];
  ssize_t n = read (fd, data, sizeof data);
  close (fd);
  unlink (path);
  size_t at = 256;
  struct st_sysprof_frame h;
  for (;;)
    {
      assert_true (at + sizeof h <= (size_t) n);
      memcpy (&h, data + at, sizeof h);
      if (h.type == ST_SYSPROF_STACK_USER)
        break;
      at += h.len;
    }
  struct st_sysprof_stack_user su;
  memcpy (&su, data + at, sizeof su);
  assert_int_equal (su.frame.time, 3000);
  assert_true (su.frame.len <= ST_SYSPROF_FRAME_MAX);
  assert_int_equal (su.size, 65528 - 40 - 8 - 17 * 8);   /* cut to fit */
  assert_memory_equal (data + at + 40, stack, su.size);   /* from the stack pointer up */
  struct st_sysprof_user_regs ur;
  memcpy (&ur, data + at + 40 + su.size, sizeof ur);
  assert_int_equal (ur.n_regs, 17);
  assert_int_equal (ur.abi, 2);
  uint64_t got[17];
  memcpy (got, data + at + 40 + su.size + 8, sizeof got);
  /* AX..IP are perf registers 0..8, R8..R15 are 16..23: FLAGS..GS dropped. */
  assert_int_equal (got[8], 108);
  assert_int_equal (got[9], 100 + 12);   /* R8: the 13th of perf's 20 */
  assert_int_equal (got[16], 100 + 19);
  at += su.frame.len;

  /* The forked child never exec'd: its parent's name, at its exit.  */
  memcpy (&h, data + at, sizeof h);
  assert_int_equal (h.type, ST_SYSPROF_PROCESS);
  assert_int_equal (h.pid, 8);
  assert_string_equal ((const char *) data + at + sizeof (struct st_sysprof_process), "worker");
  at += h.len;

  memcpy (&h, data + at, sizeof h);
  assert_int_equal (h.type, ST_SYSPROF_EXIT);
  assert_int_equal (h.pid, 8);
  assert_int_equal (at + h.len, (size_t) n);   /* and nothing else */
}

static void
event (struct st_sink *sink, struct st_event ev)
{
  assert_int_equal (st_sink_sysprof.event (sink, &ev), 0);
}

static void
one_frame_sample (struct st_sink *sink, pid_t pid, uint64_t time, uint64_t pc)
{
  struct st_frame fr = { .pc = pc, .activation = true };
  struct st_sample smp = { .pid = pid, .tid = pid, .time = time };
  struct st_callchain chain = { .sample = &smp, .comm = "x", .frames = &fr, .n_frames = 1,
                                .stop = ST_STOP_END };
  assert_int_equal (st_sink_sysprof.sample (sink, &chain), 0);
}

#define MMAP_EV(t, p, s, f) \
  (struct st_event) { .kind = ST_EVENT_MMAP, .time = t, .mmap = { .pid = p, .tid = p, \
    .start = s, .len = 0x1000, .prot = PROT_READ | PROT_EXEC, .filename = f } }
#define COMM_EV(t, p, c, e) \
  (struct st_event) { .kind = ST_EVENT_COMM, .time = t, .comm = { .pid = p, .tid = p, \
    .comm = c, .exec = e } }
#define FORK_EV(t, parent, child) \
  (struct st_event) { .kind = ST_EVENT_FORK, .time = t, .task = { .pid = child, \
    .ppid = parent, .tid = child, .ptid = parent } }

/* As Sysprof reads a capture: a pid is named by its first PROCESS frame,
   and resolved with its own MAP frames only.  perf names a recorded
   command `perf-exec' before it execs; a forked child runs in its parent's
   maps until it execs.  */
static void
test_exec_names_and_inherited_maps (void **state)
{
  char path[] = "/tmp/test-sink-sysprof.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  FILE *out = fdopen (fd, "w");
  struct st_sink_options opts = { .output_name = path };
  struct st_sink *sink = st_sink_sysprof.new (out, &opts);
  assert_non_null (sink);
  struct st_event rec = { .kind = ST_EVENT_RECORDING };
  strcpy (rec.recording.cpu_model, "Test CPU 3000");
  rec.recording.wall_ns = 1700000000ULL * 1000000000ULL;   /* 2023-11-14T22:13:20Z */
  rec.recording.wall_at = 50;
  event (sink, rec);
  event (sink, COMM_EV (0, 10, "perf-exec", false));
  event (sink, COMM_EV (50, 10, "real", true));
  event (sink, MMAP_EV (51, 10, 0x500000, "/usr/bin/real"));
  event (sink, FORK_EV (52, 10, 11));
  one_frame_sample (sink, 11, 53, 0x500010);   /* before its exec */
  event (sink, COMM_EV (54, 11, "child", true));
  event (sink, MMAP_EV (55, 11, 0x600000, "/usr/bin/child"));
  one_frame_sample (sink, 11, 56, 0x600010);
  event (sink, FORK_EV (57, 10, 12));
  event (sink, COMM_EV (58, 12, "other", true));   /* exec'd before any sample */
  one_frame_sample (sink, 12, 59, 0x700010);
  one_frame_sample (sink, 10, 60, 0x500020);
  assert_int_equal (st_sink_sysprof.finish (sink), 0);
  st_sink_sysprof.free (sink);
  assert_int_equal (fclose (out), 0);

  SysprofCaptureReader *r = sysprof_capture_reader_new (path);
  assert_non_null (r);
  assert_string_equal (sysprof_capture_reader_get_time (r), "2023-11-14T22:13:20Z");
  const char *first_name[13] = { NULL };
  bool map_500[13] = { false }, map_600[13] = { false };
  const char *model = NULL;
  SysprofCaptureFrameType type;
  while (sysprof_capture_reader_peek_type (r, &type))
    switch (type)
      {
      case SYSPROF_CAPTURE_FRAME_PROCESS:
        {
          const SysprofCaptureProcess *p = sysprof_capture_reader_read_process (r);
          assert_non_null (p);
          assert_true (p->frame.pid >= 10 && p->frame.pid <= 12);
          assert_string_not_equal (p->cmdline, "perf-exec");
          if (first_name[p->frame.pid] == NULL)
            first_name[p->frame.pid] = strdup (p->cmdline);
          break;
        }
      case SYSPROF_CAPTURE_FRAME_MAP:
        {
          const SysprofCaptureMap *m = sysprof_capture_reader_read_map (r);
          assert_non_null (m);
          assert_int_equal (m->inode, 0);
          map_500[m->frame.pid] |= m->start == 0x500000;
          map_600[m->frame.pid] |= m->start == 0x600000;
          break;
        }
      case SYSPROF_CAPTURE_FRAME_FILE_CHUNK:
        {
          const SysprofCaptureFileChunk *fc = sysprof_capture_reader_read_file (r);
          assert_non_null (fc);
          assert_string_equal (fc->path, "/proc/cpuinfo");
          model = strndup ((const char *) fc->data, fc->len);
          break;
        }
      default:
        assert_true (sysprof_capture_reader_skip (r));
        break;
      }
  sysprof_capture_reader_unref (r);
  unlink (path);
  assert_string_equal (first_name[10], "real");
  assert_string_equal (first_name[11], "child");   /* its exec'd name, not its parent's */
  assert_string_equal (first_name[12], "other");
  assert_true (map_500[10] && map_500[11] && !map_500[12]);
  assert_true (map_600[11] && !map_600[10]);
  assert_string_equal (model, "model name\t: Test CPU 3000\n");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_frames_read_back_and_nothing_dropped),
    cmocka_unit_test (test_exec_names_and_inherited_maps),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
