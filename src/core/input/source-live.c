#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/input/perf-format.h"
#include "basic/procfs.h"
#include "basic/signals.h"
#include "core/input/source-live.h"
#include "core/input/source-perf.h"

/* Samples and process records (maps, names, forks, exits) go to separate
 * buffers, as perf record's side-band event does: a flood of short-lived
 * processes cannot push samples out, nor samples the maps they need, and
 * what the kernel reports lost in the sample buffer is samples only.
 *
 * The sample buffer: 2 MiB per CPU by default (--mmap-pages).  At 999 Hz
 * and 8 KiB stacks a CPU writes ~8 MiB/s, so this holds a quarter of a
 * second while the unwinder is busy; a bigger one mostly costs memory (the
 * pages count in our RSS, and a round of records is copied out).  The
 * side-band buffer, 512 KiB, holds the records of a few hundred new
 * processes (a dynamically linked exec writes ~2 KiB of them).  */
#define SIDEBAND_PAGES 128
#define POLL_MS 100

/* Processes whose exit records were lost would stay in the process table
 * for ever: every second (or every EVICT_EVERY new threads) each thread
 * seen is probed, and those that are gone get an exit record of ours.  */
#define SWEEP_NS 1000000000ull
#define EVICT_EVERY 4096

/* As `perf record --call-graph dwarf` asks: the kernel's own callchain
   (kernel part only) tells perf script to unwind the user part from the
   registers and stack, so a --record file reads like perf's.  */
#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU \
                     | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER \
                     | PERF_SAMPLE_STACK_USER)

struct ring {
  int fd;
  int cpu;
  bool sideband;
  size_t pages;
  struct perf_event_mmap_page *meta;
  uint8_t *data;
  uint64_t size;            /* bytes of data, a power of two */
};

struct dead_thread {
  pid_t pid, tid;
};

struct live {
  const struct st_live_options *opts;
  struct perf_event_attr attr;      /* samples */
  struct perf_event_attr sb_attr;   /* process records */
  unsigned pages;                   /* of each sample buffer */
  struct st_perf_source *parser;
  struct ring *rings;       /* one per CPU: the first event opened there */
  struct ring *sb_rings;    /* the same, for process records */
  size_t n_rings;
  /* What the parser delivers goes through live_event on its way to FN.  */
  st_event_fn fn;
  void *fn_arg;
  struct st_hashmap *threads;       /* tid -> pid, every thread seen */
  size_t threads_at_sweep;
  uint64_t last_sweep;              /* CLOCK_MONOTONIC ns */
  struct dead_thread *dead;
  size_t n_dead, cap_dead;
  uint64_t sideband_lost;
  uint64_t evicted;
  int *fds;                 /* every event, rings' included */
  size_t n_fds, cap_fds;
  pid_t child;
  FILE *record;             /* --record */
  uint64_t records;
  uint8_t wrap_buf[UINT16_MAX + 1];
};

static long
perf_event_open (struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long flags)
{
  return syscall (SYS_perf_event_open, attr, pid, cpu, group, flags);
}

static int
read_int_file (const char *path, int *value)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return -errno;
  int r = fscanf (f, "%d", value) == 1 ? 0 : -EINVAL;
  fclose (f);
  return r;
}

/* perf_event_open said no: say what to change, not what failed inside.  */
static void
explain_open_error (const struct live *lv, int err, pid_t pid)
{
  int paranoid = 2;
  read_int_file ("/proc/sys/kernel/perf_event_paranoid", &paranoid);
  if (err == EACCES || err == EPERM)
    {
      st_error ("not allowed to sample %s (kernel.perf_event_paranoid is %d): run as root, "
                "grant CAP_PERFMON (setcap cap_perfmon+ep), or lower it with "
                "`sysctl kernel.perf_event_paranoid=%d`",
                lv->opts->all_cpus ? "the whole machine" : "these processes", paranoid,
                lv->opts->all_cpus || lv->opts->kernel ? 0 : 1);
    }
  else if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
           && lv->opts->event == ST_LIVE_CYCLES)
    st_error ("this machine has no hardware cycle counter (a virtual machine?): "
              "use -e cpu-clock");
  else if (err == ESRCH)
    st_error ("process %d does not exist (any more)", pid);
  else if (err == EMFILE)
    st_error ("too many open files for one event per thread and CPU: raise `ulimit -n`");
  else
    st_error ("perf_event_open: %s", strerror (err));
}

