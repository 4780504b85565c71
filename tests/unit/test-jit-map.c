/* jitdump records as perf's util/jitdump.c reads them: JIT_CODE_LOAD names
 * code, JIT_CODE_MOVE moves the code of a load (by its code_index) to a new
 * address, where perf inject --jit maps that load's code again.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/hashmap.h"
#include "basic/clock.h"
#include "core/resolve/jit-budget.h"
#include "core/resolve/jit-map.h"

struct dump {
  uint8_t bytes[4096];
  size_t n;
};

static void
put (struct dump *d, const void *p, size_t n)
{
  assert_true (d->n + n <= sizeof d->bytes);
  memcpy (d->bytes + d->n, p, n);
  d->n += n;
}

static void
put32 (struct dump *d, uint32_t v)
{
  put (d, &v, 4);
}

static void
put64 (struct dump *d, uint64_t v)
{
  put (d, &v, 8);
}

/* The file header: magic, version, header size, e_machine, pad, pid,
   timestamp, flags.  */
static void
header (struct dump *d)
{
  put32 (d, 0x4A695444);
  put32 (d, 1);
  put32 (d, 40);
  put32 (d, 62);
  put32 (d, 0);
  put32 (d, (uint32_t) getpid ());
  put64 (d, 1);
  put64 (d, 0);
}

static void
load (struct dump *d, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
  size_t len = strlen (name) + 1;
  put32 (d, 0);                                  /* JIT_CODE_LOAD */
  put32 (d, (uint32_t) (16 + 40 + len + size));  /* with the code */
  put64 (d, 2);
  put32 (d, 1);
  put32 (d, 1);
  put64 (d, addr);
  put64 (d, addr);
  put64 (d, size);
  put64 (d, index);
  put (d, name, len);
  for (uint64_t i = 0; i < size; i++)
    put (d, "\xc3", 1);
}

static void
move (struct dump *d, uint32_t total, uint64_t old_addr, uint64_t new_addr, uint64_t size,
      uint64_t index)
{
  /* The record is TOTAL bytes: cut short, or padded with zeros.  */
  struct dump r = { .n = 0 };
  put32 (&r, 1);                                 /* JIT_CODE_MOVE */
  put32 (&r, total);
  put64 (&r, 3);
  put32 (&r, 1);
  put32 (&r, 1);
  put64 (&r, old_addr);
  put64 (&r, old_addr);
  put64 (&r, new_addr);
  put64 (&r, size);
  put64 (&r, index);
  while (r.n < total)
    put (&r, "", 1);
  put (d, r.bytes, total);
}

struct seen {
  int loads, moves;
  uint64_t last_index, last_old, last_new, last_size;
};

static int
on_load (uint64_t start, uint64_t size, uint64_t index, const char *name, void *arg)
{
  (void) start, (void) size, (void) name;
  struct seen *s = arg;
  s->loads++;
  s->last_index = index;
  return 0;
}

static int
on_move (uint64_t index, uint64_t old_addr, uint64_t new_addr, uint64_t size, void *arg)
{
  struct seen *s = arg;
  s->moves++;
  s->last_index = index;
  s->last_old = old_addr;
  s->last_new = new_addr;
  s->last_size = size;
  return 0;
}

static void
test_parse_gives_moves (void **state)
{
  (void) state;
  struct dump d = { .n = 0 };
  header (&d);
  load (&d, 0x10000, 16, 7, "f");
  move (&d, 64, 0x10000, 0x30000, 16, 7);
  move (&d, 56, 0x10000, 0x50000, 16, 7);      /* too short: skipped */
  move (&d, 72, 0x10000, 0x60000, 16, 7);      /* longer (a newer writer): read */
  move (&d, 64, 0x10000, 0x70000, 0, 7);       /* no code: skipped */
  move (&d, 64, 0x10000, UINT64_MAX - 4, 16, 7); /* wraps: skipped */
  struct seen s = { 0 };
  struct st_jitdump_fns fns = { .load = on_load, .move = on_move };
  struct st_why why = { 0 };
  assert_int_equal (st_jitdump_parse (d.bytes, d.n, &fns, &s, &why), (long) d.n);
  assert_int_equal (s.loads, 1);
  assert_int_equal (s.moves, 2);
  assert_int_equal (s.last_index, 7);
  assert_int_equal (s.last_old, 0x10000);
  assert_int_equal (s.last_new, 0x60000);
  assert_int_equal (s.last_size, 16);
  /* Without a move callback the moves are passed over.  */
  struct seen t = { 0 };
  fns.move = NULL;
  assert_int_equal (st_jitdump_parse (d.bytes, d.n, &fns, &t, &why), (long) d.n);
  assert_int_equal (t.loads, 1);
  assert_int_equal (t.moves, 0);
  /* A move still being written is left for later.  */
  fns.move = on_move;
  struct seen u = { 0 };
  assert_int_equal (st_jitdump_parse (d.bytes, d.n - 10, &fns, &u, &why),
                    (long) (d.n - 64));
}

