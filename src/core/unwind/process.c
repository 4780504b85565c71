#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic/array.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/string-arena.h"
#include "core/unwind/module-spans.h"
#include "core/unwind/process.h"
#include "core/unwind/dwfl-unwind.h"

/* Names are kept in the thread and the process, one each, not interned:
   they are the user's to choose (prctl PR_SET_NAME), and one interned copy
   of every name ever seen grew root's profiler of the whole machine by
   50 MB a second under a user's loop of renames.  */
struct thread {
  pid_t pid;
  const char *comm;        /* comm_buf, or NULL: not named yet */
  char comm_buf[ST_COMM_SIZE];
};

/* Names *COMM (a thread's or a process's) NAME, kept in BUF.  */
static void
set_comm (const char **comm, char buf[ST_COMM_SIZE], const char *name)
{
  snprintf (buf, ST_COMM_SIZE, "%s", name);
  *comm = buf;
}

struct known_build_id {
  uint8_t id[ST_BUILD_ID_MAX];
  uint8_t size;
};

struct st_process_table {
  struct st_hashmap *processes;   /* pid -> st_process */
  struct st_hashmap *threads;     /* tid -> thread */
  struct st_hashmap *build_ids;   /* file name -> known_build_id */
  struct st_resolver *resolver;
  const struct st_debuginfo_finder *finder;
  /* The mappings' paths, one copy each, counted (struct counted): one no
     mapping holds any more goes, or waits in PARKED until the results
     unwound before it went are written (st_process_table_park).  Kept
     until the table went, a user's loop of mmaps under ever new names (a
     hard link made and removed each time) grew root's profiler of the
     whole machine by 150 MB a second.  */
  struct st_hashmap *counted;
  uint64_t path_bytes_refused;     /* mappings of processes over ST_PROCESS_PATH_BYTES */
  uint64_t modules_refused;        /* mappings past ST_PROCESS_MAX_MODULES */
  uint64_t jit_dumps_refused;      /* processes past ST_JIT_MAP_MAX_DUMPS jitdumps */
  /* What each user's JIT files may make the maps read (NULL: no bound);
     the session's, shared by every table.  */
  struct st_jit_budget *jit_budget;
  bool park;
  uint64_t stamp;
  struct counted **parked;
  size_t n_parked, cap_parked;
  /* The names of the JIT maps of processes gone, parked the same way.  */
  struct parked_names *parked_names;
  size_t n_parked_names, cap_parked_names;
};

struct parked_names {
  struct st_string_arena *names;
  uint64_t stamp;
};

/* A mapping's path, and how many mappings hold it.  The string itself is the key of its entry in
   table->counted, NUL included: one copy.  */
struct counted {
  struct st_process_table *table;
  unsigned refs;
  bool parked;             /* in table->parked (refs may be back above 0) */
  uint64_t stamp;          /* parked: the results before it may name it */
  const char *path;        /* the entry's key */
  size_t size;             /* its bytes, NUL included */
};

static struct counted *
counted_of (struct st_process_table *t, const char *path)
{
  return st_hashmap_get (t->counted, path, strlen (path) + 1);
}

/* PATH (a path or a name), held once more; NULL without memory.  */
static const char *
counted_hold (struct st_process_table *t, const char *path)
{
  size_t size = strlen (path) + 1;
  struct counted *r = st_hashmap_get (t->counted, path, size);
  if (r == NULL)
    {
      r = calloc (1, sizeof *r);
      if (r == NULL)
        return NULL;
      if (st_hashmap_put (t->counted, path, size, r) < 0)
        {
          free (r);
          return NULL;
        }
      r->table = t;
      r->size = size;
      r->path = st_hashmap_key_of (t->counted, path, size);
    }
  r->refs++;
  return r->path;
}

/* A holder in T lets go of PATH (from counted_hold): the last one frees
   it, or parks it while results may still name it.  */
static void
counted_release (struct st_process_table *t, const char *path)
{
  struct counted *r = path != NULL ? counted_of (t, path) : NULL;
  if (r == NULL || --r->refs > 0)
    return;
  if (!t->park)
    {
      st_hashmap_remove (t->counted, r->path, r->size);   /* frees it */
      return;
    }
  r->stamp = t->stamp;
  if (r->parked)
    return;   /* in the list already, from an earlier release */
  if (ST_GROW (t->parked, t->cap_parked, t->n_parked, 64) < 0)
    return;   /* kept, then: to the end of the run */
  r->parked = true;
  t->parked[t->n_parked++] = r;
}

