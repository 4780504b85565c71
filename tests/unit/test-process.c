/* The process table: executable mappings added and looked up by pc, data
 * mappings cutting them, a fork copying them, an exec dropping them, an
 * exit evicting the process, a recorded build-id reaching later mappings,
 * a path going with its last mapping (or parked for results to write);
 * and, on this test's own /proc/self/maps, a Dwfl whose module for the pc
 * of a function here is this program, found on the host and symbolized.  */
#include "config.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdwfl.h>

#include "core/resolve/elf-file.h"
#include "core/resolve/jit-map.h"
#include "core/unwind/process.h"
#include "core/unwind/symbolize.h"

static struct st_mmap_event
exec_map (pid_t pid, uint64_t start, uint64_t len, const char *file)
{
  struct st_mmap_event m = {
    .pid = pid, .tid = pid, .start = start, .len = len, .pgoff = 0,
    .prot = PROT_READ | PROT_EXEC, .filename = file,
  };
  return m;
}

static void
test_maps_added_and_found_by_pc (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  assert_non_null (t);
  struct st_mmap_event a = exec_map (100, 0x400000, 0x1000, "/no/such/prog");
  struct st_mmap_event b = exec_map (100, 0x7f0000000000, 0x20000, "/no/such/libc.so.6");
  assert_int_equal (st_process_table_mmap (t, &b), 0);
  assert_int_equal (st_process_table_mmap (t, &a), 0);
  /* Not executable: not a module, and not in the table.  */
  struct st_mmap_event d = exec_map (100, 0x600000, 0x1000, "/no/such/data");
  d.prot = PROT_READ | PROT_WRITE;
  assert_int_equal (st_process_table_mmap (t, &d), 0);

  struct st_process *p = st_process_table_get (t, 100);
  assert_non_null (p);
  assert_int_equal (p->n_maps, 2);
  assert_true (p->maps[0]->start < p->maps[1]->start);   /* sorted */
  const struct st_mapping *m = st_process_find_mapping (p, 0x400123);
  assert_non_null (m);
  assert_string_equal (m->path, "/no/such/prog");
  m = st_process_find_mapping (p, 0x7f000001ffff);
  assert_non_null (m);
  assert_string_equal (m->path, "/no/such/libc.so.6");
  assert_null (st_process_find_mapping (p, 0x401000));   /* end is exclusive */
  assert_null (st_process_find_mapping (p, 0x3fffff));
  assert_null (st_process_find_mapping (p, 0x600000));

  /* A data mapping over the middle of the library cuts it in two.  */
  struct st_mmap_event over = exec_map (100, 0x7f0000008000, 0x1000, "//anon");
  over.prot = PROT_READ | PROT_WRITE;
  assert_int_equal (st_process_table_mmap (t, &over), 0);
  assert_int_equal (p->n_maps, 3);
  assert_null (st_process_find_mapping (p, 0x7f0000008800));
  m = st_process_find_mapping (p, 0x7f0000009000);
  assert_non_null (m);
  assert_int_equal (m->pgoff, 0x9000);   /* the tail keeps its file offset */
  st_process_table_free (t);
  st_resolver_free (r);
}

/* A mapping's path goes with its last mapping (a user mapping ever new
   paths must not grow the table); parked instead while results unwound
   before may still name it, until they are written; held again while
   parked, it stays.  */
