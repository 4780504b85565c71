/* perf record --threads: a perf.data directory.
 *
 * perf 5.17 and later, asked to record with several threads, write a
 * directory.  Its file "data" is an ordinary perf.data file: the header,
 * the attributes, the feature sections (HEADER_DIR_FORMAT, version 1, says
 * what it is), and a data section with perf's own records (the kernel's
 * map, the processes that were there at the start).  The records of each
 * ring buffer (one per CPU; perf 6.1 so too when one thread reads several)
 * go to a file "data.N" of their own: records only, from byte 0, no
 * header, and no FINISHED_ROUND (perf record leaves them out in this mode:
 * one CPU's ring is in time order as the kernel wrote it).
 *
 * perf's reader queues every record of every file and sorts them all at
 * the end.  This one merges the files by time instead, the way the rounds
 * of a single file bound its queue: it always reads the file that is
 * furthest behind (a heap of the files by time), and releases every queued
 * record older than the time that file has reached, since no file can
 * bring an older one any more.  A file that does step back in time (a
 * record of an event the sample interrupted, written after it) widens that
 * margin by the largest step seen; a record that comes older than what was
 * already released is counted and said at the end (perf's "Timestamp below
 * last timeslice flush").  The queue then holds only what the files' times
 * differ by.
 *
 * A directory whose header file has no data.N beside it (perf inject's
 * output keeps the feature and puts every record in "data", out of time
 * order and without rounds) is read as the single file it is.
 *
 * The files' records are queued as copies (the pool of source-perf.c):
 * each file is read through a small buffer of its own, which moves on.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/log.h"
#include "core/input/perf-reader.h"
#include "core/input/source-perf.h"

/* perf writes one file per recording thread, at most one per CPU.  More
   than this is not a recording.  */
#define MAX_FILES 4096

/* Records read from one file before what it queued is released.  */
#define TURN 64

struct lane {
  struct st_input *in;        /* NULL once read to its end (but the header's) */
  uint64_t end;               /* where its records end */
  struct st_perf_decompressor *zstd;  /* perf record -z: each file is a stream */
  char *name;                 /* its path, for messages; NULL: the header's */
  uint64_t time;              /* the latest record time read from it */
  bool done;
};

struct st_perf_dir {
  struct lane *lanes;         /* [0]: the header's file, then data.N by N */
  uint32_t n;
  uint32_t *heap;             /* the lanes not read to their end, by time */
  uint32_t n_heap;
  uint64_t released;          /* records older than this were delivered */
  uint64_t late;              /* records that came older than that */
  uint64_t slack;             /* the largest step back in time a file took */
};

void
st_perf_dir_free (struct st_perf_dir *dir)
{
  if (dir == NULL)
    return;
  for (uint32_t i = 1; i < dir->n; i++)
    {
      st_input_free (dir->lanes[i].in);
      st_perf_decompressor_free (dir->lanes[i].zstd);
      free (dir->lanes[i].name);
    }
  free (dir->lanes);
  free (dir->heap);
  free (dir);
}

ST_DEFINE_CLEANUP (perf_dir_freep, struct st_perf_dir, st_perf_dir_free)

int
st_perf_source_open_dir (const char *dir, struct st_input **out, struct st_why *why)
{
  _cleanup_free_ char *path = NULL;
  if (asprintf (&path, "%s/data", dir) < 0)
    return -ENOMEM;
  /* Without waiting: a FIFO there is no header perf wrote.  */
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return st_why_set (why, errno, "%s is a directory, but not one perf record --threads "
                       "wrote: cannot open %s: %s", dir, path, strerror (errno));
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return st_why_set (why, EINVAL, "%s: not a regular file, so not the header of a "
                         "perf.data directory", path);
    }
  int r = st_input_open_fd (fd, path, out);
  return r < 0 ? st_why_set (why, -r, "cannot read %s: %s", path, strerror (-r)) : 0;
}

/* "data.N", by N; perf reads whatever else starts with "data." too, and
   so does this, after them, by name.  */
static int
compare_data_names (const void *a, const void *b)
{
  const char *x = *(char *const *) a + 5, *y = *(char *const *) b + 5;
  char *xe, *ye;
  unsigned long xn = strtoul (x, &xe, 10), yn = strtoul (y, &ye, 10);
  bool xnum = xe != x && *xe == '\0', ynum = ye != y && *ye == '\0';
  if (xnum != ynum)
    return xnum ? -1 : 1;
  if (xnum && xn != yn)
    return xn < yn ? -1 : 1;
  return strcmp (x, y);
}