static void
build_attr (struct live *lv)
{
  const struct st_live_options *o = lv->opts;
  struct perf_event_attr *a = &lv->attr;
  memset (a, 0, sizeof *a);
  a->size = sizeof *a;
  if (o->event == ST_LIVE_CYCLES)
    {
      a->type = PERF_TYPE_HARDWARE;
      a->config = PERF_COUNT_HW_CPU_CYCLES;
    }
  else
    {
      a->type = PERF_TYPE_SOFTWARE;
      a->config = PERF_COUNT_SW_CPU_CLOCK;
    }
  if (o->period != 0)
    a->sample_period = o->period;
  else
    {
      a->freq = 1;
      a->sample_freq = o->freq;
    }
  a->sample_type = SAMPLE_TYPE;
  a->sample_regs_user = st_regs_sample_mask (o->arch);
  a->sample_stack_user = o->stack_size;
  a->exclude_kernel = !o->kernel;
  a->exclude_hv = 1;
  a->exclude_callchain_kernel = !o->kernel;
  a->exclude_callchain_user = 1;
  a->sample_id_all = 1;
  a->watermark = 1;
  a->wakeup_watermark = lv->pages * getpagesize () / 4;
  a->disabled = 1;
  a->inherit = !o->all_cpus;
  a->enable_on_exec = o->command != NULL && !o->all_cpus;

  /* The process records come from a dummy event that never samples; its
     records have the same sample_id_all trailer, so one parser reads both
     buffers.  */
  struct perf_event_attr *sb = &lv->sb_attr;
  *sb = *a;
  sb->type = PERF_TYPE_SOFTWARE;
  sb->config = PERF_COUNT_SW_DUMMY;
  sb->freq = 0;
  sb->sample_period = 1;
  sb->mmap = 1;
  sb->mmap2 = 1;
  /* Data mappings too: perf's own unwinder reads .eh_frame_hdr through
     the read-only segment's mapping when it unwinds a --record file.  */
  sb->mmap_data = 1;
  sb->build_id = 1;
  sb->comm = 1;
  sb->comm_exec = 1;
  sb->task = 1;
  sb->namespaces = 1;
  sb->wakeup_watermark = SIDEBAND_PAGES * getpagesize () / 4;
}

static int
add_fd (struct live *lv, int fd)
{
  if (lv->n_fds == lv->cap_fds)
    {
      size_t cap = lv->cap_fds ? lv->cap_fds * 2 : 64;
      int *fds = realloc (lv->fds, cap * sizeof *fds);
      if (fds == NULL)
        return -ENOMEM;
      lv->fds = fds;
      lv->cap_fds = cap;
    }
  lv->fds[lv->n_fds++] = fd;
  return 0;
}

/* Opens one event of ATTR for PID on CPU R->cpu: the CPU's first gets the
   ring buffer, later ones write into it.  */