void
st_process_table_park (struct st_process_table *t, uint64_t stamp)
{
  t->park = true;
  t->stamp = stamp;
}

void
st_process_table_release_parked (struct st_process_table *t, uint64_t done)
{
  size_t kept = 0;
  for (size_t i = 0; i < t->n_parked; i++)
    {
      struct counted *r = t->parked[i];
      if (r->refs > 0)
        r->parked = false;   /* held again: released again later, if ever */
      else if (r->stamp <= done)
        st_hashmap_remove (t->counted, r->path, r->size);   /* frees it */
      else
        t->parked[kept++] = r;
    }
  t->n_parked = kept;
  kept = 0;
  for (size_t i = 0; i < t->n_parked_names; i++)
    if (t->parked_names[i].stamp <= done)
      st_string_arena_free (t->parked_names[i].names);
    else
      t->parked_names[kept++] = t->parked_names[i];
  t->n_parked_names = kept;
}

uint64_t
st_process_table_modules_refused (const struct st_process_table *t)
{
  return t->modules_refused;
}

uint64_t
st_process_table_mappings_refused (const struct st_process_table *t)
{
  return t->path_bytes_refused;
}

uint64_t
st_process_table_jit_dumps_refused (const struct st_process_table *t)
{
  return t->jit_dumps_refused;
}

void
st_process_table_set_jit_budget (struct st_process_table *t, struct st_jit_budget *b)
{
  t->jit_budget = b;
}

size_t
st_process_table_jit_names_parked (const struct st_process_table *t)
{
  return t->n_parked_names;
}

size_t
st_process_table_counted_held (const struct st_process_table *t)
{
  return st_hashmap_size (t->counted);
}

static void
mapping_free (struct st_process_table *t, struct st_mapping *m)
{
  if (m == NULL)
    return;
  st_elf_file_unref (m->file);
  counted_release (t, m->path);
  free (m);
}

/* Frees mapping M of process P, and its share of P's path budget.  */
static void
process_drop_mapping (struct st_process *p, struct st_mapping *m)
{
  if (m == NULL)
    return;
  p->path_bytes -= strlen (m->path) + 1;
  mapping_free (p->table, m);
}

/* A copy of mapping M of T (not reported yet), or NULL without memory.  */
static struct st_mapping *
mapping_copy (struct st_process_table *t, const struct st_mapping *m)
{
  struct st_mapping *c = calloc (1, sizeof *c);
  if (c == NULL)
    return NULL;
  *c = *m;
  c->reported = false;
  c->offered = false;
  c->alt_given = false;
  c->alt_settled = false;
  c->file = m->file ? st_elf_file_ref (m->file) : NULL;
  counted_of (t, c->path)->refs++;
  return c;
}

static void
process_drop_dwfl (struct st_process *p)
{
  if (p->dwfl != NULL)
    dwfl_end (p->dwfl);
  p->dwfl = NULL;
  p->dwfl_attached = false;
  st_module_spans_free (p->spans);
  p->spans = NULL;
  p->n_modules = 0;
  for (size_t i = 0; i < p->n_maps; i++)
    {
      p->maps[i]->reported = false;
      p->maps[i]->offered = false;
      p->maps[i]->alt_given = false;
      p->maps[i]->alt_settled = false;
    }
  p->needs_report = p->n_maps > 0;
}

static void
process_clear_maps (struct st_process *p)
{
  process_drop_dwfl (p);
  for (size_t i = 0; i < p->n_maps; i++)
    process_drop_mapping (p, p->maps[i]);
  p->n_maps = 0;
  p->needs_report = false;
}

static void
process_free (void *ptr)
{
  struct st_process *p = ptr;
  if (p == NULL)
    return;
  process_clear_maps (p);
  free (p->maps);
  st_unwind_slot_free (p->slot);
  st_jit_map_free (p->jit);
  free (p);
}

static void
thread_free (void *ptr)
{
  free (ptr);
}