/* Makes a new directory from DIR (a mkdtemp template) and puts the name
   of this process's jitdump in it in PATH.  */
static void
dump_in_new_dir (char *dir, char *path, size_t size)
{
  assert_non_null (mkdtemp (dir));
  snprintf (path, size, "%s/jit-%d.dump", dir, (int) getpid ());
}

/* Writes the N bytes at BYTES as the whole of PATH.  */
static void
write_whole (const char *path, const void *bytes, size_t n)
{
  FILE *f = fopen (path, "wb");
  assert_non_null (f);
  assert_int_equal (fwrite (bytes, 1, n, f), n);
  assert_int_equal (fclose (f), 0);
}

static void
test_map_names_moved_code (void **state)
{
  (void) state;
  char dir[] = "/tmp/eu-stacktrace-jit-unit.XXXXXX", path[128];
  dump_in_new_dir (dir, path, sizeof path);
  struct dump d = { .n = 0 };
  header (&d);
  load (&d, 0x10000, 0x100, 1, "JS:*first");
  load (&d, 0x20000, 0x80, 2, "JS:*second");
  move (&d, 64, 0x10000, 0x30000, 0x100, 1);
  move (&d, 64, 0x50000, 0x40000, 0x100, 99);   /* no such load */
  load (&d, 0x31000, 0x40, 3, "JS:*third");
  move (&d, 64, 0x31000, 0x20000, 0x40, 3);     /* over second's start */
  write_whole (path, d.bytes, d.n);

  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, NULL, &m), 0);
  assert_int_equal (st_jit_map_add_dump (m, path), 0);
  uint64_t off = 0;
  /* The moved code at its new address, and still at its old one (samples
     taken before the move; names are not matched by time).  */
  assert_string_equal (st_jit_map_lookup (m, 0x30010, &off), "JS:*first");
  assert_int_equal (off, 0x10);
  assert_string_equal (st_jit_map_lookup_dump (m, 0x300ff, &off), "JS:*first");
  assert_int_equal (off, 0xff);
  assert_null (st_jit_map_lookup (m, 0x30100, &off));
  assert_string_equal (st_jit_map_lookup (m, 0x10010, &off), "JS:*first");
  /* A move of code nobody loaded names nothing.  */
  assert_null (st_jit_map_lookup (m, 0x40010, &off));
  /* The later record wins where two start at one address.  */
  assert_string_equal (st_jit_map_lookup (m, 0x20010, &off), "JS:*third");
  assert_string_equal (st_jit_map_lookup (m, 0x31010, &off), "JS:*third");
  st_jit_map_free (m);
  assert_int_equal (unlink (path), 0);
  assert_int_equal (rmdir (dir), 0);
}

/* Writes PID's perf map: 100 lines of 16 bytes naming fn_000..fn_099 at
   0x10000 + 0x10 * i, then TAIL (NULL: none; an unfinished line).  Its
   path in PATH.  */
static void
write_perf_map (pid_t pid, const char *tail, char *path, size_t size)
{
  snprintf (path, size, "/tmp/perf-%d.map", (int) pid);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  for (int i = 0; i < 100; i++)
    fprintf (f, "%x 10 fn_%03d\n", 0x10000 + 0x10 * i, i);
  if (tail != NULL)
    fputs (tail, f);
  assert_int_equal (fclose (f), 0);
}

/* Each user's two budgets, and that they are the user's own.  */
static void
test_budget_bounds_each_user (void **state)
{
  (void) state;
  struct st_jit_budget *b = st_jit_budget_new (1002);
  assert_non_null (b);
  assert_true (st_jit_budget_available (b, 1002, 0) == UINT64_MAX);
  const uint64_t s = 1000000000ull, t0 = 5 * s;
  assert_int_equal (st_jit_budget_available (b, 1000, t0), ST_JIT_USER_BURST_BYTES);
  /* Held: what is read and still held counts against the user.  */
  st_jit_budget_charge (b, 1000, 0, ST_JIT_USER_HELD_BYTES - 100, ST_JIT_USER_HELD_BYTES - 100);
  assert_int_equal (st_jit_budget_held (b, 1000), ST_JIT_USER_HELD_BYTES - 100);
  assert_int_equal (st_jit_budget_available (b, 1000, t0), 100);
  /* Another user's is untouched.  */
  assert_int_equal (st_jit_budget_available (b, 1001, t0), ST_JIT_USER_BURST_BYTES);
  /* Given back (the process went), the rate still holds: the burst was
     spent, and it comes back at ST_JIT_USER_RATE_BYTES a second.  */
  st_jit_budget_give_back (b, 1000, ST_JIT_USER_HELD_BYTES / 2);
  assert_int_equal (st_jit_budget_available (b, 1000, t0), 100);
  assert_int_equal (st_jit_budget_available (b, 1000, t0 + s), 100 + ST_JIT_USER_RATE_BYTES);
  assert_int_equal (st_jit_budget_available (b, 1000, t0 + s + s / 2),
                    100 + ST_JIT_USER_RATE_BYTES + ST_JIT_USER_RATE_BYTES / 2);
  /* Never more than the burst, nor than the held budget leaves.  */
  assert_int_equal (st_jit_budget_available (b, 1000, t0 + 3600 * s),
                    ST_JIT_USER_HELD_BYTES / 2 + 100);
  st_jit_budget_give_back (b, 1000, ST_JIT_USER_HELD_BYTES);
  assert_int_equal (st_jit_budget_held (b, 1000), 0);
  assert_int_equal (st_jit_budget_available (b, 1000, t0 + 3600 * s), ST_JIT_USER_BURST_BYTES);
  /* A clock that does not move on (or goes back) gives nothing.  */
  st_jit_budget_charge (b, 1000, 0, ST_JIT_USER_BURST_BYTES, ST_JIT_USER_BURST_BYTES);
  assert_int_equal (st_jit_budget_available (b, 1000, t0), 0);
  /* One warning for the budget's life; every refusal counted.  */
  assert_true (st_jit_budget_refused (b, 1000));
  assert_false (st_jit_budget_refused (b, 1001));
  assert_false (st_jit_budget_refused (b, 1000));
  assert_int_equal (st_jit_budget_reads_refused (b), 3);
  assert_int_equal (st_jit_budget_users_refused (b), 2);
  st_jit_budget_free (b);
}