static void
free_names (char **names, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
}

/* The names of the directory's "data.*" entries, sorted.  */
static int
list_data_files (DIR *d, const char *path, struct st_why *err, char ***out, size_t *n_out)
{
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  for (;;)
    {
      errno = 0;
      if ((e = readdir (d)) == NULL)
        break;
      if (strncmp (e->d_name, "data.", 5) != 0)
        continue;
      if (n == MAX_FILES)
        {
          free_names (names, n);
          return st_why_set (err, EBADMSG, "%s: more than %d data.* files: not a perf.data "
                             "directory", path, MAX_FILES);
        }
      char **v = realloc (names, (n + 1) * sizeof *v);
      if (v == NULL || (v[n] = strdup (e->d_name)) == NULL)
        {
          free_names (v != NULL ? v : names, n);
          return -ENOMEM;
        }
      names = v;
      n++;
    }
  if (errno != 0)
    {
      int r = -errno;
      free_names (names, n);
      return st_why_set (err, -r, "%s: cannot list the directory: %s", path, strerror (-r));
    }
  if (n > 0)
    qsort (names, n, sizeof *names, compare_data_names);
  *out = names;
  *n_out = n;
  return 0;
}

/* Leaves out an entry that is not a regular file, with a warning.  */
static bool
left_out (const char *full, const struct stat *st)
{
  if (S_ISREG (st->st_mode))
    return false;
  if (S_ISLNK (st->st_mode))
    st_warning ("%s: a symbolic link, not a file perf record wrote: left out", full);
  else
    st_warning ("%s: not a regular file: left out", full);
  return true;
}

/* Opens NAME in the directory DFD as a lane, or leaves it out (an empty
   file, as perf does; anything but a regular file, with a warning).  The
   directory may be anyone's: what is not a regular file is never opened
   (a FIFO would wait for a writer, a device could do something), nor
   followed; and the check is made again on what was opened, which was
   opened without waiting, in case the entry changed in between.  */
static int
open_lane (struct st_perf_dir *dir, int dfd, const char *path, const char *name,
           struct st_why *err)
{
  _cleanup_free_ char *full = NULL;
  if (asprintf (&full, "%s/%s", path, name) < 0)
    return -ENOMEM;
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return st_why_set (err, errno, "cannot open %s: %s", full, strerror (errno));
  if (left_out (full, &st))
    return 0;
  int fd = openat (dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0)
    {
      if (errno == ELOOP || errno == ENXIO)
        {
          st_warning ("%s: no longer a regular file: left out", full);
          return 0;
        }
      return st_why_set (err, errno, "cannot open %s: %s", full, strerror (errno));
    }
  if (fstat (fd, &st) != 0 || left_out (full, &st))
    {
      close (fd);
      return 0;
    }
  if (st.st_size == 0)
    {
      close (fd);
      return 0;
    }
  struct lane *lane = &dir->lanes[dir->n];
  int r = st_input_open_small (fd, full, &lane->in);
  if (r < 0)
    return st_why_set (err, -r, "cannot read %s: %s", full, strerror (-r));
  lane->end = st_input_size (lane->in);
  lane->name = ST_TAKE_PTR (full);
  dir->n++;
  return 0;
}

/* The directory the header file IN was read from, in *PATH (NULL for a
   pipe): the name's own, unless the name is a symbolic link (or standard
   input, a file the shell opened), whose target's directory it is.  */
static int
directory_of (struct st_input *in, char **path)
{
  *path = NULL;
  if (!st_input_seekable (in))
    return 0;
  const char *name = st_input_name (in);
  bool from_stdin = strcmp (name, "<stdin>") == 0;
  struct stat st;
  if (from_stdin || (lstat (name, &st) == 0 && S_ISLNK (st.st_mode)))
    {
      char *real = realpath (from_stdin ? "/proc/self/fd/0" : name, NULL);
      if (real == NULL)
        return errno == ENOMEM ? -ENOMEM : 0;
      char *slash = strrchr (real, '/');
      if (slash == NULL)
        {
          free (real);
          return 0;
        }
      slash[slash == real] = '\0';   /* "/data" keeps its "/" */
      *path = real;
      return 0;
    }
  const char *slash = strrchr (name, '/');
  *path = slash == NULL ? strdup (".") : slash == name ? strdup ("/")
                                                      : strndup (name, slash - name);
  return *path == NULL ? -ENOMEM : 0;
}

