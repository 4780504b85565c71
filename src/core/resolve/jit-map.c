#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "basic/bsearch.h"
#include "basic/array.h"
#include "basic/build-id.h"
#include "basic/bytes.h"
#include "basic/cleanup.h"
#include "basic/clock.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/string-arena.h"
#include "basic/untrusted.h"
#include "core/resolve/jit-budget.h"
#include "core/resolve/jit-map.h"
#include "core/resolve/jitdump-format.h"

/* ---- one process's names ---- */

struct entry {
  uint64_t start, end;
  const char *name;       /* in the map's NAMES */
  uint64_t seq;           /* file order: a later one wins */
  bool from_dump;         /* a jitdump's record, not a perf map line */
};

/* A perf map is read in windows no smaller than this when its user's
   budget is nearly spent (parse_appended).  */
#define MAP_WINDOW_MIN (64u << 10)
/* What a byte of JIT file text may hold at most: a 6-byte perf-map line
   ("0 1 a\n") makes a 40-byte entry and a 2-byte name.  */
#define HELD_PER_TEXT_BYTE 8

struct jit_file {
  char *path;             /* as the process names it */
  bool dump;
  bool done;              /* broken, refused or over the limit */
  uint64_t consumed;      /* bytes parsed so far */
  uint64_t charged;       /* bytes read, charged to CHARGED_UID's budget */
  uid_t charged_uid;
  dev_t dev;
  ino_t ino;
  /* Kept open from one load to the next, when the budget lets it
     (st_jit_budget_keep_file, for KEPT_UID): a miss between two loads
     asks it whether the JIT wrote more (load_grown), with one fstat.
     What it reads then is charged as the last load found (CHARGED_UID),
     and its owner is checked again at the next load: a process that
     changed its uid, or a pid reused unseen, is found out within
     ST_JIT_MAP_RETRY_NS.  A file the budget stopped, or done, is not
     kept: only a load reads it on.  */
  int fd;
  uid_t kept_uid;
  uint64_t seen_size;     /* its size when last read: an unfinished last
                             line is read again only once the file grew */
  bool stopped;           /* the last read was stopped by the budget: the
                             rest waits for a load (as often as before) */
};

struct st_jit_map {
  pid_t pid;
  /* Every name the files gave, replaced ones too (`loads' and the results
     of this very sample may still point at them), until the map goes.  */
  struct st_string_arena *names;
  st_jit_names_done_fn names_done;
  void *ctx;
  struct st_jit_budget *budget;   /* NULL: none */
  struct jit_file *files;  /* [0] is the perf map */
  size_t n_files;
  /* Three runs, each sorted by start and one per address but the last:
     the base [0, n_base), the recent [n_base, n_sorted), and what the
     files gave since the last sort [n_sorted, n).  A sort merges what is
     new into the recent, and the recent into the base only once it holds
     RECENT_MAX: a load of a few lines costs as much as a few lines, not
     the whole map (sort_entries).  Where both have a function starting at
     one address, the recent one is the later.  */
  struct entry *entries;
  size_t n, cap;
  uint64_t seq;
  bool sorted;
  size_t n_base, n_sorted;
  uint64_t last_load_ns;   /* the last load: files opened again */
  uint64_t last_check_ns;  /* the last look for growth of the files kept open */
  char map_name[32];       /* the perf map's name, as the process knows it */
  int error;               /* the callback's: -ENOMEM */
  bool loading_dump;       /* load_file is reading a jitdump */
  /* A jitdump load's code_index to its name (in NAMES): a JIT_CODE_MOVE
     names the code it moves by that number, as perf inject --jit does.  */
  struct st_hashmap *loads;
};

/* Closes F's kept descriptor, if it has one, and gives its place back.  */
static void
let_go (struct st_jit_map *m, struct jit_file *f)
{
  if (f->fd < 0)
    return;
  close (f->fd);
  f->fd = -1;
  if (m->budget != NULL)
    st_jit_budget_let_go_file (m->budget, f->kept_uid);
}