static int
open_one (struct live *lv, struct perf_event_attr *attr, pid_t pid, struct ring *r)
{
  int fd = perf_event_open (attr, pid, r->cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM) && attr->namespaces)
    {
      /* Namespace records need CAP_PERFMON; an unprivileged user
         profiling their own program goes on without them.  */
      st_info ("sampling without namespace records (they need CAP_PERFMON)");
      attr->namespaces = 0;
      fd = perf_event_open (attr, pid, r->cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
  if (fd < 0)
    {
      int e = errno;
      if (e == ESRCH && pid > 0 && !lv->opts->command)
        return -ESRCH;   /* a thread that just exited: not an error */
      explain_open_error (lv, e, pid);
      return -e;
    }
  if (add_fd (lv, fd) < 0)
    {
      close (fd);
      return -ENOMEM;
    }
  if (r->fd < 0)
    {
      size_t page = getpagesize ();
      void *map = mmap (NULL, (r->pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
                        fd, 0);
      if (map == MAP_FAILED)
        {
          int e = errno;
          st_error ("cannot map the %s buffer of CPU %d (%zu KiB): %s%s",
                    r->sideband ? "process record" : "sample", r->cpu, r->pages * page / 1024,
                    strerror (e),
                    e == EPERM ? " (use a smaller --mmap-pages, or raise "
                                 "kernel.perf_event_mlock_kb)" : "");
          return -e;
        }
      r->fd = fd;
      r->meta = map;
      r->data = (uint8_t *) map + page;
      r->size = (uint64_t) r->pages * page;
    }
  else if (ioctl (fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0)
    {
      st_error ("cannot share the sample buffer of CPU %d: %s", r->cpu, strerror (errno));
      return -errno;
    }
  return 0;
}

/* Opens the sampling event and the process-record event for PID on every
   CPU.  */
static int
open_for_pid (struct live *lv, pid_t pid)
{
  for (size_t c = 0; c < lv->n_rings; c++)
    {
      int r = open_one (lv, &lv->sb_attr, pid, &lv->sb_rings[c]);
      if (r == 0)
        r = open_one (lv, &lv->attr, pid, &lv->rings[c]);
      if (r < 0)
        return r;
    }
  return 0;
}

static int
online_cpus (struct live *lv)
{
  long n = sysconf (_SC_NPROCESSORS_CONF);
  if (n < 1)
    n = 1;
  lv->rings = calloc (n, sizeof *lv->rings);
  lv->sb_rings = calloc (n, sizeof *lv->sb_rings);
  if (lv->rings == NULL || lv->sb_rings == NULL)
    return -ENOMEM;
  for (long c = 0; c < n; c++)
    {
      char path[64];
      int online = 1;
      snprintf (path, sizeof path, "/sys/devices/system/cpu/cpu%ld/online", c);
      read_int_file (path, &online);   /* cpu0 often has no such file */
      if (!online)
        continue;
      lv->rings[lv->n_rings] = (struct ring) { .fd = -1, .cpu = c, .pages = lv->pages };
      lv->sb_rings[lv->n_rings++] = (struct ring) { .fd = -1, .cpu = c, .sideband = true,
                                                    .pages = SIDEBAND_PAGES };
    }
  return 0;
}

/* --record: the records as they come, in perf's pipe format, which
   `perf script -i` and `perf report -i` read from a file too.  */
static int
record_open (struct live *lv)
{
  if (lv->opts->record_path == NULL)
    return 0;
  lv->record = fopen (lv->opts->record_path, "we");
  if (lv->record == NULL)
    {
      st_error ("cannot open %s for writing: %s", lv->opts->record_path, strerror (errno));
      return -errno;
    }
  struct perf_pipe_file_header h = { PERF_MAGIC2, sizeof h };
  struct perf_event_header attr_h = { PERF_RECORD_HEADER_ATTR, 0,
                                      sizeof attr_h + sizeof lv->attr };
  fwrite (&h, sizeof h, 1, lv->record);
  fwrite (&attr_h, sizeof attr_h, 1, lv->record);
  fwrite (&lv->attr, sizeof lv->attr, 1, lv->record);
  return ferror (lv->record) ? -EIO : 0;
}

static int
feed (struct live *lv, const uint8_t *rec, uint32_t size)
{
  lv->records++;
  if (lv->record != NULL && fwrite (rec, size, 1, lv->record) != 1)
    {
      st_error ("writing %s: %s", lv->opts->record_path, strerror (errno));
      fclose (lv->record);
      lv->record = NULL;
    }
  return st_perf_source_feed (lv->parser, rec, size);
}

static int
end_round (struct live *lv)
{
  if (lv->record != NULL)
    {
      struct perf_event_header h = { PERF_RECORD_FINISHED_ROUND, 0, sizeof h };
      fwrite (&h, sizeof h, 1, lv->record);
    }
  return st_perf_source_end_round (lv->parser);
}

/* The sample_id_all trailer our attr implies: TID, TIME, CPU.  */
#define TRAILER_SIZE 24

static size_t
put_trailer (uint8_t *p, pid_t pid, pid_t tid, uint64_t time)
{
  uint32_t v[2] = { pid, tid };
  uint32_t cpu[2] = { 0, 0 };
  memcpy (p, v, 8);
  memcpy (p + 8, &time, 8);
  memcpy (p + 16, cpu, 8);
  return TRAILER_SIZE;
}

/* /proc/PID/task/TID/comm is not bounded by TASK_COMM_LEN: the kernel
   names workqueue workers from a 64-byte buffer ("kworker/u8:1-ext4-rsv-
   conversion" is 32 characters), so the record is sized for that.  */
#define PROC_COMM_MAX 64

/* Records for what a running process already has: its threads' names and
   its executable mappings, as perf record synthesizes them.  */
static int
synthesize_comm (struct live *lv, pid_t pid, pid_t tid)
{
  char path[64], comm[PROC_COMM_MAX] = "";
  snprintf (path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return 0;
  if (fgets (comm, sizeof comm, f) == NULL)
    comm[0] = '\0';
  fclose (f);
  comm[strcspn (comm, "\n")] = '\0';
  /* header, pid and tid, the name padded to 8 bytes, the trailer */
  uint8_t rec[8 + 8 + PROC_COMM_MAX + TRAILER_SIZE] = { 0 };
  size_t comm_len = strlen (comm) + 1;
  size_t name_len = (comm_len + 7) & ~7ul;
  assert (16 + name_len + TRAILER_SIZE <= sizeof rec);
  struct perf_event_header h = { PERF_RECORD_COMM, 0, 0 };
  uint32_t ids[2] = { pid, tid };
  memcpy (rec + 8, ids, 8);
  memcpy (rec + 16, comm, comm_len);
  size_t size = 16 + name_len;
  size += put_trailer (rec + size, pid, tid, 0);   /* before every real record */
  h.size = size;
  memcpy (rec, &h, sizeof h);
  return feed (lv, rec, size);
}

static int
synthesize_maps (struct live *lv, pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return 0;   /* gone, or a kernel thread */
  char *line = NULL;
  size_t cap = 0;
  int r = 0;
  while (r == 0 && getline (&line, &cap, f) > 0)
    {
      struct st_proc_map m;
      if (!st_proc_parse_maps_line (line, &m))
        continue;
      uint64_t start = m.start, end = m.end, pgoff = m.pgoff, ino = m.inode;
      unsigned maj = m.maj, min = m.min;
      const char *perms = m.perms, *name = m.name;
      /* Code, and the files it came from (as mmap_data reports them).  */
      if (perms[2] != 'x' && (name[0] != '/' || ino == 0))
        continue;
      if (name[0] == '\0')
        name = "//anon";
      size_t name_len = (strlen (name) + 1 + 7) & ~7ul;
      if (name_len > PATH_MAX)
        continue;
      uint8_t rec[72 + PATH_MAX + TRAILER_SIZE] = { 0 };
      assert (72 + name_len + TRAILER_SIZE <= sizeof rec);
      uint32_t u32[2] = { pid, pid };
      uint64_t u64[3] = { start, end - start, pgoff };
      uint32_t dev[2] = { maj, min };
      uint64_t inode[2] = { ino, 0 };
      uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0)
                      | (perms[2] == 'x' ? PROT_EXEC : 0);
      uint32_t flags[2] = { prot, perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE };
      memcpy (rec + 8, u32, 8);
      memcpy (rec + 16, u64, 24);
      memcpy (rec + 40, dev, 8);
      memcpy (rec + 48, inode, 16);
      memcpy (rec + 64, flags, 8);
      memcpy (rec + 72, name, strlen (name) + 1);
      size_t size = 72 + name_len;
      size += put_trailer (rec + size, pid, pid, 0);
      struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, size };
      memcpy (rec, &h, sizeof h);
      r = feed (lv, rec, size);
    }
  free (line);
  fclose (f);
  return r;
}

/* Calls FN (LV, PID, ID) for every numbered entry of DIR (/proc, or a
   process's task folder), until FN fails.  -ESRCH when DIR is gone.  */
static int
for_each_id (struct live *lv, const char *dir, pid_t pid,
             int (*fn) (struct live *, pid_t pid, pid_t id))
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return -ESRCH;
  int r = 0;
  struct dirent *e;
  while (r == 0 && (e = readdir (d)) != NULL)
    {
      pid_t id = atoi (e->d_name);
      if (id > 0)
        r = fn (lv, pid, id);
    }
  closedir (d);
  return r;
}

static int
synthesize_thread (struct live *lv, pid_t pid, pid_t tid)
{
  /* The leader went first: the process is named after it.  */
  return tid == pid ? 0 : synthesize_comm (lv, pid, tid);
}

static int
synthesize_process (struct live *lv, pid_t unused, pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task", pid);
  int r = synthesize_comm (lv, pid, pid);
  if (r == 0)
    r = for_each_id (lv, path, pid, synthesize_thread);
  if (r == -ESRCH)
    return 0;   /* it exited meanwhile */
  return r < 0 ? r : synthesize_maps (lv, pid);
}

static int
synthesize_all (struct live *lv)
{
  return for_each_id (lv, "/proc", 0, synthesize_process);
}

static int
open_for_thread (struct live *lv, pid_t pid, pid_t tid)
{
  int r = open_for_pid (lv, tid);
  return r == -ESRCH ? 0 : r;   /* a thread that just exited */
}

/* Every thread of PID gets its events (new threads inherit them).  */
static int
open_for_process (struct live *lv, pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task", pid);
  int r = for_each_id (lv, path, pid, open_for_thread);
  if (r == -ESRCH)
    st_error ("process %d does not exist", pid);
  return r;
}

/* Starts the command stopped before exec, so that its events exist before
   its first instruction; returns the write end of the pipe that lets it go. */
static int
spawn_command (struct live *lv, int *go_fd, int *exec_err_fd)
{
  int go[2], err[2];
  if (pipe2 (go, O_CLOEXEC) != 0 || pipe2 (err, O_CLOEXEC) != 0)
    return -errno;
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    return -errno;
  if (pid == 0)
    {
      close (go[1]);
      close (err[0]);
      /* Never orphaned: if the profiler dies (SIGKILL, a crash), so does
         the command.  The parent may have died before the prctl.  */
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid () != parent)
        _exit (127);
      st_signals_reset_for_exec ();
      char c;
      if (read (go[0], &c, 1) != 1)
        _exit (127);
      execvp (lv->opts->command[0], lv->opts->command);
      int e = errno;
      if (write (err[1], &e, sizeof e) < 0)
        _exit (127);
      _exit (127);
    }
  close (go[0]);
  close (err[1]);
  lv->child = pid;
  st_signals_set_child (pid);
  *go_fd = go[1];
  *exec_err_fd = err[0];
  return 0;
}

