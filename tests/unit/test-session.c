/* The session between a source and a sink: fed the events of a real sample
 * of this very process (its registers and a copy of its stack, taken three
 * calls deep, and its executable mappings from /proc/self/maps, as the live
 * source describes a running process), it unwinds the sample with libdwfl
 * and hands the folded sink the call chain this file knows it has, the same
 * with one unwinding thread or several, and counts what it was given.  */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/procfs.h"
#include "core/event.h"
#include "core/output/sink.h"
#include "core/session.h"
#include "core/unwind/regs.h"

#if !defined __x86_64__
#error "test-session takes its sample with x86_64 instructions: port take_sample"
#endif

/* perf's x86_64 user registers: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS
   ES FS GS R8..R15; perf record samples all but the segment registers.  */
#define REGS_MASK 0xff0fffULL
#define PERF_REG_SP 7
#define PERF_REG_IP 8

static uint64_t sampled_regs[24];
static uint8_t sampled_stack[65536];
static size_t sampled_stack_size;

struct stack_walk {
  uint64_t sp, end;
};

static int
find_stack (const struct st_proc_map *m, void *arg)
{
  struct stack_walk *w = arg;
  if (w->sp >= m->start && w->sp < m->end)
    {
      w->end = m->end;
      return 1;
    }
  return 0;
}

/* What the kernel does at a sample: the user registers, then the stack
   from the stack pointer up, as much as fits (and as the stack has).  The
   registers are read in one asm statement, so that the pc it records and
   the stack pointer belong to the same instruction's CFI row.  */
static __attribute__ ((noinline, noclone)) void
take_sample (void)
{
  __asm__ volatile ("mov %%rbx, 8(%0)\n\t"
                    "mov %%rcx, 16(%0)\n\t"
                    "mov %%rdx, 24(%0)\n\t"
                    "mov %%rsi, 32(%0)\n\t"
                    "mov %%rdi, 40(%0)\n\t"
                    "mov %%rbp, 48(%0)\n\t"
                    "mov %%rsp, 56(%0)\n\t"
                    "mov %%r8, 128(%0)\n\t"
                    "mov %%r9, 136(%0)\n\t"
                    "mov %%r10, 144(%0)\n\t"
                    "mov %%r11, 152(%0)\n\t"
                    "mov %%r12, 160(%0)\n\t"
                    "mov %%r13, 168(%0)\n\t"
                    "mov %%r14, 176(%0)\n\t"
                    "mov %%r15, 184(%0)\n\t"
                    "lea 0(%%rip), %%rax\n\t"
                    "mov %%rax, 64(%0)\n\t"
                    "mov %%rax, 0(%0)"
                    : : "r" (sampled_regs) : "rax", "memory");
  struct stack_walk w = { sampled_regs[PERF_REG_SP], 0 };
  st_proc_maps_foreach (getpid (), find_stack, &w);
  size_t n = sizeof sampled_stack;
  if (w.end != 0 && w.end - w.sp < n)
    n = w.end - w.sp;
  memcpy (sampled_stack, (const void *) (uintptr_t) w.sp, n);
  sampled_stack_size = n;
}

/* The chain the sample must unwind to.  An empty asm after each call keeps
   the compiler from turning it into a jump (a tail call leaves no frame). */
static __attribute__ ((noinline, noclone)) void
level_two (void)
{
  take_sample ();
  __asm__ volatile ("" ::: "memory");
}

static __attribute__ ((noinline, noclone)) void
level_one (void)
{
  level_two ();
  __asm__ volatile ("" ::: "memory");
}

struct feed {
  struct st_session *session;
  pid_t pid;
  unsigned mmaps;
  int error;
};

static int
feed_map (const struct st_proc_map *m, void *arg)
{
  struct feed *f = arg;
  if (m->perms[2] != 'x' || m->name[0] != '/')
    return 0;
  struct st_event ev = { .kind = ST_EVENT_MMAP };
  ev.mmap = (struct st_mmap_event) {
    .pid = f->pid, .tid = f->pid, .start = m->start, .len = m->end - m->start,
    .pgoff = m->pgoff, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
    .has_dev_ino = true, .maj = m->maj, .min = m->min, .ino = m->inode,
    .filename = m->name,
  };
  f->error = st_session_handle_event (&ev, f->session);
  f->mmaps++;
  return f->error < 0;
}

/* Runs a session with JOBS threads over this process's name, its maps and
   N_SAMPLES copies of the sample; returns the folded output.  */