static void
test_paths_go_with_their_last_mapping (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  char path[64];
  /* Without parking: each new path replaces the one before at once.  */
  for (int i = 0; i < 1000; i++)
    {
      snprintf (path, sizeof path, "/no/such/path-%d", i);
      struct st_mmap_event m = exec_map (100, 0x400000, 0x1000, path);
      assert_int_equal (st_process_table_mmap (t, &m), 0);
    }
  assert_int_equal (st_process_table_counted_held (t), 1);
  /* A fork's copy and a split hold the path too.  */
  struct st_task_event fork = { .pid = 101, .ppid = 100, .tid = 101, .ptid = 100 };
  assert_int_equal (st_process_table_fork (t, &fork), 0);
  struct st_mmap_event cut = exec_map (101, 0x400400, 0x100, "//anon");
  cut.prot = PROT_READ | PROT_WRITE;
  assert_int_equal (st_process_table_mmap (t, &cut), 0);
  struct st_process *child = st_process_table_get (t, 101);
  assert_int_equal (child->n_maps, 2);
  struct st_task_event parent_exit = { .pid = 100, .ppid = 1, .tid = 100, .ptid = 1 };
  assert_int_equal (st_process_table_exit (t, &parent_exit), 0);
  assert_int_equal (st_process_table_counted_held (t), 1);
  assert_string_equal (child->maps[1]->path, "/no/such/path-999");
  struct st_task_event child_exit = { .pid = 101, .ppid = 1, .tid = 101, .ptid = 1 };
  assert_int_equal (st_process_table_exit (t, &child_exit), 0);
  assert_int_equal (st_process_table_counted_held (t), 0);

  /* Parked: kept until the results before the stamp are written.  */
  struct st_mmap_event a = exec_map (200, 0x400000, 0x1000, "/no/such/a");
  assert_int_equal (st_process_table_mmap (t, &a), 0);
  const char *a_path = st_process_table_get (t, 200)->maps[0]->path;
  st_process_table_park (t, 5);
  struct st_mmap_event b = exec_map (200, 0x400000, 0x1000, "/no/such/b");
  assert_int_equal (st_process_table_mmap (t, &b), 0);
  assert_int_equal (st_process_table_counted_held (t), 2);
  assert_string_equal (a_path, "/no/such/a");   /* still there for a result */
  st_process_table_release_parked (t, 4);
  assert_int_equal (st_process_table_counted_held (t), 2);
  st_process_table_release_parked (t, 5);
  assert_int_equal (st_process_table_counted_held (t), 1);

  /* Parked, then held again: it stays, and goes when let go again.  */
  st_process_table_park (t, 6);
  assert_int_equal (st_process_table_mmap (t, &a), 0);   /* b parked */
  assert_int_equal (st_process_table_mmap (t, &b), 0);   /* b held again, a parked */
  st_process_table_release_parked (t, 6);
  assert_int_equal (st_process_table_counted_held (t), 1);
  assert_string_equal (st_process_table_get (t, 200)->maps[0]->path, "/no/such/b");
  st_process_table_park (t, 7);
  assert_int_equal (st_process_table_mmap (t, &a), 0);   /* b parked again */
  st_process_table_release_parked (t, 7);
  assert_int_equal (st_process_table_counted_held (t), 1);
  assert_string_equal (st_process_table_get (t, 200)->maps[0]->path, "/no/such/a");
  st_process_table_free (t);
  st_resolver_free (r);
}

/* A process that maps more jitdump files than its JIT map reads is
   counted once, however many more it maps; another process is not.  */
static void
test_jitdumps_past_the_cap_counted_once (void **state)
{
  (void) state;
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  char path[64];
  for (int i = 0; i < ST_JIT_MAP_MAX_DUMPS + 3; i++)
    {
      snprintf (path, sizeof path, "/no/such/%d/jit-100.dump", i);
      struct st_mmap_event e = exec_map (100, 0x10000000 + 0x10000 * (uint64_t) i, 0x1000, path);
      assert_int_equal (st_process_table_mmap (t, &e), 0);
      assert_int_equal (st_process_table_jit_dumps_refused (t), i >= ST_JIT_MAP_MAX_DUMPS);
    }
  struct st_mmap_event other = exec_map (101, 0x10000000, 0x1000, "/no/such/jit-101.dump");
  assert_int_equal (st_process_table_mmap (t, &other), 0);
  assert_int_equal (st_process_table_jit_dumps_refused (t), 1);
  st_process_table_free (t);
  st_resolver_free (r);
}

