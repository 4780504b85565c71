/* What /proc adds to a Sysprof stream: a process that has no MAP frame by
 * its first sample has its executable mappings (and, without a PROCESS
 * frame, its command line) read once from /proc, when /proc/PID is still
 * the process that was sampled; they are delivered as frames of the
 * stream, raw and decoded.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "basic/log.h"
#include "basic/procfs.h"
#include "core/input/sysprof-reader.h"

/* Builds a frame header at the start of the scratch buffer.  */
static void
make_frame (struct st_sysprof_frame *h, size_t len, pid_t pid, int64_t time, uint32_t type)
{
  memset (h, 0, sizeof *h);
  h->len = (uint16_t) len;
  h->cpu = -1;
  h->pid = pid;
  h->time = time;
  h->type = type;
}

/* A frame that stands for a /proc fact, delivered as if read.  */
static int
emit_made_map (struct st_sysprof_source *src, pid_t pid, int64_t time, uint64_t start,
               uint64_t end, uint64_t pgoff, uint64_t inode, const char *path, uint32_t prot)
{
  uint8_t buf[sizeof (struct st_sysprof_map) + 4096 + ST_SYSPROF_ALIGN];
  size_t path_len = strnlen (path, 4096);
  size_t len = st_sysprof_align (sizeof (struct st_sysprof_map) + path_len + 1);
  memset (buf, 0, len);
  struct st_sysprof_map m;
  make_frame (&m.frame, len, pid, time, ST_SYSPROF_MAP);
  m.start = start;
  m.end = end;
  m.offset = pgoff;
  m.inode = inode;
  memcpy (buf, &m, sizeof m);
  memcpy (buf + sizeof m, path, path_len);
  return st_sysprof_handle_map (src, buf, len, 0, true, prot);
}

static int
emit_made_process (struct st_sysprof_source *src, pid_t pid, int64_t time, const char *cmdline)
{
  uint8_t buf[sizeof (struct st_sysprof_process) + 4096 + ST_SYSPROF_ALIGN];
  size_t n = strnlen (cmdline, 4095);
  size_t len = st_sysprof_align (sizeof (struct st_sysprof_process) + n + 1);
  memset (buf, 0, len);
  struct st_sysprof_frame h;
  make_frame (&h, len, pid, time, ST_SYSPROF_PROCESS);
  memcpy (buf, &h, sizeof h);
  memcpy (buf + sizeof h, cmdline, n);
  return st_sysprof_handle_process (src, buf, len, true);
}

/* Nanoseconds of CLOCK_ID now.  */
static int64_t
clock_ns (clockid_t clock_id)
{
  struct timespec ts;
  clock_gettime (clock_id, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* True when /proc/PID is the process that was sampled at TIME (Sysprof's
   clock, CLOCK_MONOTONIC): it started before TIME.  /proc gives the start
   in clock ticks of CLOCK_BOOTTIME, which runs ahead of the monotonic clock
   by the time spent suspended; today's difference bounds the one at TIME. */
static bool
proc_is_sampled_process (pid_t pid, int64_t time)
{
  uint64_t ticks;
  if (!st_proc_start_time (pid, &ticks))
    return false;
  long hz = sysconf (_SC_CLK_TCK);
  if (hz <= 0)
    return false;
  int64_t start_boot = (int64_t) (ticks * (1000000000 / (unsigned long long) hz));
  int64_t mono = clock_ns (CLOCK_MONOTONIC);
  int64_t suspended = clock_ns (CLOCK_BOOTTIME) - mono;
  if (time > mono)
    return false;   /* a capture from another boot */
  return start_boot <= time + suspended;
}

struct maps_walk {
  struct st_sysprof_source *src;
  pid_t pid;
  int64_t time;
  size_t n_maps;
  int error;
};

static int
made_map (const struct st_proc_map *m, void *arg)
{
  struct maps_walk *w = arg;
  if (m->perms[2] != 'x' || !st_sysprof_is_code_path (m->name))
    return 0;
  uint32_t prot = PROT_EXEC | (m->perms[0] == 'r' ? PROT_READ : 0);
  /* Inode 0, as Sysprof's perf source writes maps: Sysprof checks a
     non-zero one against the file, and a same-content replacement of the
     binary would then not symbolize.  */
  w->error = emit_made_map (w->src, w->pid, w->time, m->start, m->end, m->pgoff, 0,
                            m->name, prot);
  w->n_maps++;
  return w->error < 0;
}

/* Reads /proc/PID/maps once, for a process the stream gave no maps.  */
int
st_sysprof_synthesize_from_proc (struct st_sysprof_source *src, pid_t pid, int64_t time)
{
  unsigned flags = st_sysprof_pid_flags (src, pid) | PID_PROC_TRIED;
  int r = st_sysprof_pid_set_flags (src, pid, flags);
  if (r < 0)
    return r;
  if (pid <= 0 || !proc_is_sampled_process (pid, time))
    {
      src->proc_skipped++;
      st_info ("pid %d: the stream has no map frames for it and /proc/%d is gone or a "
               "newer process", (int) pid, (int) pid);
      return 0;
    }
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", (int) pid);
  struct maps_walk w = { src, pid, time, 0, 0 };
  r = st_proc_maps_foreach (pid, made_map, &w);
  if (r < 0)
    {
      src->proc_skipped++;
      st_info ("pid %d: cannot read %s: %s", (int) pid, path, strerror (-r));
      return 0;
    }
  size_t n_maps = w.n_maps;
  r = w.error;
  if (r < 0)
    return r;
  r = st_sysprof_pid_set_flags (src, pid, st_sysprof_pid_flags (src, pid) | PID_PROC_MAPS);
  if (r < 0)
    return r;
  src->proc_maps++;
  st_info ("pid %d: no map frames in the stream: %zu code mappings read from %s",
           (int) pid, n_maps, path);

  if (st_sysprof_pid_flags (src, pid) & PID_PROCESS_FRAME)
    return 0;
  /* The command line, NULs between arguments, for Sysprof and our names. */
  char cmdline[4096];
  if (st_proc_cmdline (pid, cmdline, sizeof cmdline) <= 0)
    return 0;   /* a kernel thread, or gone */
  return emit_made_process (src, pid, time, cmdline);
}