/* What one reader reserves another cannot take (two unwinding threads
   reading the same user's files at once), and what it did not use comes
   back when it charges what it did.  */
static void
test_budget_reservations_share (void **state)
{
  (void) state;
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  const uint64_t all = ST_JIT_USER_BURST_BYTES;
  assert_int_equal (st_jit_budget_reserve (b, 1000, all - 100, 0), all - 100);
  assert_int_equal (st_jit_budget_reserve (b, 1000, all, 0), 100);
  assert_int_equal (st_jit_budget_reserve (b, 1000, all, 0), 0);
  assert_int_equal (st_jit_budget_reserve (b, 1001, 10, 0), 10);
  st_jit_budget_charge (b, 1000, all - 100, 300, 200);
  st_jit_budget_charge (b, 1000, 100, 0, 100);
  assert_int_equal (st_jit_budget_held (b, 1000), 300);
  assert_int_equal (st_jit_budget_available (b, 1000, 0), all - 300);
  /* The unbudgeted user is given what it asks.  */
  struct st_jit_budget *own = st_jit_budget_new (1000);
  assert_non_null (own);
  assert_true (st_jit_budget_reserve (own, 1000, UINT64_MAX, 0) == UINT64_MAX);
  st_jit_budget_free (own);
  st_jit_budget_free (b);
}

/* What a file holds moves with it to another user, and never to the
   unbudgeted one.  */
static void
test_budget_moves_held_bytes (void **state)
{
  (void) state;
  struct st_jit_budget *b = st_jit_budget_new (1002);
  assert_non_null (b);
  assert_int_equal (st_jit_budget_available (b, 1000, 0), ST_JIT_USER_BURST_BYTES);
  st_jit_budget_charge (b, 1000, 0, 5000, 5000);
  st_jit_budget_move (b, 1000, 1001, 3000, 0);
  assert_int_equal (st_jit_budget_held (b, 1000), 2000);
  assert_int_equal (st_jit_budget_held (b, 1001), 3000);
  /* The new user may hold that much less.  */
  assert_int_equal (st_jit_budget_available (b, 1001, 0), ST_JIT_USER_HELD_BYTES - 3000);
  st_jit_budget_charge (b, 1001, 0, ST_JIT_USER_HELD_BYTES - 3000 - 10, 0);
  assert_int_equal (st_jit_budget_available (b, 1001, 0), 10);
  st_jit_budget_move (b, 1001, 1002, ST_JIT_USER_HELD_BYTES, 0);
  assert_int_equal (st_jit_budget_held (b, 1001), 0);
  assert_int_equal (st_jit_budget_held (b, 1002), 0);
  st_jit_budget_move (b, 1002, 1000, 100, 0);
  assert_int_equal (st_jit_budget_held (b, 1000), 2100);
  st_jit_budget_free (b);
}

/* A process's map reads the first ST_JIT_MAP_MAX_DUMPS jitdump files it
   maps; the others are said to be refused.  */