/* The JIT name of ADDR in P (no file maps it), or NULL.  */
static const char *
jit_name (const struct st_process *p, uint64_t addr)
{
  static const struct st_symbolize_options opts = { .inline_frames = false };
  struct st_raw_frame raw = { .pc = addr, .activation = true };
  struct st_frame out[2];
  assert_int_equal (st_symbolize (&opts, NULL, p, &raw, 1, out, 2), 1);
  return out[0].symbol;
}

static void
write_map (const char *path, const char *line)
{
  (void) unlink (path);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (line, f);
  assert_int_equal (fclose (f), 0);
}

/* A process that runs another program (an exec), and a pid a fork gives
   again while the table still has its last process (its exit unseen):
   the old program's JIT names name nothing of the new one's, which has
   a map of its own.  */
static void
test_jit_names_go_with_the_image (void **state)
{
  (void) state;
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  pid_t pid = getpid ();
  char path[64];
  snprintf (path, sizeof path, "/tmp/perf-%d.map", (int) pid);
  write_map (path, "20000 10 old_program\n");
  struct st_process *p = st_process_table_get (t, pid);
  assert_non_null (p);
  assert_string_equal (jit_name (p, 0x20005), "old_program");

  write_map (path, "30000 10 new_program\n");
  struct st_comm_event exec = { .pid = pid, .tid = pid, .exec = true, .comm = "new" };
  assert_int_equal (st_process_table_comm (t, &exec), 0);
  p = st_process_table_get (t, pid);
  assert_null (jit_name (p, 0x20005));
  assert_string_equal (jit_name (p, 0x30005), "new_program");

  write_map (path, "40000 10 next_process\n");
  struct st_task_event fork = { .pid = pid, .tid = pid, .ppid = 1, .ptid = 1 };
  assert_int_equal (st_process_table_fork (t, &fork), 0);
  p = st_process_table_get (t, pid);
  assert_null (jit_name (p, 0x30005));
  assert_string_equal (jit_name (p, 0x40005), "next_process");

  st_process_table_free (t);
  st_resolver_free (r);
  assert_int_equal (unlink (path), 0);
}

/* A process whose live mappings name ever more path bytes (distinct
   paths of 4 KB at distinct addresses, never replaced) is held to
   ST_PROCESS_PATH_BYTES: the mappings beyond are not kept; a mapping over
   one it has (the kernel replaced it) still takes its place.  */
static void
test_path_bytes_of_a_process_bounded (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  static char path[4000];
  memset (path, 'p', sizeof path - 1);
  path[0] = '/';
  enum { N = 2 * (ST_PROCESS_PATH_BYTES / sizeof path) };
  for (unsigned i = 0; i < N; i++)
    {
      snprintf (path + 1, 12, "%010u", i);
      path[11] = 'p';
      struct st_mmap_event m = exec_map (300, 0x10000000 + (uint64_t) i * 0x1000, 0x1000, path);
      assert_int_equal (st_process_table_mmap (t, &m), 0);
    }
  struct st_process *p = st_process_table_get (t, 300);
  print_message ("%u mappings of %zu-byte paths: %zu kept, %zu path bytes\n", (unsigned) N,
                 sizeof path, p->n_maps, p->path_bytes);
  assert_true (p->path_bytes <= ST_PROCESS_PATH_BYTES);
  assert_true (p->n_maps >= N / 2 - 1 && p->n_maps <= N / 2);
  assert_int_equal (st_process_table_counted_held (t), p->n_maps);
  assert_int_equal (st_process_table_mappings_refused (t), N - p->n_maps);
  /* The first mapping replaced by another path as long: over the budget
     until the old one goes, then kept; the budget is what the maps name.  */
  size_t before = p->n_maps;
  snprintf (path + 1, 12, "%010u", (unsigned) N);
  path[11] = 'p';
  struct st_mmap_event again = exec_map (300, 0x10000000, 0x1000, path);
  assert_int_equal (st_process_table_mmap (t, &again), 0);
  const struct st_mapping *m = st_process_find_mapping (p, 0x10000000);
  assert_non_null (m);
  assert_string_equal (m->path, path);
  assert_int_equal (p->n_maps, before);
  size_t sum = 0;
  for (size_t i = 0; i < p->n_maps; i++)
    sum += strlen (p->maps[i]->path) + 1;
  assert_int_equal (p->path_bytes, sum);
  /* Its exit gives everything back.  */
  struct st_task_event gone = { .pid = 300, .ppid = 1, .tid = 300, .ptid = 1 };
  assert_int_equal (st_process_table_exit (t, &gone), 0);
  assert_int_equal (st_process_table_counted_held (t), 0);
  st_process_table_free (t);
  st_resolver_free (r);
}