/* Every data.N is open for the whole run: make room for N descriptors
   more than the run needs anyway, raising the soft limit toward the hard
   one as far as it goes.  */
static int
room_for_files (const char *path, size_t n, struct st_why *err)
{
  struct rlimit rl;
  if (getrlimit (RLIMIT_NOFILE, &rl) != 0)
    return 0;
  rlim_t want = n + 1024;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
    {
      rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
      getrlimit (RLIMIT_NOFILE, &rl);
    }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < n + 256)
    return st_why_set (err, EMFILE, "%s: %zu data.* files, too many for the descriptors "
                       "this process may open (RLIMIT_NOFILE %llu): raise it (ulimit -n)",
                       path, n, (unsigned long long) rl.rlim_cur);
  return 0;
}

int
st_perf_dir_open (struct st_perf_source *src)
{
  struct st_why *err = src->err;
  if (src->dir_version != 1)
    return st_why_at (err, ENOTSUP, 0, "a perf.data directory of version %" PRIu64
                      " (HEADER_DIR_FORMAT); this build reads version 1", src->dir_version);
  _cleanup_free_ char *path = NULL;
  int r = directory_of (src->in, &path);
  if (r < 0)
    return r;
  if (path == NULL)
    return st_why_at (err, ENOTSUP, 0, "the header of a perf.data directory (perf record "
                      "--threads), read from a pipe: give the directory with -i");
  _cleanup_ (perf_dir_freep) struct st_perf_dir *dir = calloc (1, sizeof *dir);
  if (dir == NULL)
    return -ENOMEM;
  int dfd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return st_why_set (err, errno, "cannot open the perf.data directory %s: %s", path,
                       strerror (errno));
  DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      int e = errno;
      close (dfd);
      return st_why_set (err, e, "cannot read the perf.data directory %s: %s", path,
                         strerror (e));
    }
  char **names = NULL;
  size_t n_names = 0;
  r = list_data_files (d, path, err, &names, &n_names);
  if (r == 0)
    r = room_for_files (path, n_names, err);
  if (r == 0)
    {
      dir->lanes = calloc (n_names + 1, sizeof *dir->lanes);
      if (dir->lanes == NULL)
        r = -ENOMEM;
    }
  if (r == 0)
    {
      /* Lane 0 is the header's file; run fills it in.  */
      dir->n = 1;
      for (size_t i = 0; i < n_names && r == 0; i++)
        r = open_lane (dir, dirfd (d), path, names[i], err);
    }
  free_names (names, n_names);
  closedir (d);
  if (r < 0)
    return r;
  /* No data.N with records: the header's file is the recording.  */
  if (dir->n == 1)
    return 0;
  dir->heap = calloc (dir->n, sizeof *dir->heap);
  if (dir->heap == NULL)
    return -ENOMEM;
  for (uint32_t i = 0; i < dir->n; i++)
    dir->heap[i] = i;   /* all at time 0: in order already */
  dir->n_heap = dir->n;
  src->dir = ST_TAKE_PTR (dir);
  return 0;
}

void
st_perf_dir_report (const struct st_perf_source *src)
{
  const struct st_perf_dir *dir = src->dir;
  if (dir == NULL)
    return;
  st_info ("a perf.data directory: the header file and %" PRIu32 " data.N files with records, "
           "merged by time", dir->n - 1);
  if (dir->slack > 0)
    st_info ("records of one data.N file went back in time by up to %.3f ms: they were "
             "held that much longer to be put in order", dir->slack / 1e6);
  if (dir->late > 0)
    st_warning ("%" PRIu64 " records of a data.N file came older than records already "
                "written (the file is out of time order): they were used late, and samples "
                "near them may name the wrong mappings", dir->late);
}

const char *
st_perf_dir_file_name (const struct st_perf_source *src, uint32_t file)
{
  return src->dir != NULL && file < src->dir->n ? src->dir->lanes[file].name : NULL;
}

