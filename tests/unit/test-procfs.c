/* src/basic/procfs: the one reader of /proc/PID, checked against what the
 * kernel says of this very process through other calls (getppid, the
 * address of a function of ours, prctl's name).  */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/hashmap.h"
#include "basic/procfs.h"

/* A comm may hold spaces and parentheses: fields count from the last ')'.  */
static void
test_stat_text_with_a_hostile_comm (void **state)
{
  struct st_proc_stat st;
  static const char text[] =
    "4242 (a) b (c) d) S 77 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 "
    "1000 100 18446744073709551615\n";
  assert_int_equal (st_proc_parse_stat (text, &st), 0);
  assert_int_equal (st.ppid, 77);
  assert_int_equal (st.start_time, 123456);
  assert_int_equal (st_proc_parse_stat ("4242 (cut", &st), -EINVAL);
  assert_int_equal (st_proc_parse_stat ("4242 (a) S 1 2 3", &st), -EINVAL);
}

static void
test_stat_of_this_process (void **state)
{
  struct st_proc_stat st;
  assert_int_equal (st_proc_stat (getpid (), &st), 0);
  assert_int_equal (st.ppid, getppid ());
  assert_true (st.start_time > 0);
  uint64_t ticks;
  assert_true (st_proc_start_time (getpid (), &ticks));
  assert_int_equal (ticks, st.start_time);
}

struct find_code {
  uintptr_t addr;
  int maps, found;
};

static int
visit_map (const struct st_proc_map *m, void *arg)
{
  struct find_code *f = arg;
  f->maps++;
  if (m->start <= f->addr && f->addr < m->end)
    {
      /* Our own code: executable, and named by the file we run from.  */
      assert_int_equal (m->perms[2], 'x');
      assert_true (m->name[0] == '/');
      assert_non_null (strstr (m->name, "test-procfs"));
      f->found++;
    }
  return 0;
}

static int
stop_at_second (const struct st_proc_map *m, void *arg)
{
  return ++*(int *) arg == 2 ? 7 : 0;
}

static void
test_maps_name_our_own_code (void **state)
{
  struct find_code f = { (uintptr_t) &test_maps_name_our_own_code, 0, 0 };
  assert_int_equal (st_proc_maps_foreach (getpid (), visit_map, &f), 0);
  assert_true (f.maps > 3);
  assert_int_equal (f.found, 1);
  /* A visitor's non-zero return ends the walk and is returned.  */
  int n = 0;
  assert_int_equal (st_proc_maps_foreach (getpid (), stop_at_second, &n), 7);
  assert_int_equal (n, 2);
}

static int
keep_code_map (const struct st_proc_map *m, void *arg)
{
  struct st_proc_map *code = arg;
  uintptr_t addr = (uintptr_t) &keep_code_map;
  if (m->start <= addr && addr < m->end)
    {
      *code = *m;
      code->name = NULL;   /* valid during the call only */
      return 1;
    }
  return 0;
}

/* Whether the process that has a pid is the one whose mapping a record
   named (find-debuginfo.c, against a pid reused): the same start, end,
   offset, and device and inode when the record had them.  */
static void
test_maps_file_at_tells_a_mapping (void **state)
{
  struct st_proc_map code;
  assert_int_equal (st_proc_maps_foreach (getpid (), keep_code_map, &code), 1);
  pid_t me = getpid ();
  assert_int_equal (st_proc_maps_file_at (me, code.start, code.end, code.pgoff, true, code.maj,
                                          code.min, code.inode), 1);
  /* A build-id record has no device and inode: the range and offset.  */
  assert_int_equal (st_proc_maps_file_at (me, code.start, code.end, code.pgoff, false, 0, 0, 0), 1);
  /* Another file at the same place, another range, another offset.  */
  assert_int_equal (st_proc_maps_file_at (me, code.start, code.end, code.pgoff, true, code.maj,
                                          code.min, code.inode + 1), 0);
  assert_int_equal (st_proc_maps_file_at (me, code.start, code.end + 4096, code.pgoff, false, 0,
                                          0, 0), 0);
  assert_int_equal (st_proc_maps_file_at (me, code.start, code.end, code.pgoff + 4096, false, 0,
                                          0, 0), 0);
  /* Nothing mapped there; no such process.  */
  assert_int_equal (st_proc_maps_file_at (me, 4096, 8192, 0, false, 0, 0, 0), 0);
  assert_int_equal (st_proc_maps_file_at (1 << 23, code.start, code.end, code.pgoff, false, 0, 0,
                                          0), -ENOENT);
}