/* Reads every complete record of one ring buffer.  */
static int
drain_ring (struct live *lv, struct ring *ring)
{
  uint64_t head = __atomic_load_n (&ring->meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = ring->meta->data_tail;
  int r = 0;
  while (r == 0 && tail + sizeof (struct perf_event_header) <= head)
    {
      uint64_t off = tail & (ring->size - 1);
      struct perf_event_header h;
      for (size_t i = 0; i < sizeof h; i++)
        ((uint8_t *) &h)[i] = ring->data[(off + i) & (ring->size - 1)];
      if (h.size < sizeof h || h.size > head - tail)
        {
          st_error ("CPU %d: corrupt record in the sample buffer (size %u): skipping the "
                    "rest of this buffer", ring->cpu, h.size);
          tail = head;
          break;
        }
      const uint8_t *rec = ring->data + off;
      if (off + h.size > ring->size)
        {
          /* The record wraps around the end of the ring: piece it.  */
          size_t first = ring->size - off;
          memcpy (lv->wrap_buf, ring->data + off, first);
          memcpy (lv->wrap_buf + first, ring->data, h.size - first);
          rec = lv->wrap_buf;
        }
      if (ring->sideband && h.type == PERF_RECORD_EXIT && h.size >= 24)
        {
          /* Its own exit is on its way: a sweep adds none.  */
          uint32_t tid;
          memcpy (&tid, rec + 16, sizeof tid);
          st_hashmap_remove_u64 (lv->threads, tid);
        }
      if (ring->sideband && h.type == PERF_RECORD_LOST && h.size >= 24)
        {
          /* Process records lost, not samples: counted apart, and kept
             out of the samples' count.  */
          uint64_t n;
          memcpy (&n, rec + 16, sizeof n);
          lv->sideband_lost += n;
        }
      else
        r = feed (lv, rec, h.size);
      tail += h.size;
    }
  __atomic_store_n (&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
  return r;
}

static int
drain_rings (struct live *lv)
{
  for (size_t i = 0; i < lv->n_rings; i++)
    {
      /* Process records first: a sample's maps are read before it.  */
      struct ring *rings[2] = { &lv->sb_rings[i], &lv->rings[i] };
      for (size_t k = 0; k < 2; k++)
        if (rings[k]->fd >= 0)
          {
            int r = drain_ring (lv, rings[k]);
            if (r < 0)
              return r;
          }
    }
  return 0;
}

static int
drain_all (struct live *lv)
{
  int r = drain_rings (lv);
  return r < 0 ? r : end_round (lv);
}

/* Every thread the process table may hold an entry for is tracked, from
   the events on their way to it, until its exit goes the same way.  */
static int
track (struct live *lv, pid_t pid, pid_t tid)
{
  if (pid <= 0 || tid <= 0)
    return 0;
  int r = 0;
  if (st_hashmap_get_u64 (lv->threads, (uint32_t) tid) == NULL)
    r = st_hashmap_put_u64 (lv->threads, (uint32_t) tid, (void *) (uintptr_t) pid);
  /* The process's own entry goes with its leader's exit.  */
  if (r == 0 && tid != pid && st_hashmap_get_u64 (lv->threads, (uint32_t) pid) == NULL)
    r = st_hashmap_put_u64 (lv->threads, (uint32_t) pid, (void *) (uintptr_t) pid);
  return r;
}

static int
live_event (const struct st_event *ev, void *arg)
{
  struct live *lv = arg;
  int r = 0;
  switch (ev->kind)
    {
    case ST_EVENT_SAMPLE: r = track (lv, ev->sample.pid, ev->sample.tid); break;
    case ST_EVENT_MMAP: r = track (lv, ev->mmap.pid, ev->mmap.pid); break;
    case ST_EVENT_COMM: r = track (lv, ev->comm.pid, ev->comm.tid); break;
    case ST_EVENT_FORK: r = track (lv, ev->task.pid, ev->task.tid); break;
    case ST_EVENT_EXIT:
      st_hashmap_remove_u64 (lv->threads, (uint32_t) ev->task.tid);
      break;
    default: break;
    }
  if (r < 0)
    return r;
  return lv->fn (ev, lv->fn_arg);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int
probe_thread (const void *key, size_t len, void *value, void *arg)
{
  struct live *lv = arg;
  uint64_t tid;
  memcpy (&tid, key, sizeof tid);
  pid_t pid = (pid_t) (uintptr_t) value;
  /* A signal 0 to a thread of a process: ESRCH when either is gone (a
     zombie still answers; its exit record was written already).  */
  if (syscall (SYS_tgkill, pid, (pid_t) tid, 0) == 0 || errno != ESRCH)
    return 0;
  if (lv->n_dead == lv->cap_dead)
    {
      size_t cap = lv->cap_dead ? lv->cap_dead * 2 : 256;
      struct dead_thread *d = realloc (lv->dead, cap * sizeof *d);
      if (d == NULL)
        return -ENOMEM;
      lv->dead = d;
      lv->cap_dead = cap;
    }
  lv->dead[lv->n_dead++] = (struct dead_thread) { pid, (pid_t) tid };
  return 0;
}

/* Finds the threads that are gone, when a sweep is due.  Before the rings
   are drained: whatever a thread found gone wrote is read in that drain,
   before its exit record of ours.  */
static int
sweep_probe (struct live *lv, bool *due)
{
  uint64_t now = now_ns ();
  size_t n = st_hashmap_size (lv->threads);
  *due = now - lv->last_sweep >= SWEEP_NS || n >= lv->threads_at_sweep + EVICT_EVERY;
  if (!*due)
    return 0;
  lv->last_sweep = now;
  lv->n_dead = 0;
  return st_hashmap_foreach (lv->threads, probe_thread, lv);
}

/* Exit records for the threads found gone, dated after every record read:
   they go to the process table after the threads' last samples.  */
static int
sweep_evict (struct live *lv)
{
  uint64_t time = st_perf_source_max_time (lv->parser);
  int r = 0;
  for (size_t i = 0; i < lv->n_dead && r == 0; i++)
    {
      pid_t pid = lv->dead[i].pid, tid = lv->dead[i].tid;
      if (st_hashmap_get_u64 (lv->threads, (uint32_t) tid) == NULL)
        continue;   /* its exit record came in the drain */
      uint8_t rec[8 + 24 + TRAILER_SIZE];
      struct perf_event_header h = { PERF_RECORD_EXIT, 0, sizeof rec };
      uint32_t ids[4] = { pid, pid, tid, tid };
      memcpy (rec, &h, sizeof h);
      memcpy (rec + 8, ids, sizeof ids);
      memcpy (rec + 24, &time, sizeof time);
      put_trailer (rec + 32, pid, tid, time);
      st_hashmap_remove_u64 (lv->threads, (uint32_t) tid);
      lv->evicted++;
      r = feed (lv, rec, sizeof rec);
    }
  lv->n_dead = 0;
  lv->threads_at_sweep = st_hashmap_size (lv->threads);
  return r;
}

static bool
targets_alive (const struct live *lv)
{
  const struct st_live_options *o = lv->opts;
  for (size_t i = 0; i < o->n_pids; i++)
    if (kill (o->pids[i], 0) == 0 || errno == EPERM)
      return true;
  return false;
}

/* One pass: the rings drained, the gone threads evicted, a round ended.  */
static int
pass (struct live *lv)
{
  bool due = false;
  int r = sweep_probe (lv, &due);
  if (r == 0)
    r = drain_rings (lv);
  if (r == 0 && due)
    r = sweep_evict (lv);
  return r < 0 ? r : end_round (lv);
}

static void
enable_all (struct live *lv, unsigned long request)
{
  for (size_t i = 0; i < lv->n_fds; i++)
    ioctl (lv->fds[i], request, 0);
}

static int
sample_loop (struct live *lv, volatile sig_atomic_t *stop, struct st_live_stats *stats)
{
  struct pollfd *pfds = calloc (2 * lv->n_rings, sizeof *pfds);
  if (pfds == NULL)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < lv->n_rings; i++)
    {
      if (lv->rings[i].fd >= 0)
        pfds[n++] = (struct pollfd) { .fd = lv->rings[i].fd, .events = POLLIN };
      if (lv->sb_rings[i].fd >= 0)
        pfds[n++] = (struct pollfd) { .fd = lv->sb_rings[i].fd, .events = POLLIN };
    }
  int r = 0;
  bool done = false;
  while (r == 0 && !done)
    {
      if (poll (pfds, n, POLL_MS) < 0 && errno != EINTR)
        {
          r = -errno;
          break;
        }
      if (*stop)
        done = true;
      if (lv->child > 0)
        {
          int status;
          if (waitpid (lv->child, &status, WNOHANG) == lv->child)
            {
              stats->command_status = status;
              lv->child = 0;
              st_signals_set_child (0);
              if (lv->opts->command != NULL)
                done = true;
            }
        }
      else if (lv->opts->n_pids > 0 && !targets_alive (lv))
        done = true;
      /* One more pass after the end: what the last moments wrote.  */
      r = pass (lv);
    }
  free (pfds);
  return r;
}

/* Reaps the command if it ends within MS milliseconds (0: if it has
   ended); true when it is gone.  A signal to us cuts the wait short.  */
static bool
reap_within (struct live *lv, struct st_live_stats *stats, int ms)
{
  int pidfd = (int) syscall (SYS_pidfd_open, lv->child, 0);
  if (pidfd >= 0 && ms > 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      poll (&p, 1, ms);
    }
  if (pidfd >= 0)
    close (pidfd);
  int status;
  pid_t w = waitpid (lv->child, &status, WNOHANG);
  if (w == lv->child)
    stats->command_status = status;
  if (w == lv->child || (w < 0 && errno == ECHILD))
    {
      lv->child = 0;
      st_signals_set_child (0);
      return true;
    }
  return false;
}

/* The command does not outlive the run, however the run ends: it is given
   a moment to end on the signal that stopped us (forwarded to it, or sent
   to its process group), then SIGTERM, then SIGKILL; at once SIGKILL when
   the run must stop at once.  */
static void
end_command (struct live *lv, volatile sig_atomic_t *stop, struct st_live_stats *stats)
{
  if (lv->child <= 0)
    return;
  bool now = lv->opts->force_stop != NULL && *lv->opts->force_stop;
  if (!now && reap_within (lv, stats, *stop ? 1000 : 0))
    return;
  now = lv->opts->force_stop != NULL && *lv->opts->force_stop;
  if (!now)
    {
      kill (lv->child, SIGTERM);
      if (reap_within (lv, stats, 2000))
        return;
    }
  kill (lv->child, SIGKILL);
  int status;
  pid_t w;
  while ((w = waitpid (lv->child, &status, 0)) < 0 && errno == EINTR)
    ;
  if (w == lv->child)
    stats->command_status = status;
  lv->child = 0;
  st_signals_set_child (0);
}

int
st_live_run (const struct st_live_options *opts, st_event_fn fn, void *arg,
             volatile sig_atomic_t *stop, struct st_live_stats *stats,
             struct st_source_error *err)
{
  struct live lv = { .opts = opts, .child = -1, .fn = fn, .fn_arg = arg,
                     .pages = opts->mmap_pages ? opts->mmap_pages : ST_LIVE_DEFAULT_MMAP_PAGES };
  stats->command_status = -1;
  stats->mmap_pages = lv.pages;
  build_attr (&lv);
  lv.last_sweep = now_ns ();
  int go_fd = -1, exec_err_fd = -1;
  lv.threads = st_hashmap_new (NULL);
  int r = lv.threads != NULL ? online_cpus (&lv) : -ENOMEM;
  if (r == 0)
    r = st_perf_source_new_live (&lv.attr, live_event, &lv, err, &lv.parser);
  if (r == 0)
    r = record_open (&lv);
  /* Stopped before it started: nothing to run or sample.  */
  if (r == 0 && *stop)
    goto out;
  if (r == 0 && opts->command != NULL)
    r = spawn_command (&lv, &go_fd, &exec_err_fd);
  if (r < 0)
    goto out;

  if (opts->all_cpus)
    r = open_for_pid (&lv, -1);
  else if (opts->command != NULL)
    r = open_for_pid (&lv, lv.child);
  else
    for (size_t i = 0; i < opts->n_pids && r == 0; i++)
      r = open_for_process (&lv, opts->pids[i]);
  if (r < 0)
    goto out;

  /* What already runs is described first, then sampling starts.  */
  if (opts->all_cpus)
    r = synthesize_all (&lv);
  else
    for (size_t i = 0; i < opts->n_pids && r == 0; i++)
      r = synthesize_process (&lv, 0, opts->pids[i]);
  if (r < 0)
    goto out;
  if (opts->command == NULL || opts->all_cpus)
    enable_all (&lv, PERF_EVENT_IOC_ENABLE);
  if (opts->command != NULL)
    {
      /* Let the command exec; its events switch on with the exec.  */
      if (write (go_fd, "g", 1) != 1)
        r = -errno;
      close (go_fd);
      go_fd = -1;
      int e;
      if (r == 0 && read (exec_err_fd, &e, sizeof e) == sizeof e)
        {
          st_error ("cannot run %s: %s", opts->command[0], strerror (e));
          r = -e;
        }
      if (r < 0)
        goto out;
    }
  r = sample_loop (&lv, stop, stats);
  enable_all (&lv, PERF_EVENT_IOC_DISABLE);
  if (r == 0)
    r = drain_all (&lv);
  if (r == 0)
    r = st_perf_source_flush (lv.parser);

out:
  if (go_fd >= 0)
    close (go_fd);
  if (exec_err_fd >= 0)
    close (exec_err_fd);
  /* Interrupted, or failed: the command does not outlive us.  */
  end_command (&lv, stop, stats);
  stats->records = lv.records;
  stats->sideband_lost = lv.sideband_lost;
  stats->evicted = lv.evicted;
  stats->tracked = lv.threads ? st_hashmap_size (lv.threads) : 0;
  for (size_t i = 0; i < lv.n_rings; i++)
    {
      if (lv.rings[i].meta != NULL)
        munmap (lv.rings[i].meta, (lv.rings[i].pages + 1) * (size_t) getpagesize ());
      if (lv.sb_rings[i].meta != NULL)
        munmap (lv.sb_rings[i].meta, (lv.sb_rings[i].pages + 1) * (size_t) getpagesize ());
    }
  for (size_t i = 0; i < lv.n_fds; i++)
    close (lv.fds[i]);
  free (lv.fds);
  free (lv.rings);
  free (lv.sb_rings);
  free (lv.dead);
  st_hashmap_free (lv.threads);
  if (lv.record != NULL && fclose (lv.record) != 0 && r == 0)
    {
      st_error ("writing %s: %s", opts->record_path, strerror (errno));
      r = -EIO;
    }
  st_perf_source_free_live (lv.parser);
  return r;
}
