/* Live sampling's perf events: their attributes, one sampling and one
 * process-record event per CPU and target, their ring buffers, and the
 * reading of those buffers into records for the parser.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/log.h"
#include "core/input/live.h"

/* As `perf record --call-graph dwarf` asks: the kernel's own callchain
   (kernel part only) tells perf script to unwind the user part from the
   registers and stack, so a --record file reads like perf's.  */
#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU \
                     | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER \
                     | PERF_SAMPLE_STACK_USER)


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

/* perf_event_open said no: say what to change, not what failed inside.
   Returns -ERR.  */
static int
explain_open_error (const struct st_live_source *lv, int err, pid_t pid)
{
  int paranoid = 2;
  read_int_file ("/proc/sys/kernel/perf_event_paranoid", &paranoid);
  if (err == EACCES || err == EPERM)
    return st_why_set (lv->why, err, "not allowed to sample %s (kernel.perf_event_paranoid is "
                       "%d): run as root, grant CAP_PERFMON (setcap cap_perfmon+ep), or lower "
                       "it with `sysctl kernel.perf_event_paranoid=%d`",
                       lv->opts->all_cpus ? "the whole machine" : "these processes", paranoid,
                       lv->opts->all_cpus || lv->opts->kernel ? 0 : 1);
  if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
      && lv->opts->event == ST_LIVE_CYCLES)
    return st_why_set (lv->why, err, "this machine has no hardware cycle counter (a virtual "
                       "machine?): use -e cpu-clock");
  if (err == ESRCH)
    return st_why_set (lv->why, err, "process %d does not exist (any more)", pid);
  if (err == EMFILE)
    return st_why_set (lv->why, err, "too many open files for one event per thread and CPU: "
                       "raise `ulimit -n`");
  return st_why_set (lv->why, err, "perf_event_open: %s", strerror (err));
}

void
st_live_build_attr (struct st_live_source *lv)
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
  /* The kernel writes a LOST record only when the record after the loss
     fits, so what a full ring loses at the end of a run is never
     reported; read() of the event says it (Linux 6.0+).  */
  a->read_format = PERF_FORMAT_LOST;
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
  /* Build-ids in the mapping records name each file as it was mapped
     (a container's libc is the host's when the build-ids are equal, and
     container storage and debuginfod are asked by them).  But not with
     -a: the kernel (seen on 6.18; the code is the same since build-ids
     came in 5.12) writes one mmap event to every event that wants it in
     turn, sets PERF_RECORD_MISC_MMAP_BUILD_ID in the shared header for an
     event that asked for build-ids and never clears it, so the events
     after ours get records that claim a build-id where they hold
     maj/min/ino.  A system-wide event of ours sees every mmap on the
     machine: every perf record running beside `eu-stacktrace -a' aborted
     (perf 6.1: "assertion failed at util/build-id.c:1010", its 20-byte
     buffer overflowed) or lost its files (tests/live/beside-perf.sh).  A
     profiler must not break the others on the machine; with -a files are
     known by device and inode, and the resolver reopens one rewritten in
     place (its ctime).  Per-process events (-p, -- CMD) see only their
     processes' mmaps, which only a profiler of the same processes would
     share.  */
  sb->build_id = !o->all_cpus;
  sb->comm = 1;
  sb->comm_exec = 1;
  sb->task = 1;
  sb->namespaces = 1;
  sb->wakeup_watermark = SIDEBAND_PAGES * getpagesize () / 4;
}

static int
add_fd (struct st_live_source *lv, int fd, bool sideband)
{
  if (lv->n_fds == lv->cap_fds)
    {
      size_t cap = lv->cap_fds ? lv->cap_fds * 2 : 64;
      struct live_fd *fds = realloc (lv->fds, cap * sizeof *fds);
      if (fds == NULL)
        return -ENOMEM;
      lv->fds = fds;
      lv->cap_fds = cap;
    }
  lv->fds[lv->n_fds++] = (struct live_fd) { fd, sideband };
  return 0;
}

/* Opens one event of ATTR for PID on CPU R->cpu: the CPU's first gets the
   ring buffer, later ones write into it.  */
static int
open_one (struct st_live_source *lv, struct perf_event_attr *attr, pid_t pid, struct ring *r)
{
  int fd = perf_event_open (attr, pid, r->cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && errno == EINVAL && attr->read_format != 0)
    {
      /* A kernel before 6.0 knows no PERF_FORMAT_LOST: the LOST records
         are all it says.  */
      attr->read_format = 0;
      fd = perf_event_open (attr, pid, r->cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
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
      return explain_open_error (lv, e, pid);
    }
  if (add_fd (lv, fd, r->sideband) < 0)
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
          return st_why_set (lv->why, e, "cannot map the %s buffer of CPU %d (%zu KiB): %s%s",
                             r->sideband ? "process record" : "sample", r->cpu,
                             r->pages * page / 1024, strerror (e),
                             e == EPERM ? " (use a smaller --mmap-pages, or raise "
                                          "kernel.perf_event_mlock_kb)" : "");
        }
      r->fd = fd;
      r->meta = map;
      r->data = (uint8_t *) map + page;
      r->size = (uint64_t) r->pages * page;
    }
  else if (ioctl (fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0)
    return st_why_set (lv->why, errno, "cannot share the sample buffer of CPU %d: %s",
                       r->cpu, strerror (errno));
  return 0;
}

/* Opens the sampling event and the process-record event for PID on every
   CPU.  */
int
st_live_open_for_pid (struct st_live_source *lv, pid_t pid)
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