static void
test_cmdline_and_comm (void **state)
{
  char buf[4096];
  int n = st_proc_cmdline (getpid (), buf, sizeof buf);
  assert_true (n > 0);
  assert_non_null (strstr (buf, "test-procfs"));
  assert_int_equal ((size_t) n, strlen (buf) + 1);   /* the last NUL counts */
  /* Cut to fit, NUL-terminated.  */
  assert_int_equal (st_proc_cmdline (getpid (), buf, 4), 3);
  assert_int_equal (strlen (buf), 3);
  assert_int_equal (prctl (PR_SET_NAME, "pf (x) y", 0, 0, 0), 0);
  assert_int_equal (st_proc_comm (getpid (), getpid (), buf, sizeof buf), 8);
  assert_string_equal (buf, "pf (x) y");
}

static void
test_read_file_bounds_and_errors (void **state)
{
  char *text = NULL;
  int n = st_proc_read_file (getpid (), "stat", 4096, &text);
  assert_true (n > 0);
  assert_int_equal ((size_t) n, strlen (text));
  free (text);
  text = NULL;
  assert_int_equal (st_proc_read_file (getpid (), "maps", 16, &text), -EFBIG);
  assert_null (text);
  /* No such process: pid_max is at most 2^22.  */
  assert_int_equal (st_proc_read_file (1 << 23, "stat", 4096, &text), -ENOENT);
  struct st_proc_stat st;
  assert_int_equal (st_proc_stat (1 << 23, &st), -ENOENT);
  assert_true (st_proc_maps_foreach (1 << 23, stop_at_second, &n) == -ENOENT);
}

/* The stack-buffer reader: the whole text when it fits with its NUL, a
   file that fills the buffer exactly included; -EFBIG one byte past.
   The stat compared twice is a stopped child's: a running process's stat
   changes between two reads (its times, field 39's last CPU: CI saw
   "17 0" become "17 1").  */
static void
test_read_into_bounds (void **state)
{
  pid_t stopped = fork ();
  assert_true (stopped >= 0);
  if (stopped == 0)
    {
      /* Not left stopped behind a failed assertion.  */
      prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      raise (SIGSTOP);
      _exit (0);
    }
  int status;
  assert_int_equal (waitpid (stopped, &status, WUNTRACED), stopped);
  assert_true (WIFSTOPPED (status));
  char *text = NULL;
  int whole = st_proc_read_file (stopped, "stat", 4096, &text);
  assert_true (whole > 8);
  char buf[4096];
  assert_int_equal (st_proc_read_into (stopped, "stat", buf, sizeof buf), whole);
  assert_string_equal (buf, text);
  kill (stopped, SIGKILL);
  assert_int_equal (waitpid (stopped, &status, 0), stopped);
  /* cmdline does not change: its length is known before.  */
  char cmd[4096];
  int c = st_proc_read_into (getpid (), "cmdline", cmd, sizeof cmd);
  assert_true (c > 1);
  char *fit = malloc ((size_t) c + 1);
  assert_non_null (fit);
  assert_int_equal (st_proc_read_into (getpid (), "cmdline", fit, (size_t) c + 1), c);
  assert_memory_equal (fit, cmd, (size_t) c);
  assert_int_equal (st_proc_read_into (getpid (), "cmdline", fit, (size_t) c), -EFBIG);
  assert_memory_equal (fit, cmd, (size_t) c - 1);
  assert_int_equal (fit[c - 1], '\0');
  assert_int_equal (st_proc_read_into (getpid (), "cmdline", fit, 1), -EFBIG);
  assert_int_equal (fit[0], '\0');
  assert_int_equal (st_proc_read_into (1 << 23, "cgroup", buf, sizeof buf), -ENOENT);
  free (fit);
  free (text);
}