static void
test_map_reads_the_first_dumps_only (void **state)
{
  (void) state;
  char dir[64];
  snprintf (dir, sizeof dir, "/tmp/eu-stacktrace-jit-unit-%d", (int) getpid ());
  assert_int_equal (mkdir (dir, 0700), 0);
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  char file[ST_JIT_MAP_MAX_DUMPS + 2][128];
  for (int i = 0; i < ST_JIT_MAP_MAX_DUMPS + 2; i++)
    {
      snprintf (file[i], sizeof file[i], "%s/%d", dir, i);
      assert_int_equal (mkdir (file[i], 0700), 0);
      snprintf (file[i], sizeof file[i], "%s/%d/jit-%d.dump", dir, i, (int) getpid ());
      struct dump d = { .n = 0 };
      header (&d);
      char name[32];
      snprintf (name, sizeof name, "JS:*f%d", i);
      load (&d, 0x10000 * (i + 1), 0x100, 1, name);
      FILE *f = fopen (file[i], "wb");
      assert_non_null (f);
      assert_int_equal (fwrite (d.bytes, 1, d.n, f), d.n);
      assert_int_equal (fclose (f), 0);
      int refused = i >= ST_JIT_MAP_MAX_DUMPS;
      assert_int_equal (st_jit_map_add_dump (m, file[i]), refused);
      /* A path mapped again is one file.  */
      assert_int_equal (st_jit_map_add_dump (m, file[i]), refused);
    }
  uint64_t off = 0;
  for (int i = 0; i < ST_JIT_MAP_MAX_DUMPS + 2; i++)
    {
      const char *name = st_jit_map_lookup (m, 0x10000 * (i + 1) + 1, &off);
      if (i < ST_JIT_MAP_MAX_DUMPS)
        {
          char want[32];
          snprintf (want, sizeof want, "JS:*f%d", i);
          assert_non_null (name);
          assert_string_equal (name, want);
        }
      else
        assert_null (name);
    }
  st_jit_map_free (m);
  st_jit_budget_free (b);
  for (int i = 0; i < ST_JIT_MAP_MAX_DUMPS + 2; i++)
    {
      assert_int_equal (unlink (file[i]), 0);
      *strrchr (file[i], '/') = '\0';
      assert_int_equal (rmdir (file[i]), 0);
    }
  assert_int_equal (rmdir (dir), 0);
}

/* A process that becomes another user takes what its map holds to that
   user's budget (root: the child changes its uid).  */
static void
test_map_moves_to_the_new_user (void **state)
{
  (void) state;
  if (geteuid () != 0)
    skip ();
  int go[2], done[2];
  assert_int_equal (pipe (go), 0);
  assert_int_equal (pipe (done), 0);
  pid_t child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    {
      /* Ends with the test, whatever it asserts: at the end of the pipe
         (the test closed it, or is gone) or at the alarm (a parent-death
         signal would not survive the change of uid).  */
      char c;
      close (go[1]);
      close (done[0]);
      alarm (60);
      if (read (go[0], &c, 1) != 1 || setresgid (65534, 65534, 65534) != 0
          || setresuid (65534, 65534, 65534) != 0 || write (done[1], "x", 1) != 1)
        _exit (1);
      /* Until the test is done with it: the end of the pipe.  */
      _exit (read (go[0], &c, 1) == 0 ? 0 : 1);
    }
  close (go[0]);
  close (done[1]);
  char path[64];
  write_perf_map (child, NULL, path, sizeof path);

  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (child, NULL, NULL, b, &m), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10000 + 3, &off), "fn_000");
  uint64_t held = st_jit_budget_held (b, 0);
  assert_true (held >= 1600);
  assert_int_equal (st_jit_budget_held (b, 65534), 0);

  char c;
  assert_int_equal (write (go[1], "x", 1), 1);
  assert_int_equal (read (done[0], &c, 1), 1);
  /* A jitdump mapped has the map read again at its next miss.  */
  assert_int_equal (st_jit_map_add_dump (m, "/nonexistent/jit-1.dump"), 0);
  assert_null (st_jit_map_lookup (m, 0x90000, &off));
  assert_int_equal (st_jit_budget_held (b, 0), 0);
  assert_int_equal (st_jit_budget_held (b, 65534), held);
  st_jit_map_free (m);
  assert_int_equal (st_jit_budget_held (b, 65534), 0);
  st_jit_budget_free (b);

  close (go[1]);
  int status;
  assert_int_equal (waitpid (child, &status, 0), child);
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  assert_int_equal (unlink (path), 0);
  close (done[0]);
}

/* A map reads its process's files as far as the user's budget goes, and
   gives back what it held when it goes.  */
static void
test_map_reads_within_budget (void **state)
{
  (void) state;
  char path[64];
  write_perf_map (getpid (), NULL, path, sizeof path);

  /* Our own user has 800 bytes left: fifty lines.  */
  uid_t uid = getuid ();
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  assert_true (st_jit_budget_available (b, uid, st_now_ns ()) == ST_JIT_USER_BURST_BYTES);
  st_jit_budget_charge (b, uid, 0, ST_JIT_USER_HELD_BYTES - 800, ST_JIT_USER_HELD_BYTES - 800);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10000 + 0x10 * 49 + 3, &off), "fn_049");
  assert_int_equal (off, 3);
  assert_int_equal (st_jit_map_size (m), 50);
  /* Stopped by the budget: not kept open, only a load reads it on.  */
  assert_int_equal (st_jit_budget_kept (b, uid), 0);
  assert_null (st_jit_map_lookup (m, 0x10000 + 0x10 * 50, &off));
  /* The text and the entries it made are held.  */
  assert_true (st_jit_budget_held (b, uid) > ST_JIT_USER_HELD_BYTES);
  assert_int_equal (st_jit_budget_reads_refused (b), 1);
  st_jit_map_free (m);
  assert_int_equal (st_jit_budget_held (b, uid), ST_JIT_USER_HELD_BYTES - 800);
  st_jit_budget_free (b);
  assert_int_equal (unlink (path), 0);
}