int
st_jit_map_new (pid_t pid, st_jit_names_done_fn names_done, void *ctx,
                struct st_jit_budget *budget, struct st_jit_map **out)
{
  *out = NULL;
  _cleanup_free_ struct st_jit_map *m = calloc (1, sizeof *m);
  if (m == NULL)
    return -ENOMEM;
  m->pid = pid;
  m->names_done = names_done;
  m->ctx = ctx;
  m->budget = budget;
  m->sorted = true;
  m->files = calloc (1, sizeof *m->files);
  if (m->files == NULL)
    return -ENOMEM;
  m->n_files = 1;
  m->files[0].fd = -1;
  m->loads = st_hashmap_new (NULL);
  m->names = st_string_arena_new ();
  if (m->loads == NULL || m->names == NULL)
    {
      st_hashmap_free (m->loads);
      st_string_arena_free (m->names);
      free (m->files);
      return -ENOMEM;
    }
  *out = ST_TAKE_PTR (m);
  return 0;
}

void
st_jit_map_free (struct st_jit_map *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->n_files; i++)
    {
      if (m->budget != NULL && m->files[i].charged > 0)
        st_jit_budget_give_back (m->budget, m->files[i].charged_uid, m->files[i].charged);
      let_go (m, &m->files[i]);
      free (m->files[i].path);
    }
  free (m->files);
  free (m->entries);
  st_hashmap_free (m->loads);
  if (m->names_done != NULL)
    m->names_done (m->ctx, m->names);
  else
    st_string_arena_free (m->names);
  free (m);
}

int
st_jit_map_add_dump (struct st_jit_map *m, const char *path)
{
  for (size_t i = 1; i < m->n_files; i++)
    if (strcmp (m->files[i].path, path) == 0)
      return 0;
  if (m->n_files - 1 >= ST_JIT_MAP_MAX_DUMPS)
    {
      if (m->budget != NULL && st_jit_budget_dump_refused (m->budget))
        st_warning ("%s (process %d): only the first %d jitdump files a process maps are "
                    "read; --stats counts the processes", path, (int) m->pid, ST_JIT_MAP_MAX_DUMPS);
      return 1;
    }
  struct jit_file *files = realloc (m->files, (m->n_files + 1) * sizeof *files);
  if (files == NULL)
    return -ENOMEM;
  m->files = files;
  char *copy = strdup (path);
  if (copy == NULL)
    return -ENOMEM;
  m->files[m->n_files++] = (struct jit_file) { .path = copy, .dump = true, .fd = -1 };
  m->last_load_ns = 0;   /* read it at the next miss */
  return 0;
}

bool
st_jit_map_untouched (const struct st_jit_map *m)
{
  return m->last_load_ns == 0 && m->n_files == 1 && m->n == 0;
}

size_t
st_jit_map_size (const struct st_jit_map *m)
{
  /* The addresses of the base and the recent, each counted once.  */
  size_t i = 0, j = m->n_base, count = 0;
  while (i < m->n_base || j < m->n_sorted)
    {
      if (j == m->n_sorted || (i < m->n_base && m->entries[i].start < m->entries[j].start))
        i++;
      else if (i == m->n_base || m->entries[j].start < m->entries[i].start)
        j++;
      else
        i++, j++;
      count++;
    }
  return count;
}

/* NAME is the map's already (in NAMES).  */
static int
add_named (struct st_jit_map *m, uint64_t start, uint64_t size, const char *name)
{
  if (ST_GROW (m->entries, m->cap, m->n, 256) < 0)
    return -ENOMEM;
  m->entries[m->n++] = (struct entry) { start, start + size, name, m->seq++, m->loading_dump };
  m->sorted = false;
  return 0;
}

static int
add_entry (uint64_t start, uint64_t size, const char *name, void *arg)
{
  struct st_jit_map *m = arg;
  const char *copy = st_string_arena_add (m->names, name, strlen (name));
  if (copy == NULL)
    return -ENOMEM;
  return add_named (m, start, size, copy);
}

static int
add_load (uint64_t start, uint64_t size, uint64_t code_index, const char *name, void *arg)
{
  struct st_jit_map *m = arg;
  int r = add_entry (start, size, name, m);
  if (r != 0)
    return r;
  /* add_entry copied NAME into the map's names: that copy.  */
  return st_hashmap_put_u64 (m->loads, code_index, (void *) m->entries[m->n - 1].name);
}