/* A process's JIT names (its /tmp/perf-PID.map, this test's own) are held
   while the process is: they go with it, not at the end of the run, or
   when the results unwound before it went are written.  */
static void
test_jit_names_go_with_their_process (void **state)
{
  char map[64];
  snprintf (map, sizeof map, "/tmp/perf-%d.map", (int) getpid ());
  FILE *f = fopen (map, "w");
  assert_non_null (f);
  for (int i = 0; i < 100; i++)
    fprintf (f, "%x 10 jit-name-%d\n", 0x10000 + i * 0x10, i);
  fprintf (f, "%x 10 jit-name-0\n", 0x20000);   /* a name twice */
  /* Another function at the address of the first: it wins, and the
     first's name is held until the map goes.  */
  fprintf (f, "%x 10 jit-replaced\n", 0x10000);
  assert_int_equal (fclose (f), 0);
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  for (int parked = 0; parked < 2; parked++)
    {
      if (parked)
        st_process_table_park (t, 7);
      struct st_process *p = st_process_table_get (t, getpid ());
      assert_non_null (p);
      uint64_t off = 0;
      const char *name = st_jit_map_lookup (p->jit, 0x10015, &off);
      assert_non_null (name);
      assert_string_equal (name, "jit-name-1");
      assert_string_equal (st_jit_map_lookup (p->jit, 0x10005, &off), "jit-replaced");
      /* The names are the map's own: none is a counted path.  */
      assert_int_equal (st_process_table_counted_held (t), 0);
      struct st_task_event gone = { .pid = getpid (), .ppid = 1, .tid = getpid (), .ptid = 1 };
      assert_int_equal (st_process_table_exit (t, &gone), 0);
      if (!parked)
        {
          assert_int_equal (st_process_table_jit_names_parked (t), 0);
          continue;
        }
      /* Parked: a result before stamp 7 may still name jit-name-1.  */
      assert_int_equal (st_process_table_jit_names_parked (t), 1);
      assert_string_equal (name, "jit-name-1");
      st_process_table_release_parked (t, 6);
      assert_int_equal (st_process_table_jit_names_parked (t), 1);
      st_process_table_release_parked (t, 7);
      assert_int_equal (st_process_table_jit_names_parked (t), 0);
    }
  unlink (map);
  st_process_table_free (t);
  st_resolver_free (r);
}