void
st_perf_dir_queued (struct st_perf_source *src, uint64_t time)
{
  struct st_perf_dir *dir = src->dir;
  struct lane *lane = &dir->lanes[src->file];
  if (time < dir->released)
    dir->late++;
  if (time >= lane->time)
    lane->time = time;
  else if (lane->time - time > dir->slack)
    dir->slack = lane->time - time;
}

/* Makes LANE the file SRC reads.  */
static void
enter (struct st_perf_source *src, struct lane *lane)
{
  src->file = (uint32_t) (lane - src->dir->lanes);
  src->in = lane->in;
  src->data_end = lane->end;
  src->zstd = lane->zstd;
}

static void
leave (struct st_perf_source *src, struct lane *lane)
{
  lane->zstd = src->zstd;   /* made at its first compressed record */
}

/* Lane A is read before lane B: the lower time; of equal ones the lower
   index, so the header's file first.  */
static bool
heap_before (const struct st_perf_dir *dir, uint32_t a, uint32_t b)
{
  uint64_t ta = dir->lanes[a].time, tb = dir->lanes[b].time;
  return ta < tb || (ta == tb && a < b);
}

/* The heap's top lane was read on: its time went up, or it is done (then
   it leaves the heap).  */
static void
heap_top_moved (struct st_perf_dir *dir)
{
  uint32_t *h = dir->heap;
  if (dir->lanes[h[0]].done)
    h[0] = h[--dir->n_heap];
  uint32_t n = dir->n_heap, i = 0;
  for (;;)
    {
      uint32_t least = i, l = 2 * i + 1, r = l + 1;
      if (l < n && heap_before (dir, h[l], h[least]))
        least = l;
      if (r < n && heap_before (dir, h[r], h[least]))
        least = r;
      if (least == i)
        break;
      uint32_t t = h[i];
      h[i] = h[least];
      h[least] = t;
      i = least;
    }
}

/* The lane behind the others, or NULL when all are read; *NEXT is the
   time of the one behind it (UINT64_MAX: none), one of the top's
   children.  */
static struct lane *
lane_behind (struct st_perf_dir *dir, uint64_t *next)
{
  *next = UINT64_MAX;
  if (dir->n_heap == 0)
    return NULL;
  for (uint32_t c = 1; c <= 2 && c < dir->n_heap; c++)
    if (dir->lanes[dir->heap[c]].time < *next)
      *next = dir->lanes[dir->heap[c]].time;
  return &dir->lanes[dir->heap[0]];
}

int
st_perf_dir_run (struct st_perf_source *src, int (*next) (struct st_perf_source *src),
                 volatile sig_atomic_t *stop)
{
  struct st_perf_dir *dir = src->dir;
  struct lane *header = &dir->lanes[0];
  header->in = src->in;
  header->end = src->data_end;
  header->zstd = src->zstd;
  int r = 0;
  struct lane *lane = NULL;
  while (r == 0 && !(stop && *stop))
    {
      uint64_t others;
      lane = lane_behind (dir, &others);
      if (lane == NULL)
        break;
      /* Every file has reached this lane's time: what is older cannot be
         overtaken any more.  */
      uint64_t safe = lane->time > dir->slack ? lane->time - dir->slack : 0;
      r = st_ordered_queue_release_before (src->queue, safe);
      if (r < 0)
        break;
      if (safe > dir->released)
        dir->released = safe;
      enter (src, lane);
      /* On in this file until it has passed another one, or for a turn
         of records: then what it queued is released (one file alone is
         never passed).  */
      for (unsigned turn = 1; r == 0 && !(stop && *stop); turn++)
        {
          r = next (src);
          if (r == 1)
            {
              r = 0;
              lane->done = true;
              break;
            }
          if (turn == TURN || lane->time > others)
            break;
        }
      leave (src, lane);
      heap_top_moved (dir);
      if (r == -EBADMSG && src->err != NULL && src->err->input == NULL)
        src->err->input = lane->name;
      if (lane->done && lane != header)
        {
          /* Its buffer goes with it: the files are read side by side.  */
          st_input_free (lane->in);
          lane->in = NULL;
        }
    }
  src->file = 0;
  src->in = header->in;
  src->data_end = header->end;
  src->zstd = header->zstd;
  header->zstd = NULL;
  return r;
}