/* A map read whole, to an unfinished last line, with less budget than it
   could reserve but more than it holds, was not stopped by the budget:
   no refusal counted, no warning.  */
static void
test_unfinished_line_is_no_refusal (void **state)
{
  (void) state;
  char path[64];
  write_perf_map (getpid (), "20000 10 still_being_wr", path, sizeof path);

  /* 8000 bytes left: under 8 per byte of the 1,623 of text, over the
     1,600 + 100 x 32 the lines hold.  */
  uid_t uid = getuid ();
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  assert_true (st_jit_budget_available (b, uid, st_now_ns ()) == ST_JIT_USER_BURST_BYTES);
  st_jit_budget_charge (b, uid, 0, ST_JIT_USER_HELD_BYTES - 8000, 0);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10000 + 0x10 * 99 + 3, &off), "fn_099");
  assert_int_equal (st_jit_map_size (m), 100);
  assert_int_equal (st_jit_budget_reads_refused (b), 0);
  st_jit_map_free (m);
  st_jit_budget_free (b);
  assert_int_equal (unlink (path), 0);
}

/* A jitdump record larger than a read window, and than the budget allows
   now, is left for later: the file is not given up.  */
static void
test_map_leaves_a_big_record_for_later (void **state)
{
  (void) state;
  char path[64];
  snprintf (path, sizeof path, "/tmp/eu-stacktrace-jit-unit-%d", (int) getpid ());
  assert_int_equal (mkdir (path, 0700), 0);
  char file[128];
  snprintf (file, sizeof file, "%s/jit-%d.dump", path, (int) getpid ());
  const uint32_t big = 6u << 20;
  struct dump d = { .n = 0 };
  header (&d);
  load (&d, 0x10000, 0x100, 1, "JS:*before");
  put32 (&d, 99);          /* a record of a kind we skip */
  put32 (&d, big);
  put64 (&d, 3);
  FILE *f = fopen (file, "wb");
  assert_non_null (f);
  assert_int_equal (fwrite (d.bytes, 1, d.n, f), d.n);
  static const char zeros[4096];
  for (uint32_t left = big - 16; left > 0; left -= left < sizeof zeros ? left : sizeof zeros)
    assert_int_equal (fwrite (zeros, 1, left < sizeof zeros ? left : sizeof zeros, f),
                      left < sizeof zeros ? left : sizeof zeros);
  d.n = 0;
  load (&d, 0x20000, 0x100, 2, "JS:*after");
  assert_int_equal (fwrite (d.bytes, 1, d.n, f), d.n);
  assert_int_equal (fclose (f), 0);

  /* 5 MiB may be read now: more than a window, less than the record.  */
  uid_t uid = getuid ();
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  assert_true (st_jit_budget_available (b, uid, st_now_ns ()) == ST_JIT_USER_BURST_BYTES);
  st_jit_budget_charge (b, uid, 0, ST_JIT_USER_HELD_BYTES - (5u << 20),
                        ST_JIT_USER_BURST_BYTES - (5u << 20));
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  assert_int_equal (st_jit_map_add_dump (m, file), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10010, &off), "JS:*before");
  assert_null (st_jit_map_lookup (m, 0x20010, &off));
  /* Stopped at the budget, to be read on: counted as such.  */
  assert_int_equal (st_jit_budget_reads_refused (b), 1);
  st_jit_map_free (m);
  st_jit_budget_free (b);
  assert_int_equal (unlink (file), 0);
  assert_int_equal (rmdir (path), 0);
}

/* Names appended after a load are sorted into those read before, and a
   later function at an address wins there too.  */