int
st_live_online_cpus (struct st_live_source *lv)
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
  /* Room for the events of one process or of the machine, allocated here:
     the command of -- CMD opens its own in our memory (source-live.c),
     where nothing is better left to malloc.  */
  lv->cap_fds = 2 * lv->n_rings + 2;
  lv->fds = malloc (lv->cap_fds * sizeof *lv->fds);
  return lv->fds != NULL ? 0 : -ENOMEM;
}

/* Reads every complete record of one ring buffer.  */
static int
drain_ring (struct st_live_source *lv, struct ring *ring)
{
  uint64_t head = __atomic_load_n (&ring->meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = ring->read;
  /* A sample is unwound in place, its room held until the round after,
     except with -a: there a new process's first samples can keep the
     unwinder for long, and the ring needs all its room.  */
  bool in_place = !ring->sideband && !lv->opts->all_cpus;
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
          st_live_untrack (lv, (pid_t) tid);
        }
      if (ring->sideband && h.type == PERF_RECORD_LOST && h.size >= 24)
        {
          /* Process records lost, not samples: counted apart, and kept
             out of the samples' count.  */
          uint64_t n;
          memcpy (&n, rec + 16, sizeof n);
          lv->sideband_lost += n;
        }
      else if (h.type == PERF_RECORD_LOST && h.size >= 24)
        {
          uint64_t n;
          memcpy (&n, rec + 16, sizeof n);
          lv->samples_lost += n;
          r = st_live_feed (lv, rec, h.size);
        }
      else if (in_place && rec != lv->wrap_buf && h.type == PERF_RECORD_SAMPLE)
        r = st_live_feed_in_place (lv, rec, h.size);
      else
        r = st_live_feed (lv, rec, h.size);
      tail += h.size;
    }
  ring->read = tail;
  /* Records copied: their room is free at once.  */
  if (!in_place)
    {
      __atomic_store_n (&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
      ring->read_before = tail;
    }
  return r;
}

static void
release_ring (struct ring *ring)
{
  if (ring->fd < 0)
    return;
  __atomic_store_n (&ring->meta->data_tail, ring->read_before, __ATOMIC_RELEASE);
  ring->read_before = ring->read;
}

void
st_live_release_rings (struct st_live_source *lv)
{
  for (size_t i = 0; i < lv->n_rings; i++)
    release_ring (&lv->rings[i]);
}

int
st_live_drain_rings (struct st_live_source *lv)
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

/* What the kernel counted lost by one event: read() gives its count, then
   the lost count (read_format PERF_FORMAT_LOST alone).  An inherited
   event's children count into it (their output goes to the parent's
   buffer, and so do their losses).  */
static bool
read_lost (int fd, uint64_t *lost)
{
  uint64_t v[2];
  ssize_t got = read (fd, v, sizeof v);
  if (got != (ssize_t) sizeof v)
    {
      if (got >= 0)
        errno = EIO;   /* a short read: no count to trust */
      return false;
    }
  *lost = v[1];
  return true;
}

int
st_live_feed_unreported_losses (struct st_live_source *lv)
{
  if (lv->attr.read_format != PERF_FORMAT_LOST)
    return 0;
  uint64_t samples = 0, records = 0, n;
  size_t unread = 0;
  int unread_errno = 0;
  for (size_t i = 0; i < lv->n_fds; i++)
    if (read_lost (lv->fds[i].fd, &n))
      *(lv->fds[i].sideband ? &records : &samples) += n;
    else
      {
        unread++;
        unread_errno = errno;
      }
  /* Said, not hidden: what those events lost is missing from the count
     (the LOST records they wrote are still counted).  */
  if (unread > 0)
    st_warning ("could not read the lost count of %zu of %zu events: %s; samples lost may "
                "be undercounted", unread, lv->n_fds, strerror (unread_errno));
  if (records > lv->sideband_lost)
    lv->sideband_lost = records;
  if (samples <= lv->samples_lost)
    return 0;
  /* The rest as the kernel would have said it, after every record read. */
  uint64_t time = st_perf_source_max_time (lv->parser);
  uint64_t body[2] = { 0, samples - lv->samples_lost };
  uint8_t rec[8 + sizeof body + TRAILER_SIZE];
  struct perf_event_header h = { PERF_RECORD_LOST, 0, sizeof rec };
  memcpy (rec, &h, sizeof h);
  memcpy (rec + 8, body, sizeof body);
  st_live_put_trailer (rec + 8 + sizeof body, -1, -1, time);
  lv->samples_lost = samples;
  return st_live_feed (lv, rec, sizeof rec);
}

void
st_live_enable_all (struct st_live_source *lv, unsigned long request)
{
  for (size_t i = 0; i < lv->n_fds; i++)
    ioctl (lv->fds[i].fd, request, 0);
}

void
st_live_close_rings (struct st_live_source *lv)
{
  for (size_t i = 0; i < lv->n_rings; i++)
    {
      if (lv->rings[i].meta != NULL)
        munmap (lv->rings[i].meta, (lv->rings[i].pages + 1) * (size_t) getpagesize ());
      if (lv->sb_rings[i].meta != NULL)
        munmap (lv->sb_rings[i].meta, (lv->sb_rings[i].pages + 1) * (size_t) getpagesize ());
    }
  for (size_t i = 0; i < lv->n_fds; i++)
    close (lv->fds[i].fd);
  free (lv->fds);
  free (lv->rings);
  free (lv->sb_rings);
  lv->fds = NULL;
  lv->rings = lv->sb_rings = NULL;
  lv->n_fds = lv->n_rings = lv->cap_fds = 0;
}