static void
test_fork_copies_exec_drops_exit_evicts (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  struct st_comm_event c = { .pid = 200, .tid = 200, .comm = "parent" };
  assert_int_equal (st_process_table_comm (t, &c), 0);
  struct st_mmap_event a = exec_map (200, 0x400000, 0x2000, "/no/such/parent");
  assert_int_equal (st_process_table_mmap (t, &a), 0);

  struct st_task_event fork = { .pid = 201, .ppid = 200, .tid = 201, .ptid = 200 };
  assert_int_equal (st_process_table_fork (t, &fork), 0);
  struct st_process *child = st_process_table_get (t, 201);
  assert_int_equal (child->n_maps, 1);
  assert_string_equal (st_process_find_mapping (child, 0x401000)->path, "/no/such/parent");
  assert_string_equal (st_process_table_comm_of (t, 201, 201), "parent");
  assert_int_equal (st_process_table_count (t), 2);

  /* The child execs: its old image is gone, the parent's stays.  */
  struct st_comm_event ex = { .pid = 201, .tid = 201, .exec = true, .comm = "child" };
  assert_int_equal (st_process_table_comm (t, &ex), 0);
  assert_int_equal (child->n_maps, 0);
  assert_null (st_process_find_mapping (child, 0x401000));
  assert_string_equal (st_process_table_comm_of (t, 201, 201), "child");
  struct st_process *parent = st_process_table_get (t, 200);
  assert_non_null (st_process_find_mapping (parent, 0x401000));

  /* A thread of the parent exits: the process stays.  Then the parent.  */
  struct st_task_event thread = { .pid = 200, .ppid = 200, .tid = 202, .ptid = 200 };
  assert_int_equal (st_process_table_fork (t, &thread), 0);
  assert_int_equal (st_process_table_exit (t, &thread), 0);
  assert_int_equal (st_process_table_count (t), 2);
  struct st_task_event exit_parent = { .pid = 200, .ppid = 1, .tid = 200, .ptid = 1 };
  assert_int_equal (st_process_table_exit (t, &exit_parent), 0);
  assert_int_equal (st_process_table_count (t), 1);
  assert_null (st_process_table_comm_of (t, 200, 200));
  /* A new process with the same number starts empty.  */
  assert_int_equal (st_process_table_get (t, 200)->n_maps, 0);
  st_process_table_free (t);
  st_resolver_free (r);
}

static void
test_recorded_build_id_reaches_mappings (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  struct st_build_id_event b = { .pid = -1, .build_id_size = 20, .filename = "/no/such/lib.so" };
  for (int i = 0; i < 20; i++)
    b.build_id[i] = (uint8_t) (0xa0 + i);
  assert_int_equal (st_process_table_build_id (t, &b), 0);
  struct st_mmap_event a = exec_map (300, 0x10000, 0x1000, "/no/such/lib.so");
  assert_int_equal (st_process_table_mmap (t, &a), 0);
  const struct st_mapping *m = st_process_find_mapping (st_process_table_get (t, 300), 0x10000);
  assert_int_equal (m->build_id_size, 20);
  assert_memory_equal (m->build_id, b.build_id, 20);
  st_process_table_free (t);
  st_resolver_free (r);
}

/* A function of this program, whose pc the Dwfl must find.  */
int st_test_process_marker (int x);
__attribute__ ((noinline)) int
st_test_process_marker (int x)
{
  return x * 3 + 1;
}

/* This process's executable file mappings, as a recorder sees them.  */
static size_t
feed_own_maps (struct st_process_table *t, pid_t pid)
{
  FILE *f = fopen ("/proc/self/maps", "r");
  assert_non_null (f);
  char line[4096];
  size_t n = 0;
  while (fgets (line, sizeof line, f) != NULL)
    {
      uint64_t start, end, pgoff, ino;
      unsigned maj, min;
      char perms[5];
      int path_at = 0;
      if (sscanf (line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
                  &start, &end, perms, &pgoff, &maj, &min, &ino, &path_at) < 7
          || perms[2] != 'x' || line[path_at] != '/')
        continue;
      line[strcspn (line, "\n")] = '\0';
      struct st_mmap_event m = exec_map (pid, start, end - start, line + path_at);
      m.pgoff = pgoff;
      m.has_dev_ino = true;
      m.maj = maj;
      m.min = min;
      m.ino = ino;
      assert_int_equal (st_process_table_mmap (t, &m), 0);
      n++;
    }
  fclose (f);
  return n;
}