static void
test_map_merges_appended_names (void **state)
{
  (void) state;
  char path[64];
  snprintf (path, sizeof path, "/tmp/perf-%d.map", (int) getpid ());
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  for (int i = 0; i < 50; i++)
    fprintf (f, "%x 10 a_%d\n", 0x10000 + 0x20 * i, i);
  assert_int_equal (fclose (f), 0);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, NULL, &m), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10000, &off), "a_0");
  assert_int_equal (st_jit_map_size (m), 50);
  /* In between each, from the end back, and one over a_7.  */
  f = fopen (path, "a");
  assert_non_null (f);
  for (int i = 49; i >= 0; i--)
    fprintf (f, "%x 10 b_%d\n", 0x10010 + 0x20 * i, i);
  fprintf (f, "%x 10 a_7_again\n", 0x10000 + 0x20 * 7);
  assert_int_equal (fclose (f), 0);
  /* A jitdump named (there is none) makes the next miss read at once.  */
  assert_int_equal (st_jit_map_add_dump (m, "/nonexistent/jit-1.dump"), 0);
  assert_string_equal (st_jit_map_lookup (m, 0x10010 + 0x20 * 49 + 1, &off), "b_49");
  assert_int_equal (off, 1);
  assert_int_equal (st_jit_map_size (m), 100);
  for (int i = 0; i < 50; i++)
    {
      char a[16], b[16];
      snprintf (a, sizeof a, i == 7 ? "a_%d_again" : "a_%d", i);
      snprintf (b, sizeof b, "b_%d", i);
      assert_string_equal (st_jit_map_lookup (m, 0x10000 + 0x20 * i + 0xf, &off), a);
      assert_string_equal (st_jit_map_lookup (m, 0x10010 + 0x20 * i, &off), b);
    }
  st_jit_map_free (m);
  assert_int_equal (unlink (path), 0);
}

/* Past ST_JIT_MAP_GROWN_NS: a wait of it on the monotonic clock, not a
   synchronization with anything.  */
static void
wait_past_grown_check (void)
{
  struct timespec ts = { 0, (long) (2 * ST_JIT_MAP_GROWN_NS) };
  while (nanosleep (&ts, &ts) != 0)
    ;
}

/* What a JIT appends between two loads (ST_JIT_MAP_RETRY_NS apart) is
   read at the next miss that finds the file grown: the first samples of a
   newly compiled function are named, not those of the next load only.  */
static void
test_map_reads_growth_between_loads (void **state)
{
  (void) state;
  char path[64];
  write_perf_map (getpid (), "20000 10 still_being_wr", path, sizeof path);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, NULL, &m), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10000 + 3, &off), "fn_000");
  assert_null (st_jit_map_lookup (m, 0x20000, &off));
  /* The last line is finished, and one more written.  */
  FILE *f = fopen (path, "a");
  assert_non_null (f);
  fputs ("itten\n30000 10 compiled_later\n", f);
  assert_int_equal (fclose (f), 0);
  wait_past_grown_check ();
  assert_string_equal (st_jit_map_lookup (m, 0x20001, &off), "still_being_written");
  assert_int_equal (off, 1);
  assert_string_equal (st_jit_map_lookup (m, 0x3000f, &off), "compiled_later");
  assert_int_equal (st_jit_map_size (m), 102);
  /* (Before the map read between loads, the two names waited for the
     next load, ST_JIT_MAP_RETRY_NS after the first: these lookups failed
     unless the machine stalled that long.)  */
  st_jit_map_free (m);
  assert_int_equal (unlink (path), 0);
}

/* A jitdump grows between loads too: a record appended (and one whose
   second half comes later) is read from where the last read stopped, a
   move naming a load read before it.  */
static void
test_map_reads_a_growing_jitdump_between_loads (void **state)
{
  (void) state;
  char dir[] = "/tmp/eu-stacktrace-jit-unit.XXXXXX", path[128];
  dump_in_new_dir (dir, path, sizeof path);
  struct dump d = { .n = 0 };
  header (&d);
  load (&d, 0x10000, 0x100, 1, "JS:*first");
  FILE *f = fopen (path, "wb");
  assert_non_null (f);
  assert_int_equal (fwrite (d.bytes, 1, d.n, f), d.n);
  assert_int_equal (fflush (f), 0);
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  assert_int_equal (st_jit_map_add_dump (m, path), 0);
  uint64_t off = 0;
  assert_string_equal (st_jit_map_lookup (m, 0x10010, &off), "JS:*first");
  assert_int_equal (st_jit_budget_kept (b, getuid ()), 1);   /* no perf map: the dump */

  d.n = 0;
  load (&d, 0x20000, 0x80, 2, "JS:*second");
  move (&d, 64, 0x10000, 0x30000, 0x100, 1);
  size_t half = d.n - 20;   /* the move's last 20 bytes come later */
  assert_int_equal (fwrite (d.bytes, 1, half, f), half);
  assert_int_equal (fflush (f), 0);
  wait_past_grown_check ();
  assert_string_equal (st_jit_map_lookup (m, 0x20010, &off), "JS:*second");
  assert_null (st_jit_map_lookup (m, 0x30010, &off));
  assert_int_equal (fwrite (d.bytes + half, 1, d.n - half, f), d.n - half);
  assert_int_equal (fclose (f), 0);
  wait_past_grown_check ();
  assert_string_equal (st_jit_map_lookup (m, 0x30010, &off), "JS:*first");
  assert_int_equal (off, 0x10);
  st_jit_map_free (m);
  assert_int_equal (st_jit_budget_kept (b, getuid ()), 0);
  st_jit_budget_free (b);
  assert_int_equal (unlink (path), 0);
  assert_int_equal (rmdir (dir), 0);
}