/* The moved code keeps its name at the new address; the old address
   keeps it too, for the samples taken before the move (names are not
   matched by time) until a later load there replaces it.  */
static int
add_move (uint64_t code_index, uint64_t old_addr, uint64_t new_addr, uint64_t size, void *arg)
{
  (void) old_addr;
  struct st_jit_map *m = arg;
  const char *name = st_hashmap_get_u64 (m->loads, code_index);
  if (name == NULL)
    return 0;   /* no load of that code: perf inject finds no file for it either */
  return add_named (m, new_addr, size, name);
}

static const struct st_jitdump_fns dump_fns = { .load = add_load, .move = add_move };

/* Where the process's files are: its own root and its pid as it knows it
   (NSpid), while it runs; else the host's /tmp, as perf reads it.  */
struct where {
  int root_fd;             /* O_PATH of /proc/PID/root, or -1 */
  char root_name[64];
  pid_t ns_pid;
  bool alive;
  uid_t owners[2];
  uid_t charged;           /* whose budget its files count against */
};

static pid_t
ns_pid_of (pid_t pid)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  const char *line = strstr (buf, "\nNSpid:");
  if (line == NULL)
    return pid;
  /* The last number on the line is the pid in the innermost namespace. */
  long last = pid, v;
  int used;
  const char *s = line + 7;
  while (sscanf (s, "%ld%n", &v, &used) == 1 && *s != '\n')
    {
      last = v;
      s += used;
      if (*s == '\n')
        break;
    }
  return (pid_t) last;
}