static void
test_own_maps_give_a_dwfl_that_symbolizes (void **state)
{
  struct st_resolver *r = st_resolver_new ();
  struct st_process_table *t = NULL;
  assert_int_equal (st_process_table_new (r, &t), 0);
  pid_t pid = getpid ();
  size_t n = feed_own_maps (t, pid);
  print_message ("%zu executable mappings in /proc/self/maps\n", n);
  assert_true (n >= 2);   /* this program, libc */
  struct st_process *p = st_process_table_get (t, pid);
  Dwfl *dwfl = st_process_dwfl (t, p);
  assert_non_null (dwfl);

  uint64_t pc = (uint64_t) (uintptr_t) &st_test_process_marker;
  const struct st_mapping *m = st_process_find_mapping (p, pc);
  assert_non_null (m);
  assert_true (m->resolved);
  assert_non_null (m->file);
  assert_int_equal (m->file->found_by, ST_FOUND_HOST_PATH);
  char self[4096];
  ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
  assert_true (len > 0);
  self[len] = '\0';
  assert_string_equal (m->path, self);

  Dwfl_Module *mod = dwfl_addrmodule (dwfl, pc);
  assert_non_null (mod);
  const char *name = dwfl_module_addrname (mod, pc);
  assert_non_null (name);
  assert_string_equal (name, "st_test_process_marker");

  /* After an exec nothing is mapped: no Dwfl, no mapping for the pc.  */
  struct st_comm_event ex = { .pid = pid, .tid = pid, .exec = true, .comm = "other" };
  assert_int_equal (st_process_table_comm (t, &ex), 0);
  assert_null (st_process_find_mapping (p, pc));
  assert_null (st_process_dwfl (t, p));
  st_process_table_free (t);
  st_resolver_free (r);
}

/* Counts a Dwfl's modules.  */
static int
count_module (Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
  (*(size_t *) arg)++;
  return DWARF_CB_OK;
}

/* A new table (*R, *T) in which this process maps this program (SELF gets
   its path) once, at BASE, and has its Dwfl: the span of the file's
   module at that bias.  */
static uint64_t
mapped_once (char self[4096], uint64_t base, struct st_resolver **r, struct st_process_table **t)
{
  ssize_t len = readlink ("/proc/self/exe", self, 4095);
  assert_true (len > 0);
  self[len] = '\0';
  *r = st_resolver_new ();
  assert_int_equal (st_process_table_new (*r, t), 0);
  struct st_mmap_event first = exec_map (getpid (), base, 0x1000, self);
  assert_int_equal (st_process_table_mmap (*t, &first), 0);
  struct st_process *p = st_process_table_get (*t, getpid ());
  assert_non_null (st_process_dwfl (*t, p));
  assert_non_null (p->maps[0]->file);
  uint64_t bias, low, high;
  assert_true (st_elf_file_mapping_bias (p->maps[0]->file, base, 0, true, &bias, &low, &high));
  return high - low;
}

/* One file mapped again and again (V8's built-ins in node; a user's
   process with 65,530 such mappings): a mapping gets a module of its own
   only when its range overlaps no module of the file at another bias.
   This program mapped every half-span: every second mapping gets one.
   Mappings added after the Dwfl was made are offered once, in a second
   report; the rule holds across both.  */
static void
test_mappings_of_one_file_get_modules_apart (void **state)
{
  char self[4096];
  pid_t pid = getpid ();
  const uint64_t base = 0x100000000000;
  struct st_resolver *r = NULL;
  struct st_process_table *t = NULL;
  uint64_t span = mapped_once (self, base, &r, &t);
  struct st_process *p = st_process_table_get (t, pid);
  /* Half a span and a page apart: a mapping's range overlaps its
     neighbours' only.  */
  uint64_t step = ((span / 2) & ~(uint64_t) 0xfff) + 0x1000;
  enum { N = 2000 };
  for (unsigned i = 2; i < N; i += 2)
    {
      struct st_mmap_event m = exec_map (pid, base + i * step, 0x1000, self);
      assert_int_equal (st_process_table_mmap (t, &m), 0);
    }
  Dwfl *dwfl = st_process_dwfl (t, p);
  assert_non_null (dwfl);
  size_t modules = 0;
  dwfl_getmodules (dwfl, count_module, &modules, 0);
  assert_int_equal (modules, N / 2);
  /* The odd ones overlap both neighbours: no module.  */
  for (unsigned i = 1; i < N; i += 2)
    {
      struct st_mmap_event m = exec_map (pid, base + i * step, 0x1000, self);
      assert_int_equal (st_process_table_mmap (t, &m), 0);
    }
  assert_int_equal (p->n_maps, N);
  assert_true (st_process_dwfl (t, p) == dwfl);   /* added to, not made again */
  modules = 0;
  dwfl_getmodules (dwfl, count_module, &modules, 0);
  assert_int_equal (modules, N / 2);
  for (unsigned i = 0; i < N; i++)
    {
      assert_true (p->maps[i]->offered);
      assert_int_equal (p->maps[i]->reported, i % 2 == 0);
    }
  /* Each pc is in the module of its even mapping or of a neighbour.  */
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, base + 7 * step);
  assert_non_null (mod);
  Dwarf_Addr mod_low;
  dwfl_module_info (mod, NULL, &mod_low, NULL, NULL, NULL, NULL, NULL);
  assert_true (mod_low == base + 6 * step || mod_low == base + 8 * step);
  st_process_table_free (t);
  st_resolver_free (r);
}

