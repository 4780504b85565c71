/* What already runs when live sampling starts, read from /proc: the
 * threads of -p processes (each gets its events), and the names and
 * executable mappings of the processes sampled, fed to the parser as the
 * COMM and MMAP2 records perf record synthesizes.  */
#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "basic/procfs.h"
#include "core/input/live.h"
#include "core/input/perf-format.h"

/* /proc/PID/task/TID/comm is not bounded by TASK_COMM_LEN: the kernel
   names workqueue workers from a 64-byte buffer ("kworker/u8:1-ext4-rsv-
   conversion" is 32 characters), so the record is sized for that.  */
#define PROC_COMM_MAX 64

static int
synthesize_comm (struct st_live_source *lv, pid_t pid, pid_t tid)
{
  char comm[PROC_COMM_MAX] = "";
  if (st_proc_comm (pid, tid, comm, sizeof comm) < 0)
    return 0;
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
  size += st_live_put_trailer (rec + size, pid, tid, 0);   /* before every real record */
  h.size = size;
  memcpy (rec, &h, sizeof h);
  return st_live_feed (lv, rec, size);
}

struct maps_walk {
  struct st_live_source *lv;
  pid_t pid;
  int error;
};

static int
synthesize_map (const struct st_proc_map *m, void *arg)
{
  struct maps_walk *w = arg;
  pid_t pid = w->pid;
  const char *perms = m->perms, *name = m->name;
  /* Code, and the files it came from (as mmap_data reports them).  */
  if (perms[2] != 'x' && (name[0] != '/' || m->inode == 0))
    return 0;
  if (name[0] == '\0')
    name = "//anon";
  size_t name_len = (strlen (name) + 1 + 7) & ~7ul;
  if (name_len > PATH_MAX)
    return 0;
  uint8_t rec[72 + PATH_MAX + TRAILER_SIZE] = { 0 };
  assert (72 + name_len + TRAILER_SIZE <= sizeof rec);
  uint32_t u32[2] = { pid, pid };
  uint64_t u64[3] = { m->start, m->end - m->start, m->pgoff };
  uint32_t dev[2] = { m->maj, m->min };
  uint64_t inode[2] = { m->inode, 0 };
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
  size += st_live_put_trailer (rec + size, pid, pid, 0);
  struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, size };
  memcpy (rec, &h, sizeof h);
  w->error = st_live_feed (w->lv, rec, size);
  return w->error < 0;
}

static int
synthesize_maps (struct st_live_source *lv, pid_t pid)
{
  struct maps_walk w = { lv, pid, 0 };
  /* A process without maps is gone, or a kernel thread: nothing to say.  */
  st_proc_maps_foreach (pid, synthesize_map, &w);
  return w.error;
}

/* Calls FN (LV, PID, ID) for every numbered entry of DIR (/proc, or a
   process's task folder), until FN fails.  -ESRCH when DIR is gone.  */
static int
for_each_id (struct st_live_source *lv, const char *dir, pid_t pid,
             int (*fn) (struct st_live_source *, pid_t pid, pid_t id))
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
synthesize_thread (struct st_live_source *lv, pid_t pid, pid_t tid)
{
  /* The leader went first: the process is named after it.  */
  return tid == pid ? 0 : synthesize_comm (lv, pid, tid);
}

static int
synthesize_process (struct st_live_source *lv, pid_t unused, pid_t pid)
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

int
st_live_synthesize_process (struct st_live_source *lv, pid_t pid)
{
  return synthesize_process (lv, 0, pid);
}

int
st_live_synthesize_all (struct st_live_source *lv)
{
  return for_each_id (lv, "/proc", 0, synthesize_process);
}

static int
open_for_thread (struct st_live_source *lv, pid_t pid, pid_t tid)
{
  int r = st_live_open_for_pid (lv, tid);
  return r == -ESRCH ? 0 : r;   /* a thread that just exited */
}

/* Every thread of PID gets its events (new threads inherit them).  */
int
st_live_open_for_process (struct st_live_source *lv, pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task", pid);
  int r = for_each_id (lv, path, pid, open_for_thread);
  if (r == -ESRCH)
    return st_why_set (lv->why, ESRCH, "process %d does not exist", pid);
  return r;
}