static void
where_of (pid_t pid, struct where *w)
{
  *w = (struct where) { .root_fd = -1, .ns_pid = pid };
  snprintf (w->root_name, sizeof w->root_name, "/proc/%d/root", (int) pid);
  if (st_proc_owners (pid, w->owners) < 0)
    return;
  /* Without user namespaces (no /proc/PID/ns/user), its own uid.  */
  (void) st_proc_charged_uid (pid, w->owners[0], &w->charged);
  w->root_fd = open (w->root_name, O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (w->root_fd < 0)
    return;
  w->alive = true;
  pid_t ns = ns_pid_of (pid);
  if (ns > 0)
    w->ns_pid = ns;
}

/* Opens the file as safely as any other file a process names, and checks
   that its owner may describe the process: -errno when not.  */
static int
open_jit_file (const struct where *w, const char *path, struct stat *st)
{
  int fd = w->alive ? st_open_untrusted_in (w->root_fd, w->root_name, path,
                                            ST_UNTRUSTED_IN_ROOT, st)
                    : st_open_untrusted (AT_FDCWD, path, ST_UNTRUSTED_NOFOLLOW, st);
  if (fd < 0)
    return fd;
  bool ok = w->alive ? st_proc_owned_by (w->owners, st->st_uid)
                     : st->st_uid == 0 || st->st_uid == geteuid ();
  if (!ok)
    {
      char why[64];
      snprintf (why, sizeof why, "owned by uid %u, not the process's user or root",
                (unsigned) st->st_uid);
      st_untrusted_refuse (path, w->alive ? w->root_name : NULL, why);
      close (fd);
      return -EPERM;
    }
  return fd;
}

/* What a read holds: the text parsed and the entries it made (a file of
   short lines makes more entry than text).  */
static uint64_t
held_since (const struct st_jit_map *m, const struct jit_file *f, uint64_t consumed_before,
            size_t entries_before)
{
  return f->consumed - consumed_before + (uint64_t) (m->n - entries_before) * sizeof (struct entry);
}

static void parse_appended (struct st_jit_map *m, struct jit_file *f, int fd, const char *name,
                            uint64_t allowed, uint64_t limit, uint64_t held_room,
                            uint64_t *read);

static void read_appended (struct st_jit_map *m, struct jit_file *f, int fd, const char *name,
                           uint64_t size);

/* Opens F again (the process may have written another file since) and
   reads what was appended to it since the last time, as far as its user's
   budget allows.  F keeps the descriptor until the next load.  */
static void
load_file (struct st_jit_map *m, const struct where *w, struct jit_file *f)
{
  const char *name = f->path;
  if (!f->dump)
    {
      snprintf (m->map_name, sizeof m->map_name, "/tmp/perf-%d.map", (int) w->ns_pid);
      name = m->map_name;
    }
  struct stat st;
  _cleanup_close_ int fd = open_jit_file (w, name, &st);
  /* The file that was kept is not read again when its name no longer
     opens (gone, refused, or another user's now).  */
  let_go (m, f);
  if (fd < 0)
    return;
  /* Another file, or one truncated and written again: the pid's new
     process (after an exec, or the pid's reuse) wrote it, and it is read
     from its start even when the old one was given up (done).  */
  if ((f->consumed > 0 || f->done)
      && (st.st_dev != f->dev || st.st_ino != f->ino || (uint64_t) st.st_size < f->consumed))
    {
      f->consumed = f->seen_size = 0;
      f->done = false;
    }
  f->dev = st.st_dev;
  f->ino = st.st_ino;
  /* A file is charged to its process's user.  When that changed (the
     process set another uid, or the pid is another user's process now),
     what the file's names hold is the new user's to hold.  */
  uid_t uid = w->alive ? w->charged : st.st_uid;
  if (m->budget != NULL && f->charged > 0 && uid != f->charged_uid)
    st_jit_budget_move (m->budget, f->charged_uid, uid, f->charged, st_now_ns ());
  f->charged_uid = uid;
  read_appended (m, f, fd, name, (uint64_t) st.st_size);
  if (!f->done && !f->stopped
      && (m->budget == NULL || st_jit_budget_keep_file (m->budget, uid)))
    {
      f->fd = ST_TAKE_FD (fd);
      f->kept_uid = uid;
    }
}

/* Reads F (open as FD, called NAME in warnings, SIZE bytes long now) from
   where the last read stopped, as far as its user's budget allows.  */
static void
read_appended (struct st_jit_map *m, struct jit_file *f, int fd, const char *name, uint64_t size)
{
  f->seen_size = size;
  uint64_t limit = size < ST_JIT_MAP_MAX_BYTES ? size : ST_JIT_MAP_MAX_BYTES;
  uint64_t now = st_now_ns ();
  /* The budget's bytes are held bytes (text and entries), at most
     HELD_PER_TEXT_BYTE for each byte of text: that much is reserved for
     the text left, and the read stops at whichever ends first.  */
  uint64_t allowed = limit, reserved = 0, want = 0, held_room = UINT64_MAX;
  if (m->budget != NULL && f->consumed < limit && !f->done)
    {
      uint64_t text = limit - f->consumed;
      want = text * HELD_PER_TEXT_BYTE;   /* limit <= 256 MiB: no overflow */
      reserved = st_jit_budget_reserve (m->budget, f->charged_uid, want, now);
      held_room = reserved;
      allowed = f->consumed + (reserved < text ? reserved : text);
    }
  uint64_t before = f->consumed, read = 0;
  size_t entries_before = m->n;
  parse_appended (m, f, fd, name, allowed, limit, held_room, &read);
  if (m->budget != NULL)
    {
      /* Held: the bytes parsed and the entries they made (a file of short
         lines makes more entry than text).  The rate: every byte read,
         parsed or not (an unfinished last line is read again).  */
      uint64_t held = held_since (m, f, before, entries_before);
      st_jit_budget_charge (m->budget, f->charged_uid, reserved, held, read);
      f->charged += held;
      /* Stopped by the budget: the text allowed ended before the file's,
         or the read holds all it reserved.  Not a read that stopped at an
         unfinished last line (a JIT still writing, a map without a last
         newline) with room to spare.  */
      bool stopped = f->consumed < limit && !f->done && (allowed < limit || held >= held_room);
      f->stopped = stopped;
      if (stopped && st_jit_budget_refused (m->budget, f->charged_uid))
        st_warning ("%s (process %d): the JIT files of uid %u's processes are over their "
                    "budget (%u MiB held, %u MiB a second): the rest is read when it allows; "
                    "--stats counts the reads stopped",
                    name, (int) m->pid, (unsigned) f->charged_uid,
                    ST_JIT_USER_HELD_BYTES >> 20, ST_JIT_USER_RATE_BYTES >> 20);
    }
  if (f->consumed >= ST_JIT_MAP_MAX_BYTES && !f->done)
    {
      st_warning ("%s (process %d): only its first %u MiB read", name, (int) m->pid,
                  ST_JIT_MAP_MAX_BYTES >> 20);
      f->done = true;
    }
}

/* Parses what was appended to F (open as FD, called NAME in warnings) up
   to byte ALLOWED (the budget's) of LIMIT (the file's, as far as it may
   ever be read), in windows, as far as complete lines or records go, and
   until what it holds (held_since) reaches HELD_ROOM (UINT64_MAX: no
   bound): a window of 6-byte perf-map lines makes five times its size in
   entries.  *READ grows by the bytes read.  */
static void
parse_appended (struct st_jit_map *m, struct jit_file *f, int fd, const char *name,
                uint64_t allowed, uint64_t limit, uint64_t held_room, uint64_t *read)
{
  _cleanup_free_ uint8_t *buf = NULL;
  const uint64_t consumed_before = f->consumed, room = held_room;
  const size_t entries_before = m->n;
  while (f->consumed < allowed && !f->done)
    {
      uint64_t held = held_since (m, f, consumed_before, entries_before);
      if (held >= room)
        return;
      size_t want = allowed - f->consumed < WINDOW ? allowed - f->consumed : WINDOW;
      /* A perf map's window is cut to the text the room left may hold, so
         that its entries (at most 40 bytes for each 6 of text) stay in it;
         no real line is longer than its floor.  A jitdump's records make
         less entry than text, and one may be as long as a window.  */
      uint64_t text_room = (room - held) / HELD_PER_TEXT_BYTE;
      if (!f->dump && want > MAP_WINDOW_MIN && want > text_room)
        want = text_room > MAP_WINDOW_MIN ? text_room : MAP_WINDOW_MIN;
      /* A jitdump's header is parsed with its records: start at 0.  */
      if (buf == NULL && (buf = malloc (WINDOW)) == NULL)
        return;
      ssize_t got = pread (fd, buf, want, (off_t) f->consumed);
      if (got <= 0)
        return;
      *read += (uint64_t) got;
      long used;
      struct st_why why = { 0 };
      if (!f->dump)
        used = st_perf_map_parse ((const char *) buf, (size_t) got, add_entry, m);
      else if (f->consumed == 0)
        used = st_jitdump_parse (buf, (size_t) got, &dump_fns, m, &why);
      else
        {
          /* Later windows start at a record: give the parser a header. */
          used = 0;
          if (got >= JIT_RECORD_PREFIX)
            {
              _cleanup_free_ uint8_t *with = malloc ((size_t) got + JITDUMP_HEADER_MIN);
              if (with == NULL)
                return;
              memset (with, 0, JITDUMP_HEADER_MIN);
              uint32_t magic = JITDUMP_MAGIC, hsize = JITDUMP_HEADER_MIN;
              memcpy (with, &magic, 4);
              memcpy (with + 8, &hsize, 4);
              memcpy (with + JITDUMP_HEADER_MIN, buf, (size_t) got);
              used = st_jitdump_parse (with, (size_t) got + JITDUMP_HEADER_MIN, &dump_fns, m,
                                       &why);
              if (used > 0)
                used -= JITDUMP_HEADER_MIN;
            }
        }
      if (used == -ENOMEM)
        {
          m->error = -ENOMEM;
          return;
        }
      if (used < 0)
        {
          st_warning ("%s (process %d): %s: ignored", name, (int) m->pid, why.text);
          f->done = true;
          return;
        }
      if (used == 0 && (size_t) got == WINDOW)
        {
          /* One line or one record larger than a window: skip it.  */
          if (f->dump && f->consumed > 0)
            used = st_get_u32 (buf + 4);
          else if (!f->dump)
            {
              f->done = true;
              return;
            }
          if (used <= 0)
            return;
          /* A record said to end past what may ever be read: no further;
             past what the budget allows now: later.  */
          if ((uint64_t) used > limit - f->consumed)
            {
              f->done = true;
              return;
            }
          if ((uint64_t) used > allowed - f->consumed)
            return;
        }
      if (used == 0)
        return;   /* the rest is still being written */
      f->consumed += (uint64_t) used;
    }
}

static int
compare_entries (const void *pa, const void *pb)
{
  const struct entry *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->seq > b->seq ? -1 : a->seq < b->seq;
}

/* Sorted [LO, MID) and [MID, HI) of the entries into one sorted run at
   LO, one per address (the later function there): returns where it ends.  */
static size_t
merge_runs (struct st_jit_map *m, size_t lo, size_t mid, size_t hi)
{
  struct entry *e = m->entries;
  bool both = mid > lo && hi > mid;
  size_t from = lo;   /* [lo, from) is as it was: sorted, one per address */
  _cleanup_free_ struct entry *tail = both ? malloc ((hi - mid) * sizeof *tail) : NULL;
  if (both && tail == NULL)
    qsort (e + lo, hi - lo, sizeof *e, compare_entries);
  else if (both)
    {
      /* Merged from the back, into the room the second run took.  */
      memcpy (tail, e + mid, (hi - mid) * sizeof *tail);
      size_t i = mid, j = hi - mid, w = hi;
      while (j > 0)
        if (i > lo && compare_entries (&e[i - 1], &tail[j - 1]) > 0)
          e[--w] = e[--i];
        else
          e[--w] = tail[--j];
      from = i;
    }
  /* Of the functions that started at one address, the last compiled (the
     other's name stays in NAMES).  */
  size_t out = from;
  for (size_t i = from; i < hi; i++)
    if (out == lo || e[out - 1].start != e[i].start)
      e[out++] = e[i];
  return out;
}

/* The recent run's bound: merging what a load added into it moves what
   the load added and at most this many entries more (160 KiB), and
   merging it into the base, once every RECENT_MAX entries added, costs the
   base.  A user's process that appends a line to its map before each
   sample (the map's user's JIT names at most 32 MiB: a base of up to a
   million entries) so costs root's profiler a few microseconds a load,
   not a copy of its map.  */
#define RECENT_MAX 4096

/* Sorts the entries added since the last time into the recent ones, and
   those into the base when they are many.  Sorting all again at each load
   cost a user's process that kept appending to its map root's profiler a
   second of every few; merging into all of them at each load did too, once
   loads came at every miss that found the file grown.  */
static void
sort_entries (struct st_jit_map *m)
{
  if (m->sorted)
    return;
  qsort (m->entries + m->n_sorted, m->n - m->n_sorted, sizeof *m->entries, compare_entries);
  m->n = merge_runs (m, m->n_base, m->n_sorted, m->n);
  if (m->n - m->n_base > RECENT_MAX || m->n_base == 0)
    m->n = m->n_base = merge_runs (m, 0, m->n_base, m->n);
  m->n_sorted = m->n;
  m->sorted = true;
}

/* Whether the perf map that load_file would read may be there: false
   only when its lookup finds nothing.  Most processes have no JIT and no
   map, and each looks once for its first frame without a symbol (a
   short-lived process of -a, all the more): this costs a lookup and a few
   stat calls, where_of two reads of /proc/PID/status and more.  The map's
   name holds the pid as the process knows it: ours when it shares our pid
   namespace, else where_of finds it.  */
static bool
perf_map_may_exist (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  _cleanup_close_ int root = open (path, O_PATH | O_CLOEXEC | O_DIRECTORY);
  snprintf (path, sizeof path, "/tmp/perf-%d.map", (int) pid);
  if (root < 0)   /* gone: load_file reads the host's /tmp */
    return st_untrusted_may_exist (AT_FDCWD, path, ST_UNTRUSTED_NOFOLLOW);
  char ns[64];
  snprintf (ns, sizeof ns, "/proc/%d/ns/pid", (int) pid);
  struct stat theirs, ours;
  if (stat (ns, &theirs) != 0 || stat ("/proc/self/ns/pid", &ours) != 0
      || theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev)
    return true;
  return st_untrusted_may_exist (root, path, ST_UNTRUSTED_IN_ROOT);
}

static void
load (struct st_jit_map *m)
{
  /* Nothing read yet and no jitdump named: look before loading (a file
     kept, empty so far, is opened again: its name may be another's).  */
  if (m->n_files == 1 && m->files[0].consumed == 0 && m->n == 0 && m->files[0].fd < 0
      && !perf_map_may_exist (m->pid))
    return;
  struct where w;
  where_of (m->pid, &w);
  for (size_t i = 0; i < m->n_files && m->error == 0; i++)
    {
      m->loading_dump = m->files[i].dump;
      load_file (m, &w, &m->files[i]);
    }
  if (w.root_fd >= 0)
    close (w.root_fd);
  sort_entries (m);
}

/* The function of the base or the recent run that starts last at or
   before ADDR (the recent one when both start there), if ADDR is in it.  */
static const struct entry *
find (const struct st_jit_map *m, uint64_t addr)
{
  if (m->n_sorted == 0)
    return NULL;
  size_t in_base = ST_BSEARCH_UPPER (m->entries, m->n_base, start, addr);
  size_t in_recent = ST_BSEARCH_UPPER (m->entries + m->n_base, m->n_sorted - m->n_base, start,
                                       addr);
  const struct entry *e = in_base > 0 ? &m->entries[in_base - 1] : NULL;
  if (in_recent > 0 && (e == NULL || m->entries[m->n_base + in_recent - 1].start >= e->start))
    e = &m->entries[m->n_base + in_recent - 1];
  if (e == NULL || addr >= e->end)
    return NULL;
  return e;
}

/* Between two loads: reads what the JIT appended to the files kept open
   since the last load, when they grew (an fstat each).  A file whose read
   the budget stops is let go and waits for the next load, as before files
   were kept; so is one unlinked (replaced) or cut shorter (written
   again): the next load opens what its name is then.  */
static void
load_grown (struct st_jit_map *m)
{
  for (size_t i = 0; i < m->n_files && m->error == 0; i++)
    {
      struct jit_file *f = &m->files[i];
      struct stat st;
      if (f->fd < 0 || fstat (f->fd, &st) != 0)
        continue;
      if (st.st_nlink == 0 || (uint64_t) st.st_size < f->seen_size)
        {
          let_go (m, f);
          continue;
        }
      if ((uint64_t) st.st_size == f->seen_size)
        continue;
      m->loading_dump = f->dump;
      read_appended (m, f, f->fd, f->dump ? f->path : m->map_name, (uint64_t) st.st_size);
      if (f->done || f->stopped)
        let_go (m, f);
    }
  sort_entries (m);
}

const char *
st_jit_map_lookup (struct st_jit_map *m, uint64_t addr, uint64_t *offset)
{
  const struct entry *e = find (m, addr);
  if (e == NULL && m->error == 0)
    {
      uint64_t now = st_now_ns ();
      if (m->last_load_ns == 0 || now - m->last_load_ns >= ST_JIT_MAP_RETRY_NS)
        {
          m->last_load_ns = m->last_check_ns = now;
          load (m);
          e = find (m, addr);
        }
      else if (now - m->last_check_ns >= ST_JIT_MAP_GROWN_NS)
        {
          m->last_check_ns = now;
          load_grown (m);
          e = find (m, addr);
        }
    }
  if (e == NULL)
    return NULL;
  *offset = addr - e->start;
  return e->name;
}

const char *
st_jit_map_lookup_dump (struct st_jit_map *m, uint64_t addr, uint64_t *offset)
{
  if (m->n_files < 2)
    return NULL;   /* no jitdump registered: nothing overrides a file's symbols */
  uint64_t off;
  const char *name = st_jit_map_lookup (m, addr, &off);
  const struct entry *e = name != NULL ? find (m, addr) : NULL;
  if (e == NULL || !e->from_dump)
    return NULL;
  *offset = off;
  return name;
}