/* A file given up (not a jitdump) and then replaced by another at its
   name (the pid's next process, no event telling) is read from its start
   at the next load.  The old one is moved away, not unlinked: a file
   system may give a new file an unlinked one's inode number, and the
   two then look the same (a limit of the identity check).  */
static void
test_map_reads_a_replaced_file_it_gave_up (void **state)
{
  (void) state;
  char dir[] = "/tmp/eu-stacktrace-jit-unit.XXXXXX", path[128];
  dump_in_new_dir (dir, path, sizeof path);
  static const char not_a_dump[64] = "not a jitdump";
  write_whole (path, not_a_dump, sizeof not_a_dump);
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, NULL, &m), 0);
  assert_int_equal (st_jit_map_add_dump (m, path), 0);
  uint64_t off = 0;
  assert_null (st_jit_map_lookup (m, 0x10010, &off));   /* ignored, with a warning */

  char old_path[160];
  snprintf (old_path, sizeof old_path, "%s.old", path);
  assert_int_equal (rename (path, old_path), 0);
  struct dump d = { .n = 0 };
  header (&d);
  load (&d, 0x10000, 0x100, 1, "JS:*next_process");
  write_whole (path, d.bytes, d.n);
  /* A jitdump named makes the next miss a load.  */
  assert_int_equal (st_jit_map_add_dump (m, "/nonexistent/jit-1.dump"), 0);
  const char *name = st_jit_map_lookup (m, 0x10010, &off);
  assert_non_null (name);
  assert_string_equal (name, "JS:*next_process");
  st_jit_map_free (m);
  assert_int_equal (unlink (path), 0);
  assert_int_equal (unlink (old_path), 0);
  assert_int_equal (rmdir (dir), 0);
}

/* A kept file whose name no longer opens (as root: another user's now) is
   not read again after the load that finds so: what its writer appends
   names nothing.  Unlinked between loads, it is let go at the next look.  */
static void
test_map_lets_go_of_a_file_it_may_not_read (void **state)
{
  (void) state;
  char path[64];
  uint64_t off = 0;
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  struct st_jit_map *m;
  FILE *f;
  if (geteuid () == 0)
    {
      write_perf_map (getpid (), NULL, path, sizeof path);
      assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
      assert_string_equal (st_jit_map_lookup (m, 0x10000 + 3, &off), "fn_000");
      f = fopen (path, "a");
      assert_non_null (f);
      assert_int_equal (chown (path, 65534, 65534), 0);
      /* A load now (a jitdump named makes the next miss one): the file is
         refused, and the one kept let go.  */
      assert_int_equal (st_jit_map_add_dump (m, "/nonexistent/jit-1.dump"), 0);
      assert_null (st_jit_map_lookup (m, 0x20000, &off));
      fputs ("20000 10 planted\n", f);
      assert_int_equal (fflush (f), 0);
      wait_past_grown_check ();
      assert_null (st_jit_map_lookup (m, 0x20000, &off));
      assert_int_equal (fclose (f), 0);
      st_jit_map_free (m);
      assert_int_equal (unlink (path), 0);
    }

  write_perf_map (getpid (), NULL, path, sizeof path);
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, b, &m), 0);
  assert_string_equal (st_jit_map_lookup (m, 0x10000 + 3, &off), "fn_000");
  assert_int_equal (st_jit_budget_kept (b, getuid ()), 1);
  f = fopen (path, "a");
  assert_non_null (f);
  assert_int_equal (unlink (path), 0);
  wait_past_grown_check ();
  assert_null (st_jit_map_lookup (m, 0x20000, &off));
  fputs ("20000 10 planted\n", f);
  assert_int_equal (fflush (f), 0);
  wait_past_grown_check ();
  assert_null (st_jit_map_lookup (m, 0x20000, &off));
  assert_int_equal (fclose (f), 0);
  assert_int_equal (st_jit_budget_kept (b, getuid ()), 0);
  st_jit_map_free (m);
  assert_int_equal (st_jit_budget_kept (b, getuid ()), 0);
  st_jit_budget_free (b);
}

/* Files kept open: at most ST_JIT_USER_KEPT_FILES a user, and
   ST_JIT_KEPT_FILES in all; a file let go makes room.  */
static void
test_budget_bounds_kept_files (void **state)
{
  (void) state;
  struct st_jit_budget *b = st_jit_budget_new ((uid_t) -1);
  assert_non_null (b);
  for (unsigned i = 0; i < ST_JIT_USER_KEPT_FILES; i++)
    assert_true (st_jit_budget_keep_file (b, 1000));
  assert_false (st_jit_budget_keep_file (b, 1000));
  st_jit_budget_let_go_file (b, 1000);
  assert_true (st_jit_budget_keep_file (b, 1000));
  assert_false (st_jit_budget_keep_file (b, 1000));
  /* Other users, up to the whole run's bound.  */
  unsigned kept = ST_JIT_USER_KEPT_FILES;
  for (uid_t uid = 2000; kept < ST_JIT_KEPT_FILES; uid++)
    for (unsigned i = 0; i < ST_JIT_USER_KEPT_FILES && kept < ST_JIT_KEPT_FILES; i++, kept++)
      assert_true (st_jit_budget_keep_file (b, uid));
  assert_false (st_jit_budget_keep_file (b, 999));
  st_jit_budget_let_go_file (b, 1000);
  assert_true (st_jit_budget_keep_file (b, 999));
  /* Letting go of what was not kept gives nothing.  */
  st_jit_budget_let_go_file (b, 998);
  assert_false (st_jit_budget_keep_file (b, 997));
  st_jit_budget_free (b);
}