ST_DEFINE_CLEANUP (process_table_freep, struct st_process_table, st_process_table_free)

int
st_process_table_new (struct st_resolver *resolver, struct st_process_table **out)
{
  _cleanup_ (process_table_freep) struct st_process_table *t = calloc (1, sizeof *t);
  if (t == NULL)
    return -ENOMEM;
  t->resolver = resolver;
  t->processes = st_hashmap_new (process_free);
  t->threads = st_hashmap_new (thread_free);
  t->build_ids = st_hashmap_new (free);
  t->counted = st_hashmap_new (free);
  if (t->processes == NULL || t->threads == NULL || t->build_ids == NULL || t->counted == NULL)
    return -ENOMEM;
  *out = ST_TAKE_PTR (t);
  return 0;
}

void
st_process_table_set_debuginfo_finder (struct st_process_table *t,
                                       const struct st_debuginfo_finder *f)
{
  t->finder = f;
}

void
st_process_table_free (struct st_process_table *t)
{
  if (t == NULL)
    return;
  /* The mappings and JIT maps let go of their strings as the processes
     go: at once.  */
  t->park = false;
  st_hashmap_free (t->processes);
  st_hashmap_free (t->threads);
  st_hashmap_free (t->build_ids);
  free (t->parked);
  st_hashmap_free (t->counted);
  for (size_t i = 0; i < t->n_parked_names; i++)
    st_string_arena_free (t->parked_names[i].names);
  free (t->parked_names);
  free (t);
}

size_t
st_process_table_count (const struct st_process_table *t)
{
  return st_hashmap_size (t->processes);
}

/* A process's JIT map went: its names go too, or wait while results may
   still name them.  */
static void
park_jit_names (void *ctx, struct st_string_arena *names)
{
  struct st_process_table *t = ctx;
  if (!t->park)
    {
      st_string_arena_free (names);
      return;
    }
  if (ST_GROW (t->parked_names, t->cap_parked_names, t->n_parked_names, 16) < 0)
    return;   /* without memory: never freed, rather than too early */
  t->parked_names[t->n_parked_names++] = (struct parked_names) { names, t->stamp };
}

struct st_process *
st_process_table_get (struct st_process_table *t, pid_t pid)
{
  uint64_t key = (uint32_t) pid;
  struct st_process *p = st_hashmap_get_u64 (t->processes, key);
  if (p != NULL)
    return p;
  p = calloc (1, sizeof *p);
  if (p == NULL)
    return NULL;
  p->pid = pid;
  p->table = t;
  p->slot = st_unwind_slot_new ();
  if (p->slot == NULL || st_jit_map_new (pid, park_jit_names, t, t->jit_budget, &p->jit) < 0
      || st_hashmap_put_u64 (t->processes, key, p) < 0)
    {
      process_free (p);
      return NULL;
    }
  return p;
}

/* P runs another program now (an exec), or its pid is another process's
   (a fork's child whose pid's last process ended unseen): the old image's
   mappings and JIT names go.  Names the old program's JIT wrote would name
   the new one's code (and a jitdump's names override its files' own).  */
static int
process_new_image (struct st_process_table *t, struct st_process *p)
{
  process_clear_maps (p);
  p->jit_dumps_refused = false;   /* the new program's are counted anew */
  if (p->jit != NULL && st_jit_map_untouched (p->jit))
    return 0;   /* nothing read: nothing to forget (every fork and exec) */
  st_jit_map_free (p->jit);
  p->jit = NULL;
  return st_jit_map_new (p->pid, park_jit_names, t, t->jit_budget, &p->jit);
}

static struct thread *
thread_get (struct st_process_table *t, pid_t tid)
{
  return st_hashmap_get_u64 (t->threads, (uint32_t) tid);
}

static int
thread_set (struct st_process_table *t, pid_t pid, pid_t tid, const char *comm)
{
  struct thread *th = thread_get (t, tid);
  if (th == NULL)
    {
      th = calloc (1, sizeof *th);
      if (th == NULL || st_hashmap_put_u64 (t->threads, (uint32_t) tid, th) < 0)
        {
          free (th);
          return -ENOMEM;
        }
    }
  th->pid = pid;
  if (comm != NULL)
    set_comm (&th->comm, th->comm_buf, comm);
  return 0;
}