/* A process whose mappings would each be a module of its own (one file
   mapped a span apart, again and again) gets ST_PROCESS_MAX_MODULES of
   them: libdwfl's reporting is quadratic in the modules.  The rest are
   counted; a new Dwfl (after an exec) starts from none again.  */
static void
test_modules_of_a_process_bounded (void **state)
{
  char self[4096];
  pid_t pid = getpid ();
  const uint64_t base = 0x100000000000;
  struct st_resolver *r = NULL;
  struct st_process_table *t = NULL;
  uint64_t span = mapped_once (self, base, &r, &t);
  struct st_process *p = st_process_table_get (t, pid);
  uint64_t step = (span | 0xfff) + 1;   /* a span apart: no overlap */
  enum { N = ST_PROCESS_MAX_MODULES + 100 };
  for (unsigned i = 1; i < N; i++)
    {
      struct st_mmap_event m = exec_map (pid, base + i * step, 0x1000, self);
      assert_int_equal (st_process_table_mmap (t, &m), 0);
    }
  Dwfl *dwfl = st_process_dwfl (t, p);
  assert_non_null (dwfl);
  size_t modules = 0;
  dwfl_getmodules (dwfl, count_module, &modules, 0);
  assert_int_equal (modules, ST_PROCESS_MAX_MODULES);
  assert_int_equal (p->n_modules, ST_PROCESS_MAX_MODULES);
  assert_int_equal (st_process_table_modules_refused (t), 100);
  /* A mapping over the first drops the Dwfl: the next one counts again.  */
  struct st_mmap_event over = exec_map (pid, base, 0x1000, self);
  assert_int_equal (st_process_table_mmap (t, &over), 0);
  dwfl = st_process_dwfl (t, p);
  assert_non_null (dwfl);
  modules = 0;
  dwfl_getmodules (dwfl, count_module, &modules, 0);
  assert_int_equal (modules, ST_PROCESS_MAX_MODULES);
  assert_int_equal (st_process_table_modules_refused (t), 200);
  st_process_table_free (t);
  st_resolver_free (r);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_maps_added_and_found_by_pc),
    cmocka_unit_test (test_fork_copies_exec_drops_exit_evicts),
    cmocka_unit_test (test_paths_go_with_their_last_mapping),
    cmocka_unit_test (test_jit_names_go_with_their_process),
    cmocka_unit_test (test_path_bytes_of_a_process_bounded),
    cmocka_unit_test (test_jitdumps_past_the_cap_counted_once),
    cmocka_unit_test (test_jit_names_go_with_the_image),
    cmocka_unit_test (test_recorded_build_id_reaches_mappings),
    cmocka_unit_test (test_own_maps_give_a_dwfl_that_symbolizes),
    cmocka_unit_test (test_mappings_of_one_file_get_modules_apart),
    cmocka_unit_test (test_modules_of_a_process_bounded),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