/* Names read in many loads (each sorted into the recent ones, and those
   into the base past a bound) name each address as one sorted list of all
   of them would: the function that starts last at or before it, the last
   written of those that start there, if the address is inside it.  */
struct model_entry {
  uint64_t start, end;
  char name[16];
};

static const char *
model_lookup (const struct model_entry *e, size_t n, uint64_t addr)
{
  const struct model_entry *best = NULL;
  for (size_t i = 0; i < n; i++)
    if (e[i].start <= addr && (best == NULL || e[i].start >= best->start))
      best = &e[i];   /* at an equal start the later wins */
  return best != NULL && addr < best->end ? best->name : NULL;
}

static void
test_map_loads_agree_with_one_sorted_list (void **state)
{
  (void) state;
  enum { BATCHES = 40, PER_BATCH = 300, QUERIES = 300, SPAN = 0x40000 };
  char path[64];
  snprintf (path, sizeof path, "/tmp/perf-%d.map", (int) getpid ());
  (void) unlink (path);   /* a file another test left is not ours to read */
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  assert_int_equal (fclose (f), 0);
  struct model_entry *model = calloc (BATCHES * PER_BATCH, sizeof *model);
  assert_non_null (model);
  size_t n = 0;
  unsigned seed = 20261205;
  struct st_jit_map *m;
  assert_int_equal (st_jit_map_new (getpid (), NULL, NULL, NULL, &m), 0);
  uint64_t off;
  (void) st_jit_map_lookup (m, 1, &off);   /* the first load: an empty file */
  for (int b = 0; b < BATCHES; b++)
    {
      f = fopen (path, "a");
      assert_non_null (f);
      for (int i = 0; i < PER_BATCH; i++, n++)
        {
          /* Starts on a 16-byte grid of a small span: many taken again. */
          model[n].start = 0x100000 + 16 * ((uint64_t) rand_r (&seed) % (SPAN / 16));
          model[n].end = model[n].start + 1 + (uint64_t) rand_r (&seed) % 0x300;
          snprintf (model[n].name, sizeof model[n].name, "f_%zu", n);
          fprintf (f, "%" PRIx64 " %" PRIx64 " %s\n", model[n].start,
                   model[n].end - model[n].start, model[n].name);
        }
      assert_int_equal (fclose (f), 0);
      wait_past_grown_check ();
      /* An address no function holds: the miss reads the batch.  */
      assert_null (st_jit_map_lookup (m, 0x10, &off));
      for (int q = 0; q < QUERIES; q++)
        {
          uint64_t addr = 0x100000 - 0x400 + (uint64_t) rand_r (&seed) % (SPAN + 0x800);
          const char *want = model_lookup (model, n, addr);
          const char *got = st_jit_map_lookup (m, addr, &off);
          if (want == NULL)
            assert_null (got);
          else
            assert_string_equal (got, want);
        }
    }
  /* Each address once.  */
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++)
    {
      bool later = false;
      for (size_t j = i + 1; j < n && !later; j++)
        later = model[j].start == model[i].start;
      distinct += !later;
    }
  assert_int_equal (st_jit_map_size (m), distinct);
  st_jit_map_free (m);
  free (model);
  assert_int_equal (unlink (path), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_parse_gives_moves),
    cmocka_unit_test (test_map_names_moved_code),
    cmocka_unit_test (test_budget_bounds_each_user),
    cmocka_unit_test (test_map_reads_within_budget),
    cmocka_unit_test (test_budget_reservations_share),
    cmocka_unit_test (test_budget_moves_held_bytes),
    cmocka_unit_test (test_map_reads_the_first_dumps_only),
    cmocka_unit_test (test_map_moves_to_the_new_user),
    cmocka_unit_test (test_map_merges_appended_names),
    cmocka_unit_test (test_map_leaves_a_big_record_for_later),
    cmocka_unit_test (test_unfinished_line_is_no_refusal),
    cmocka_unit_test (test_map_reads_growth_between_loads),
    cmocka_unit_test (test_map_lets_go_of_a_file_it_may_not_read),
    cmocka_unit_test (test_map_reads_a_growing_jitdump_between_loads),
    cmocka_unit_test (test_map_reads_a_replaced_file_it_gave_up),
    cmocka_unit_test (test_budget_bounds_kept_files),
    cmocka_unit_test (test_map_loads_agree_with_one_sorted_list),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