const char *
st_process_table_comm_of (struct st_process_table *t, pid_t pid, pid_t tid)
{
  struct thread *th = thread_get (t, tid);
  if (th != NULL && th->comm != NULL)
    return th->comm;
  struct st_process *p = st_hashmap_get_u64 (t->processes, (uint32_t) pid);
  return p != NULL ? p->comm : NULL;
}

/* Index of the first mapping that ends after ADDR.  */
static size_t
first_ending_after (const struct st_process *p, uint64_t addr)
{
  size_t lo = 0, hi = p->n_maps;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (p->maps[mid]->end <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

const struct st_mapping *
st_process_find_mapping (const struct st_process *p, uint64_t addr)
{
  size_t i = first_ending_after (p, addr);
  if (i < p->n_maps && p->maps[i]->start <= addr)
    return p->maps[i];
  return NULL;
}

/* A new mapping over [start, end) replaces whatever code was there.  */
static void
remove_overlaps (struct st_process *p, uint64_t start, uint64_t end)
{
  size_t i = first_ending_after (p, start);
  size_t j = i;
  while (j < p->n_maps && p->maps[j]->start < end)
    j++;
  if (i == j)
    return;
  /* The Dwfl holds pointers to these mappings: it goes first.  */
  for (size_t k = i; k < j; k++)
    if (p->maps[k]->reported)
      {
        process_drop_dwfl (p);
        break;
      }
  /* Parts outside the new range survive, trimmed.  */
  struct st_mapping *before = NULL, *after = NULL;
  struct st_mapping *first = p->maps[i], *last = p->maps[j - 1];
  if (first->start < start)
    {
      before = first;
      p->maps[i] = NULL;
    }
  if (last->end > end && (last != first || before == NULL))
    {
      after = last;
      p->maps[j - 1] = NULL;
    }
  else if (last->end > end && last == first)
    {
      /* One mapping split in two by the new one.  */
      after = mapping_copy (p->table, first);
      if (after != NULL)
        p->path_bytes += strlen (after->path) + 1;
    }
  for (size_t k = i; k < j; k++)
    process_drop_mapping (p, p->maps[k]);
  memmove (p->maps + i, p->maps + j, (p->n_maps - j) * sizeof *p->maps);
  p->n_maps -= j - i;
  size_t at = i;
  if (before != NULL)
    {
      before->end = start;
      memmove (p->maps + at + 1, p->maps + at, (p->n_maps - at) * sizeof *p->maps);
      p->maps[at++] = before;
      p->n_maps++;
    }
  if (after != NULL)
    {
      after->pgoff += end - after->start;
      after->start = end;
      memmove (p->maps + at + 1, p->maps + at, (p->n_maps - at) * sizeof *p->maps);
      p->maps[at] = after;
      p->n_maps++;
    }
}

static int
reserve_maps (struct st_process *p, size_t extra)
{
  if (p->n_maps + extra <= p->cap_maps)
    return 0;
  size_t cap = p->cap_maps ? p->cap_maps * 2 : 16;
  while (cap < p->n_maps + extra)
    cap *= 2;
  struct st_mapping **maps = realloc (p->maps, cap * sizeof *maps);
  if (maps == NULL)
    return -ENOMEM;
  p->maps = maps;
  p->cap_maps = cap;
  return 0;
}

static int
insert_mapping (struct st_process *p, struct st_mapping *m)
{
  /* Room for the mapping and for a split of one existing mapping.  */
  if (reserve_maps (p, 2) < 0)
    return -ENOMEM;
  remove_overlaps (p, m->start, m->end);
  size_t i = first_ending_after (p, m->start);
  memmove (p->maps + i + 1, p->maps + i, (p->n_maps - i) * sizeof *p->maps);
  p->maps[i] = m;
  p->n_maps++;
  p->path_bytes += strlen (m->path) + 1;
  p->needs_report = true;
  return 0;
}

int
st_process_table_mmap (struct st_process_table *t, const struct st_mmap_event *ev)
{
  if (ev->len == 0 || ev->start + ev->len < ev->start)
    return 0;
  struct st_process *p = st_process_table_get (t, ev->pid);
  if (p == NULL)
    return -ENOMEM;
  if (!(ev->prot & PROT_EXEC))
    {
      if (reserve_maps (p, 2) < 0)
        return -ENOMEM;
      remove_overlaps (p, ev->start, ev->start + ev->len);
      return 0;
    }
  size_t path_size = strlen (ev->filename) + 1;
  if (p->path_bytes + path_size > ST_PROCESS_PATH_BYTES)
    {
      /* Over its budget: what was there goes, the new mapping is not kept.  */
      if (reserve_maps (p, 2) < 0)
        return -ENOMEM;
      remove_overlaps (p, ev->start, ev->start + ev->len);
      if (p->path_bytes + path_size > ST_PROCESS_PATH_BYTES)
        {
          if (t->path_bytes_refused++ == 0)
            st_warning ("pid %d: its executable mappings name more than %u MiB of paths: the "
                        "mappings beyond are not kept, and their frames not symbolized "
                        "(--stats counts them, of every process)",
                        (int) ev->pid, ST_PROCESS_PATH_BYTES >> 20);
          return 0;
        }
    }
  /* A JIT maps its jitdump file executable to say where it is.  */
  if (st_jitdump_is_dump_path (ev->filename) && p->jit != NULL)
    {
      int r = st_jit_map_add_dump (p->jit, ev->filename);
      if (r < 0)
        return r;
      if (r > 0 && !p->jit_dumps_refused)
        {
          p->jit_dumps_refused = true;
          t->jit_dumps_refused++;
        }
    }
  struct st_mapping *m = calloc (1, sizeof *m);
  if (m == NULL)
    return -ENOMEM;
  m->pid = p->pid;
  m->start = ev->start;
  m->end = ev->start + ev->len;
  m->pgoff = ev->pgoff;
  m->path = counted_hold (t, ev->filename);
  m->has_dev_ino = ev->has_dev_ino;
  m->maj = ev->maj;
  m->min = ev->min;
  m->ino = ev->ino;
  m->build_id_size = ev->build_id_size;
  memcpy (m->build_id, ev->build_id, ev->build_id_size);
  if (m->build_id_size == 0)
    {
      struct known_build_id *k = st_hashmap_get (t->build_ids, ev->filename,
                                                 strlen (ev->filename));
      if (k != NULL)
        {
          m->build_id_size = k->size;
          memcpy (m->build_id, k->id, k->size);
        }
    }
  if (m->path == NULL || insert_mapping (p, m) < 0)
    {
      mapping_free (t, m);
      return -ENOMEM;
    }
  return 0;
}

int
st_process_table_build_id (struct st_process_table *t, const struct st_build_id_event *b)
{
  if (b->build_id_size == 0)
    return 0;
  struct known_build_id *k = malloc (sizeof *k);
  if (k == NULL)
    return -ENOMEM;
  memcpy (k->id, b->build_id, b->build_id_size);
  k->size = b->build_id_size;
  return st_hashmap_put (t->build_ids, b->filename, strlen (b->filename), k);
}

int
st_process_table_comm (struct st_process_table *t, const struct st_comm_event *c)
{
  struct st_process *p = st_process_table_get (t, c->pid);
  if (p == NULL)
    return -ENOMEM;
  if (c->exec && process_new_image (t, p) < 0)
    return -ENOMEM;
  if (c->pid == c->tid || p->comm == NULL)
    set_comm (&p->comm, p->comm_buf, c->comm);
  return thread_set (t, c->pid, c->tid, c->comm);
}

int
st_process_table_fork (struct st_process_table *t, const struct st_task_event *f)
{
  /* A copy: the parent's name lives in its thread, which may be the
     one named here (a tid seen again).  */
  char name[ST_COMM_SIZE];
  const char *parent_comm = st_process_table_comm_of (t, f->ppid, f->ptid);
  const char *comm = parent_comm != NULL ? strcpy (name, parent_comm) : NULL;
  int r = thread_set (t, f->pid, f->tid, comm);
  if (r < 0 || f->pid == f->ppid)
    return r;   /* a new thread shares its process's maps */
  /* A new process starts with a copy of its parent's address space.  */
  struct st_process *parent = st_hashmap_get_u64 (t->processes, (uint32_t) f->ppid);
  bool seen = st_hashmap_get_u64 (t->processes, (uint32_t) f->pid) != NULL;
  struct st_process *child = st_process_table_get (t, f->pid);
  if (child == NULL || (seen && process_new_image (t, child) < 0))
    return -ENOMEM;
  if (comm != NULL)
    set_comm (&child->comm, child->comm_buf, comm);
  if (parent == NULL || parent == child)
    return 0;
  if (reserve_maps (child, parent->n_maps) < 0)
    return -ENOMEM;
  for (size_t i = 0; i < parent->n_maps; i++)
    {
      struct st_mapping *m = mapping_copy (t, parent->maps[i]);
      if (m == NULL)
        return -ENOMEM;
      m->pid = child->pid;
      child->maps[child->n_maps++] = m;
      child->path_bytes += strlen (m->path) + 1;
    }
  child->needs_report = child->n_maps > 0;
  return 0;
}

int
st_process_table_exit (struct st_process_table *t, const struct st_task_event *e)
{
  st_hashmap_remove_u64 (t->threads, (uint32_t) e->tid);
  if (e->pid == e->tid)
    st_hashmap_remove_u64 (t->processes, (uint32_t) e->pid);
  return 0;
}

/* libdwfl asks for a module's file: hand it a reference to ours.  */
static int
find_elf (Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
          char **file_name, Elf **elfp)
{
  const struct st_mapping *m = *userdata;
  if (m == NULL || m->file == NULL)
    return -1;
  *elfp = st_elf_file_for_libdwfl (m->file);
  /* Without an Elf, libdwfl would open a name it is given itself: a path
     a user may have made a FIFO since.  */
  if (*elfp != NULL)
    *file_name = strdup (m->file->path);
  return -1;
}

static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
  .find_elf = find_elf,
  .find_debuginfo = st_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

const Dwfl_Callbacks *
st_process_dwfl_callbacks (void)
{
  return &dwfl_callbacks;
}

/* What the resolver is asked about mapping M of process P.  */
static struct st_mapping_request
mapping_request (const struct st_process *p, const struct st_mapping *m)
{
  return (struct st_mapping_request) {
    .pid = p->pid,
    .path = m->path,
    .start = m->start,
    .end = m->end,
    .pgoff = m->pgoff,
    .has_dev_ino = m->has_dev_ino,
    .maj = m->maj,
    .min = m->min,
    .ino = m->ino,
    .build_id = m->build_id,
    .build_id_size = m->build_id_size,
  };
}

/* The files of P's new mappings that only the namespace helper has are
   asked for together, before they are resolved one by one.  */
static void
prefetch_mappings (struct st_process_table *t, const struct st_process *p)
{
  size_t n = 0;
  for (size_t i = 0; i < p->n_maps; i++)
    n += !p->maps[i]->resolved;
  if (n < 2)
    return;
  _cleanup_free_ struct st_mapping_request *reqs = malloc (n * sizeof *reqs);
  if (reqs == NULL)
    return;
  n = 0;
  for (size_t i = 0; i < p->n_maps; i++)
    if (!p->maps[i]->resolved)
      reqs[n++] = mapping_request (p, p->maps[i]);
  st_resolver_prefetch (t->resolver, reqs, n);
}

/* True when A and B are mappings the resolver is asked the same about:
   one file as the recording named it (the segments of a library, mapped
   side by side).  A path is one copy per table while any mapping holds
   it (counted_hold), and both do: equal paths are the same pointer.  */
static bool
same_request (const struct st_mapping *a, const struct st_mapping *b)
{
  return a->path == b->path && a->has_dev_ino == b->has_dev_ino && a->maj == b->maj
         && a->min == b->min && a->ino == b->ino && a->build_id_size == b->build_id_size
         && memcmp (a->build_id, b->build_id, a->build_id_size) == 0;
}

/* Finds the mapping's file (once).  PREV, when not NULL, is the mapping
   before M, resolved a moment ago in the same report: another segment of
   the same file takes its answer, which the resolver would give again
   but for a file rewritten in place meanwhile, and the process that
   mapped both saw one file (a short process's libraries are several
   segments each, and each question costs an fstat).  */
static void
resolve_mapping (struct st_process_table *t, struct st_process *p, struct st_mapping *m,
                 const struct st_mapping *prev)
{
  if (m->resolved)
    return;
  m->resolved = true;
  if (prev != NULL && prev->file != NULL && same_request (prev, m))
    {
      m->file = st_elf_file_ref (prev->file);
      return;
    }
  struct st_mapping_request req = mapping_request (p, m);
  struct st_resolution res;
  m->file = st_resolver_resolve (t->resolver, &req, &res);
  if (p->ran_in == NULL)
    p->ran_in = res.ran_in;
}

static void
report_mapping (struct st_process_table *t, struct st_process *p, struct st_mapping *m,
                const struct st_mapping *prev)
{
  resolve_mapping (t, p, m, prev);
  if (m->file == NULL)
    return;
  uint64_t low, high;
  if (!st_elf_file_mapping_bias (m->file, m->start, m->pgoff, true, &m->bias, &low, &high))
    {
      st_elf_file_unref (m->file);
      m->file = NULL;
      return;
    }
  m->has_bias = true;
  /* Crafted program headers can make the range wrap: no module.  */
  if (high <= low)
    return;
  /* The same code mapped a second time elsewhere (V8's built-ins in node)
     is symbolized with its own bias and the file's one symbol table; a
     second libdwfl module for it would span the whole file around it and
     overlap its neighbours, so the first mapping's module stays the only
     one (code without CFI is unwound by frame pointer anyway).  Only a
     module that would overlap: the same file loaded again elsewhere (a
     forked child's inherited maps, then its own after exec, in a Sysprof
     stream) is a module of its own.  */
  if (p->spans == NULL && (p->spans = st_module_spans_new ()) == NULL)
    return;
  if (st_module_spans_conflict (p->spans, m->file, low, high))
    return;
  if (p->n_modules >= ST_PROCESS_MAX_MODULES)
    {
      if (t->modules_refused++ == 0)
        st_warning ("pid %d: more than %d of its mappings would be modules of their own: the "
                    "rest are not symbolized (--stats counts them, of every process)",
                    (int) p->pid, ST_PROCESS_MAX_MODULES);
      return;
    }
  Dwfl_Module *mod = dwfl_report_module (p->dwfl, m->path, low, high);
  if (mod == NULL)
    {
      st_debug ("pid %d: cannot report %s at %#" PRIx64 ": %s", p->pid, m->path, low,
                dwfl_errmsg (-1));
      return;
    }
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  m->finder = t->finder;
  if (*userdata == NULL)
    {
      *userdata = m;
      m->reported = true;
      p->n_modules++;
      /* Without memory for it a later mapping of the file may overlap. */
      (void) st_module_spans_add (p->spans, m->file, low, high);
    }
}

Dwfl *
st_process_dwfl (struct st_process_table *t, struct st_process *p)
{
  if (p->dwfl != NULL && !p->needs_report)
    return p->dwfl_attached ? p->dwfl : NULL;
  if (p->dwfl == NULL)
    {
      p->dwfl = dwfl_begin (&dwfl_callbacks);
      if (p->dwfl == NULL)
        return NULL;
      dwfl_report_begin (p->dwfl);
    }
  else
    dwfl_report_begin_add (p->dwfl);
  /* Mappings are sorted and the modules already reported stay: offer
     the Dwfl only the mappings it was not offered (each offer may look at
     the file's program headers: a process may have 65,530 mappings).  */
  prefetch_mappings (t, p);
  const struct st_mapping *prev = NULL;   /* resolved in this report */
  for (size_t i = 0; i < p->n_maps; i++)
    {
      struct st_mapping *m = p->maps[i];
      if (m->offered)
        {
          prev = NULL;
          continue;
        }
      m->offered = true;
      bool fresh = !m->resolved;
      report_mapping (t, p, m, prev);
      prev = fresh ? m : NULL;
    }
  dwfl_report_end (p->dwfl, NULL, NULL);
  p->needs_report = false;
  if (!p->dwfl_attached)
    p->dwfl_attached = st_unwind_attach (p->dwfl, p->pid, p->slot);
  return p->dwfl_attached ? p->dwfl : NULL;
}