/* The one interning function: the same pointer for the same bytes.  */
static void
test_interning (void **state)
{
  struct st_hashmap *strings = st_hashmap_new (free);
  assert_non_null (strings);
  char a[] = "libc.so.6", b[] = "libc.so.6";
  const char *x = st_hashmap_intern (strings, a);
  assert_non_null (x);
  assert_ptr_not_equal (x, a);
  assert_ptr_equal (st_hashmap_intern (strings, b), x);
  assert_string_equal (x, "libc.so.6");
  assert_null (st_hashmap_intern (strings, NULL));
  assert_int_equal (st_hashmap_size (strings), 1);
  st_hashmap_free (strings);
}

static void
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
}

/* A process that runs as a subordinate uid in a user namespace root made,
   and then makes a namespace of its own in it (owned by that uid), is
   charged to root, who owns the outer one: subordinate uids and nested
   namespaces are no way out of a user's budgets.  */
static void
test_charged_uid_walks_up_user_namespaces (void **state)
{
  (void) state;
  if (geteuid () != 0)
    fail_msg ("run as root: the test maps uid 100000 into a user namespace");
  int go[2], ready[2];
  assert_int_equal (pipe2 (go, O_CLOEXEC), 0);
  assert_int_equal (pipe2 (ready, O_CLOEXEC), 0);
  pid_t child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    {
      char c;
      close (go[1]);
      close (ready[0]);
      if (unshare (CLONE_NEWUSER) != 0 || read (go[0], &c, 1) != 1)
        _exit (1);
      /* Now uid 100000 on the host, root in here: a namespace of its own. */
      if (setresgid (0, 0, 0) != 0 || setresuid (0, 0, 0) != 0 || unshare (CLONE_NEWUSER) != 0
          || write (ready[1], "r", 1) != 1)
        _exit (2);
      read (go[0], &c, 1);   /* until the parent closes it */
      _exit (0);
    }
  close (ready[1]);
  /* The child's namespace exists once its unshare has run; retry the
     maps until then (no sleep: the write fails with EPERM before).  */
  char path[64];
  uid_t before = 0;
  assert_int_equal (st_proc_charged_uid (getpid (), 4242, &before), 0);
  assert_int_equal (before, 4242);   /* ours: its own uid */
  for (;;)
    {
      char ns[64], self[64];
      snprintf (path, sizeof path, "/proc/%d/ns/user", (int) child);
      ssize_t a = readlink (path, ns, sizeof ns - 1);
      ssize_t b = readlink ("/proc/self/ns/user", self, sizeof self - 1);
      assert_true (a > 0 && b > 0);
      if (a != b || memcmp (ns, self, (size_t) a) != 0)
        break;
      sched_yield ();
    }
  snprintf (path, sizeof path, "/proc/%d/setgroups", (int) child);
  write_file (path, "deny");
  snprintf (path, sizeof path, "/proc/%d/gid_map", (int) child);
  write_file (path, "0 100000 1\n");
  snprintf (path, sizeof path, "/proc/%d/uid_map", (int) child);
  write_file (path, "0 100000 1\n");
  assert_int_equal (write (go[1], "g", 1), 1);
  char c;
  assert_int_equal (read (ready[0], &c, 1), 1);
  uid_t owners[2], charged = 4242;
  assert_int_equal (st_proc_owners (child, owners), 0);
  assert_int_equal (owners[0], 100000);
  assert_int_equal (owners[1], 100000);   /* the inner namespace's owner */
  assert_int_equal (st_proc_charged_uid (child, owners[0], &charged), 0);
  assert_int_equal (charged, 0);
  close (go[1]);
  int status;
  assert_int_equal (waitpid (child, &status, 0), child);
  assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  close (go[0]);
  close (ready[0]);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_stat_text_with_a_hostile_comm),
    cmocka_unit_test (test_stat_of_this_process),
    cmocka_unit_test (test_maps_name_our_own_code),
    cmocka_unit_test (test_maps_file_at_tells_a_mapping),
    cmocka_unit_test (test_cmdline_and_comm),
    cmocka_unit_test (test_read_file_bounds_and_errors),
    cmocka_unit_test (test_read_into_bounds),
    cmocka_unit_test (test_interning),
    cmocka_unit_test (test_charged_uid_walks_up_user_namespaces),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