static char *
run_session (unsigned jobs, unsigned n_samples, struct st_stats *stats, unsigned *n_mmaps)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  assert_non_null (out);
  const struct st_sink_ops *ops = st_sink_lookup ("folded");
  assert_non_null (ops);
  struct st_sink_options sink_opts = { .width = 1200, .min_width = 0.1 };
  struct st_sink *sink = ops->new (out, &sink_opts);
  assert_non_null (sink);
  const struct st_regs_arch *arch = st_regs_arch_lookup (NULL);
  assert_non_null (arch);
  struct st_session_options opts = {
    .mode = ST_MODE_NAIVE, .max_frames = 256, .arch = arch, .jobs = jobs,
  };
  struct st_session *s = NULL;
  assert_int_equal (st_session_new (&opts, sink, ops, &s), 0);

  pid_t pid = getpid ();
  struct st_event ev = { .kind = ST_EVENT_COMM, .time = 1 };
  ev.comm = (struct st_comm_event) { .pid = pid, .tid = pid, .comm = "test-session" };
  assert_int_equal (st_session_handle_event (&ev, s), 0);
  struct feed f = { s, pid, 0, 0 };
  assert_true (st_proc_maps_foreach (pid, feed_map, &f) >= 0);
  assert_int_equal (f.error, 0);
  *n_mmaps = f.mmaps;

  /* In perf's order, only the registers of the mask.  */
  uint64_t regs[24];
  size_t n_regs = 0;
  for (int i = 0; i < 24; i++)
    if (REGS_MASK & (1ULL << i))
      regs[n_regs++] = sampled_regs[i];
  for (unsigned i = 0; i < n_samples; i++)
    {
      struct st_event sev = { .kind = ST_EVENT_SAMPLE, .time = 10 + i };
      sev.sample = (struct st_sample) {
        .pid = pid, .tid = pid, .time = 10 + i, .period = 1000000,
        .ip = sampled_regs[PERF_REG_IP], .user_mode = true, .abi = ST_REGS_ABI_64,
        .regs_mask = REGS_MASK, .regs = regs, .n_regs = n_regs,
        .stack = sampled_stack, .stack_size = sampled_stack_size,
      };
      assert_int_equal (st_session_handle_event (&sev, s), 0);
    }
  assert_int_equal (st_session_finish (s), 0);
  assert_int_equal (st_session_output_error (s), 0);
  *stats = *st_session_stats (s);
  st_session_free (s);
  ops->free (sink);
  fclose (out);
  return text;
}

static void
test_session_unwinds_a_real_sample_into_the_known_chain (void **state)
{
  (void) state;
  level_one ();
  struct st_stats st;
  unsigned n_mmaps;
  char *text = run_session (1, 1, &st, &n_mmaps);
  print_message ("# folded: %s", text);
  /* One stack, seen once: the process's name, then the callers from the
     outermost, down to the function that took the sample.  */
  assert_true (strncmp (text, "test-session;", 13) == 0);
  assert_non_null (strstr (text, ";main;"));
  assert_non_null (strstr (text, ";test_session_unwinds_a_real_sample_into_the_known_chain;"
                                 "level_one;level_two;take_sample 1\n"));
  size_t lines = 0;
  for (const char *p = text; *p; p++)
    lines += *p == '\n';
  assert_int_equal (lines, 1);
  assert_int_equal (st.samples, 1);
  assert_int_equal (st.unwound, 1);
  assert_true (st.frames >= 5);
  assert_int_equal (st.mmaps, n_mmaps);
  assert_int_equal (st.comms, 1);
  free (text);
}

static void
test_several_threads_write_what_one_writes (void **state)
{
  (void) state;
  level_one ();
  struct st_stats one, four;
  unsigned n_mmaps;
  char *a = run_session (1, 200, &one, &n_mmaps);
  char *b = run_session (4, 200, &four, &n_mmaps);
  assert_string_equal (a, b);
  assert_non_null (strstr (a, "level_one;level_two;take_sample 200\n"));
  assert_int_equal (one.samples, 200);
  assert_int_equal (four.samples, 200);
  assert_int_equal (one.unwound, 200);
  assert_int_equal (four.unwound, 200);
  assert_int_equal (one.frames, four.frames);
  free (a);
  free (b);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_session_unwinds_a_real_sample_into_the_known_chain),
    cmocka_unit_test (test_several_threads_write_what_one_writes),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
