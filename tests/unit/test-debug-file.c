/* find-debuginfo.c st_debug_file_admit: what libdwfl is served of a debug
 * file a step found.  libdwfl begins its own Elf of the descriptor, and
 * libelf reads the file again then: a file only our user may write is
 * served as it is; one another user owns, or that its group or others may
 * write, is served as a sealed copy (basic/frozen-copy.h), so that nothing
 * written to the file after the check reaches libelf; larger than the copy
 * bound, it is not served.  Run as root (the README's test command): a
 * file is given to another owner with chown.  */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "basic/elf-begin.h"
#include "basic/frozen-copy.h"
#include "basic/untrusted.h"
#include "core/resolve/find-debuginfo.h"
#include "unit/test-rewriter.h"

/* FD admitted as a debug file found on the host, a copy of it charged to
   its owner (a recording's).  */
static int
admit (int fd, const char *name)
{
  return st_debug_file_admit (fd, name, false, ST_FROZEN_OWNER_FILE);
}

/* An unlinked temporary file holding a copy of this test program (a real
   ELF file), its mode MODE.  */
static int
real_elf_file (mode_t mode)
{
  char path[] = "/tmp/test-debug-file.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  unlink (path);
  int self = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  assert_true (self >= 0);
  struct stat st;
  assert_int_equal (fstat (self, &st), 0);
  assert_true (st_copy_fd (self, fd, st.st_size));
  close (self);
  assert_int_equal (fchmod (fd, mode), 0);
  return fd;
}

/* The same, owned by OWNER.  */
static int
owned_elf_file (mode_t mode, uid_t owner)
{
  int fd = real_elf_file (mode);
  assert_int_equal (fchown (fd, owner, (gid_t) -1), 0);
  return fd;
}

static ino_t
inode (int fd)
{
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  return st.st_ino;
}

/* FD's first LEN bytes, malloc'ed.  */
static unsigned char *
head (int fd, size_t len)
{
  unsigned char *buf = malloc (len);
  assert_non_null (buf);
  assert_int_equal (pread (fd, buf, len, 0), (ssize_t) len);
  return buf;
}

static void
test_own_file_served_as_it_is (void **state)
{
  (void) state;
  int fd = real_elf_file (0644);
  ino_t ino = inode (fd);
  int served = admit (fd, "own");
  assert_true (served >= 0);
  assert_int_equal (inode (served), ino);
  close (served);
}

/* OWNER (-1: ours) and MODE make a file others may write: what is served
   is a sealed copy, equal to the file when admitted, and stays so.  */
static void
served_as_copy (uid_t owner, mode_t mode)
{
  int fd = real_elf_file (mode);
  if (owner != (uid_t) -1)
    assert_int_equal (fchown (fd, owner, (gid_t) -1), 0);
  int keep = dup (fd);
  ino_t ino = inode (fd);
  int served = admit (fd, "others'");
  assert_true (served >= 0);
  assert_int_not_equal (inode (served), ino);
  int seals = fcntl (served, F_GET_SEALS);
  assert_int_equal (seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                    F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  const size_t len = 8192;
  unsigned char *before = head (keep, len);
  unsigned char *copy = head (served, len);
  assert_memory_equal (before, copy, len);
  free (copy);
  /* The owner writes the file: the copy does not follow, and cannot be
     written.  */
  static const unsigned char junk[64] = { 0xff };
  assert_int_equal (pwrite (keep, junk, sizeof junk, 0), (ssize_t) sizeof junk);
  copy = head (served, len);
  assert_memory_equal (before, copy, len);
  assert_int_equal (pwrite (served, junk, sizeof junk, 0), -1);
  assert_int_equal (errno, EPERM);
  free (copy);
  free (before);
  assert_true (st_frozen_held () > 0);
  st_frozen_close (served);
  assert_int_equal (st_frozen_held (), 0);
  close (keep);
}

static void
test_others_file_served_as_a_copy (void **state)
{
  (void) state;
  served_as_copy ((uid_t) -1, 0664);     /* its group may write */
  served_as_copy ((uid_t) -1, 0646);     /* others may write */
  served_as_copy ((uid_t) -1, 0444 | S_IWGRP);
  served_as_copy (65534, 0644);          /* nobody's */
  served_as_copy (65534, 0400);          /* nobody's, read-only: its owner may chmod it */
}

/* Past the copy bound: not served, and said (--stats counts it).  The
   files are sparse: a real ELF file with a hole after it.  */
static void
test_too_large_to_copy_not_served (void **state)
{
  (void) state;
  int fd = real_elf_file (0666);
  assert_int_equal (ftruncate (fd, (off_t) ST_FROZEN_COPY_MAX + 1), 0);
  unsigned before = st_untrusted_refused_count ();
  assert_int_equal (admit (fd, "large"), -1);
  assert_int_equal (st_untrusted_refused_count (), before + 1);
  /* As large and ours: served as it is, nothing copied.  */
  fd = real_elf_file (0644);
  assert_int_equal (ftruncate (fd, (off_t) ST_FROZEN_COPY_MAX + 1), 0);
  int served = admit (fd, "large, ours");
  assert_true (served >= 0);
  assert_int_equal (st_frozen_held (), 0);
  st_frozen_close (served);
}

/* A copy is charged its size in pages, holes too (a read fault in a
   hole of the copy's mapping costs a page), and reads as the file did.  */
static void
test_holes_charged_and_copied (void **state)
{
  (void) state;
  int fd = real_elf_file (0666);
  const off_t data_at = 15 << 20;
  static const char tail[] = "data after the hole";
  assert_int_equal (pwrite (fd, tail, sizeof tail, data_at), (ssize_t) sizeof tail);
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  const uint64_t page = (uint64_t) getpagesize ();
  int keep = dup (fd);
  int served = st_freeze (fd, false, ST_FROZEN_OWNER_FILE, NULL);
  assert_true (served >= 0);
  assert_int_equal (st_frozen_held (), ((uint64_t) st.st_size + page - 1) / page * page);
  char got[sizeof tail];
  assert_int_equal (pread (served, got, sizeof got, data_at), (ssize_t) sizeof got);
  assert_memory_equal (got, tail, sizeof tail);
  unsigned char *a = head (keep, 8192), *b = head (served, 8192);
  assert_memory_equal (a, b, 8192);
  free (a);
  free (b);
  char zeros[64], z[64] = { 0 };
  assert_int_equal (pread (served, zeros, sizeof zeros, 10 << 20), (ssize_t) sizeof zeros);
  assert_memory_equal (zeros, z, sizeof z);
  st_frozen_close (served);
  close (keep);
  assert_int_equal (st_frozen_held (), 0);
}

/* One file, wanted twice (two threads, two processes' files): one copy,
   charged once, held until its last holder closes it.  Written since, it
   is another file: a copy of its own.  */
static void
test_one_copy_per_file (void **state)
{
  (void) state;
  int fd = real_elf_file (0666);
  int again = dup (fd), later = dup (fd);
  int a = st_freeze (fd, false, ST_FROZEN_OWNER_FILE, NULL);
  assert_true (a >= 0);
  uint64_t one = st_frozen_held ();
  int b = st_freeze (again, false, ST_FROZEN_OWNER_FILE, NULL);
  assert_true (b >= 0);
  assert_int_equal (inode (a), inode (b));
  assert_int_equal (st_frozen_held (), one);
  st_frozen_close (a);
  assert_int_equal (st_frozen_held (), one);
  unsigned char *before = head (b, 64);
  st_frozen_close (b);
  assert_int_equal (st_frozen_held (), 0);
  /* Written: its ctime changed, a new copy with what it holds now.  */
  int c = st_freeze (dup (later), false, ST_FROZEN_OWNER_FILE, NULL);
  assert_true (c >= 0);
  static const char junk[] = "rewritten";
  assert_int_equal (pwrite (later, junk, sizeof junk, 64), (ssize_t) sizeof junk);
  int d = st_freeze (later, false, ST_FROZEN_OWNER_FILE, NULL);
  assert_true (d >= 0);
  assert_int_not_equal (inode (c), inode (d));
  assert_int_equal (st_frozen_held (), 2 * one);
  char got[sizeof junk];
  assert_int_equal (pread (d, got, sizeof got, 64), (ssize_t) sizeof got);
  assert_memory_equal (got, junk, sizeof junk);
  unsigned char *first = head (c, 64);
  assert_memory_equal (first, before, 64);
  free (first);
  free (before);
  st_frozen_close (c);
  st_frozen_close (d);
  assert_int_equal (st_frozen_held (), 0);
}

static int
restore_budget (void **state)
{
  (void) state;
  st_frozen_set_budget (ST_FROZEN_COPY_BUDGET);
  return 0;
}

/* What one copy of a real_elf_file is charged.  */
static uint64_t
charge_of_one (void)
{
  int fd = real_elf_file (0600);
  struct stat st;
  assert_int_equal (fstat (fd, &st), 0);
  close (fd);
  const uint64_t page = (uint64_t) getpagesize ();
  return ((uint64_t) st.st_size + page - 1) / page * page;
}

/* All the copies held at once stay within the budget (here a small one,
   its shares each a little more than one copy): past it the next file is
   refused, said and counted, until a copy is closed; an inflated copy
   adopted is charged too.  The files are four users', one copy each.  */
static void
test_copies_within_the_budget (void **state)
{
  (void) state;
  const uint64_t each = charge_of_one ();
  st_frozen_set_budget (ST_FROZEN_COPY_SHARES * each + each / 2);
  int a = admit (owned_elf_file (0644, 1001), "first");
  int b = admit (owned_elf_file (0644, 1002), "second");
  int b3 = admit (owned_elf_file (0644, 1003), "third");
  int b4 = admit (owned_elf_file (0644, 1004), "fourth");
  assert_true (a >= 0 && b >= 0 && b3 >= 0 && b4 >= 0);
  assert_int_equal (st_frozen_held (), 4 * each);
  assert_int_equal (st_frozen_held_by (1001), each);
  unsigned before = st_untrusted_refused_count ();
  unsigned budget_refused = st_frozen_budget_refusals ();
  struct st_why why = { 0 };
  assert_int_equal (st_freeze (owned_elf_file (0644, 1005), false, ST_FROZEN_OWNER_FILE, &why),
                    -EFBIG);
  assert_non_null (strstr (why.text, "the copies held take"));
  assert_int_equal (admit (owned_elf_file (0644, 1005), "fifth"), -1);
  assert_int_equal (st_untrusted_refused_count (), before + 1);
  assert_int_equal (st_frozen_budget_refusals (), budget_refused + 2);
  /* An inflated copy (any memfd of ours) is reserved for, then adopted:
     charged what was reserved, to the owner of the copy it came from.  */
  int inflated = real_elf_file (0600);
  uint64_t owner = 0;
  assert_true (st_frozen_copy_owner (a, &owner));
  assert_int_equal (owner, 1001);
  assert_int_equal (st_frozen_reserve (each, owner), -EFBIG);
  /* Our own file needs no copy, budget or not.  */
  int own = admit (real_elf_file (0644), "own");
  assert_true (own >= 0);
  assert_false (st_frozen_is_copy (own));
  st_frozen_close (own);
  st_frozen_close (a);
  assert_int_equal (st_frozen_held_by (1001), 0);
  assert_int_equal (st_frozen_reserve (each, owner), 0);
  assert_int_equal (st_frozen_held_by (1001), each);
  assert_int_equal (st_frozen_adopt (inflated, each, owner), 0);
  assert_true (st_frozen_copy_owner (inflated, &owner));
  assert_int_equal (owner, 1001);
  assert_int_equal (st_frozen_held (), 4 * each);
  st_frozen_close (inflated);
  int c = admit (owned_elf_file (0644, 1005), "fifth again");
  assert_true (c >= 0);
  st_frozen_close (b);
  st_frozen_close (b3);
  st_frozen_close (b4);
  st_frozen_close (c);
  assert_int_equal (st_frozen_held (), 0);
  assert_int_equal (st_frozen_held_by (1001), 0);
  assert_int_equal (st_frozen_held_by (1005), 0);
}

/* One owner's copies take at most their share of the budget, whatever
   room is left: the next of their files is refused and said, and another
   user's file is still copied.  A rootless user's subordinate uids, and a
   container's block of 65,536 uids, are one owner.  */
static void
test_one_owner_takes_its_share (void **state)
{
  (void) state;
  const uint64_t each = charge_of_one ();
  st_frozen_set_budget (ST_FROZEN_COPY_SHARES * 2 * each);
  int held[4], n = 0;
  held[n++] = admit (owned_elf_file (0644, 65534), "nobody's 1");
  held[n++] = admit (owned_elf_file (0644, 65534), "nobody's 2");
  for (int i = 0; i < n; i++)
    assert_true (held[i] >= 0);
  assert_int_equal (st_frozen_held_by (65534), 2 * each);
  struct st_why why = { 0 };
  unsigned budget_refused = st_frozen_budget_refusals ();
  assert_int_equal (st_freeze (owned_elf_file (0644, 65534), false, ST_FROZEN_OWNER_FILE, &why),
                    -EFBIG);
  assert_non_null (strstr (why.text, "the copies of uid 65534's files take"));
  assert_int_equal (st_frozen_budget_refusals (), budget_refused + 1);
  /* Room for others: another user's file, and a file of a process whose
     user the caller names.  */
  held[n++] = admit (owned_elf_file (0644, 1001), "another's");
  assert_true (held[n - 1] >= 0);
  held[n++] = st_freeze (owned_elf_file (0644, 65534), true, 1002, &why);
  assert_true (held[n - 1] >= 0);
  assert_int_equal (st_frozen_held_by (1002), each);
  assert_int_equal (st_frozen_held (), 4 * each);
  for (int i = 0; i < n; i++)
    st_frozen_close (held[i]);
  assert_int_equal (st_frozen_held (), 0);

  /* A container's uids in no /etc/subuid range, aligned blocks of 65,536
     of systemd's range for them, are one owner.  (Far above where useradd
     gives ranges: the container tests add users with ranges while this
     runs.)  Below that range a uid is its own (a directory's users).  */
  int c1 = owned_elf_file (0644, 0x60000005), c2 = owned_elf_file (0644, 0x6000ffff);
  int c3 = owned_elf_file (0644, 0x60010000);
  struct stat st1, st2, st3;
  assert_int_equal (fstat (c1, &st1), 0);
  assert_int_equal (fstat (c2, &st2), 0);
  assert_int_equal (fstat (c3, &st3), 0);
  uint64_t o1 = st_frozen_owner_of_file (c1, &st1);
  assert_int_equal (o1, st_frozen_owner_of_file (c2, &st2));
  assert_int_not_equal (o1, st_frozen_owner_of_file (c3, &st3));
  assert_int_not_equal (o1, 0x60000005);
  int big = owned_elf_file (0644, 70000);
  struct stat stb;
  assert_int_equal (fstat (big, &stb), 0);
  assert_int_equal (st_frozen_owner_of_file (big, &stb), 70000);
  close (big);
  close (c1);
  close (c2);
  close (c3);
}

/* Two threads (two processes' modules at -j 2) want the same file at once:
   one copy, charged once.  Each reserving for it would charge it twice and
   refuse a file over half its owner's share ("uid 65534's files take
   209715200 of the 268435456 bytes", 20 rounds in 20).  */
struct racer {
  int fd;
  pthread_barrier_t *start;
  int served;
  char why[256];
};

static void *
race_freeze (void *arg)
{
  struct racer *r = arg;
  struct st_why why = { 0 };
  pthread_barrier_wait (r->start);
  r->served = st_freeze (r->fd, false, ST_FROZEN_OWNER_FILE, &why);
  snprintf (r->why, sizeof r->why, "%s", why.text);
  return NULL;
}

static void
test_same_file_two_threads_one_copy (void **state)
{
  (void) state;
  int fd = owned_elf_file (0644, 65534);
  const off_t size = 48 << 20;   /* some milliseconds to copy */
  assert_int_equal (ftruncate (fd, size), 0);
  const uint64_t charge = (uint64_t) size;
  st_frozen_set_budget (ST_FROZEN_COPY_SHARES * (charge + charge / 2));
  for (int round = 0; round < 10; round++)
    {
      pthread_barrier_t start;
      pthread_barrier_init (&start, NULL, 2);
      struct racer a = { .fd = dup (fd), .start = &start }, b = { .fd = dup (fd), .start = &start };
      pthread_t ta, tb;
      assert_int_equal (pthread_create (&ta, NULL, race_freeze, &a), 0);
      assert_int_equal (pthread_create (&tb, NULL, race_freeze, &b), 0);
      pthread_join (ta, NULL);
      pthread_join (tb, NULL);
      pthread_barrier_destroy (&start);
      if (a.served < 0 || b.served < 0)
        fail_msg ("round %d: refused: %s%s", round, a.why, b.why);
      assert_int_equal (inode (a.served), inode (b.served));
      assert_int_equal (st_frozen_held (), charge);
      assert_int_equal (st_frozen_held_by (65534), charge);
      st_frozen_close (a.served);
      st_frozen_close (b.served);
      assert_int_equal (st_frozen_held (), 0);
      /* A new file each round: written, its ctime moves.  */
      assert_int_equal (pwrite (fd, "x", 1, round), 1);
    }
  close (fd);
}

/* Whom a live process's copies are charged to: its user; for root's, its
   user namespace, else its mount namespace, when not ours; when it is
   gone, the owner of all processes gone.  Each child does its part, says so on a pipe and
   waits to be killed.  */
static pid_t
child_that (int what)
{
  int p[2];
  assert_int_equal (pipe (p), 0);
  pid_t kid = fork ();
  assert_true (kid >= 0);
  if (kid == 0)
    {
      close (p[0]);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      int r = what == 0 ? setresuid (1234, 1234, 1234)
              : what == 1 ? unshare (CLONE_NEWNS)
              : what == 2 ? unshare (CLONE_NEWUSER)
              /* a rootless container's: a user's own user namespace */
              : setresuid (1234, 1234, 1234) || unshare (CLONE_NEWUSER);
      if (r != 0 || write (p[1], "x", 1) != 1)
        _exit (1);
      pause ();
      _exit (0);
    }
  close (p[1]);
  char c;
  assert_int_equal (read (p[0], &c, 1), 1);
  close (p[0]);
  return kid;
}

static uint64_t
ns_inode (pid_t pid, const char *ns)
{
  char path[64];
  struct stat st;
  snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns);
  assert_int_equal (stat (path, &st), 0);
  return (uint32_t) st.st_ino;
}

static int asked;

static bool
never_the_same (pid_t pid, const void *arg)
{
  (void) pid;
  ++*(int *) arg;
  return false;
}

static void
test_owner_of_a_process (void **state)
{
  (void) state;
  int fd = owned_elf_file (0644, 4321);
  assert_int_equal (st_frozen_owner_of_process (getpid ()), 0);
  pid_t user = child_that (0), mounts = child_that (1), users = child_that (2);
  pid_t rootless = child_that (3);
  assert_int_equal (st_frozen_owner_of_process (user), 1234);
  assert_int_equal (st_frozen_owner_of_process (mounts),
                    ST_FROZEN_OWNER_MNTNS | ns_inode (mounts, "mnt"));
  assert_int_equal (st_frozen_owner_of_process (users),
                    ST_FROZEN_OWNER_USERNS | ns_inode (users, "user"));
  assert_int_equal (st_frozen_owner_of_process (rootless), 1234);
  pid_t kids[] = { user, mounts, users, rootless };
  for (size_t i = 0; i < 4; i++)
    {
      kill (kids[i], SIGKILL);
      assert_int_equal (waitpid (kids[i], NULL, 0), kids[i]);
    }
  /* Gone (its pid free now): one owner for all such, not the file's (a
     user could charge its owner with a short process).  */
  assert_int_equal (st_frozen_owner_of_process (user), ST_FROZEN_OWNER_GONE);
  /* st_freeze finds it so when a copy is made.  */
  int served = st_freeze (dup (fd), false, ST_FROZEN_OWNER_PID | (uint32_t) getpid (), NULL);
  uint64_t owner = 99;
  assert_true (st_frozen_copy_owner (served, &owner));
  assert_int_equal (owner, 0);
  st_frozen_close (served);
  /* The caller says the process that has the pid now is not the one whose
     module wants the copy (its pid reused): a gone process's, counted by
     the file's owner; asked only then, and only for a pid owner.  */
  st_frozen_set_same_process (never_the_same, &asked);
  served = st_freeze (owned_elf_file (0644, 4321), false,
                      ST_FROZEN_OWNER_PID | (uint32_t) getpid (), NULL);
  assert_true (st_frozen_copy_owner (served, &owner));
  assert_int_equal (owner, ST_FROZEN_OWNER_GONE | 4321);
  assert_int_equal (asked, 1);
  int own = st_freeze (real_elf_file (0600), false, ST_FROZEN_OWNER_PID | (uint32_t) getpid (),
                       NULL);
  assert_int_equal (asked, 1);   /* no copy: not asked */
  st_frozen_set_same_process (NULL, NULL);
  st_frozen_close (own);
  st_frozen_close (served);
  close (fd);
}

/* A file from another mount namespace is copied whoever owns it.  */
/* Processes gone before their copies were made count by their file's
   owner, apart from that owner's running processes: one owner's gone
   processes take at most half a share, and all gone processes together
   one share, as they did when they were one owner.  So one user's short
   processes leave room for another's.  Before, all gone processes were one
   owner, and nobody's short processes with large debug files kept every
   other user's short processes' files out.  */
static void
test_gone_processes_count_by_file_owner (void **state)
{
  (void) state;
  const uint64_t each = charge_of_one ();
  /* A share of two copies: one owner's gone processes may have one.  */
  st_frozen_set_budget (ST_FROZEN_COPY_SHARES * 2 * each);
  pid_t gone = fork ();
  assert_true (gone >= 0);
  if (gone == 0)
    _exit (0);
  assert_int_equal (waitpid (gone, NULL, 0), gone);
  const uint64_t by_gone = ST_FROZEN_OWNER_PID | (uint32_t) gone;
  const uint64_t nobody_gone = ST_FROZEN_OWNER_GONE | 65534;
  int held[4], n = 0;
  held[n++] = st_freeze (owned_elf_file (0644, 65534), false, by_gone, NULL);
  assert_true (held[0] >= 0);
  uint64_t owner = 0;
  assert_true (st_frozen_copy_owner (held[0], &owner));
  assert_int_equal (owner, nobody_gone);
  assert_int_equal (st_frozen_held_by (nobody_gone), each);
  struct st_why why = { 0 };
  assert_int_equal (st_freeze (owned_elf_file (0644, 65534), false, by_gone, &why), -EFBIG);
  assert_non_null (strstr (why.text, "the copies of uid 65534's files, of processes gone before "
                                     "they were read take"));
  /* Another user's short process still has room ...  */
  held[n++] = st_freeze (owned_elf_file (0644, 1001), false, by_gone, NULL);
  assert_true (held[n - 1] >= 0);
  assert_true (st_frozen_copy_owner (held[n - 1], &owner));
  assert_int_equal (owner, ST_FROZEN_OWNER_GONE | 1001);
  /* ... until the gone processes' copies take a share together.  */
  memset (&why, 0, sizeof why);
  assert_int_equal (st_freeze (owned_elf_file (0644, 1002), false, by_gone, &why), -EFBIG);
  assert_non_null (strstr (why.text, "the copies of the files of processes gone before they were "
                                     "read take"));
  /* A caller that found the process gone (another has its pid now) says
     so; the file's owner is added.  */
  st_frozen_close (held[--n]);
  held[n++] = st_freeze (owned_elf_file (0644, 1001), false, ST_FROZEN_OWNER_GONE, NULL);
  assert_true (held[n - 1] >= 0);
  assert_true (st_frozen_copy_owner (held[n - 1], &owner));
  assert_int_equal (owner, ST_FROZEN_OWNER_GONE | 1001);
  /* Nobody's running processes have their own share.  */
  held[n++] = st_freeze (owned_elf_file (0644, 65534), false, 65534, NULL);
  assert_true (held[n - 1] >= 0);
  assert_int_equal (st_frozen_held (), 3 * each);
  for (int i = 0; i < n; i++)
    st_frozen_close (held[i]);
  assert_int_equal (st_frozen_held (), 0);
  assert_int_equal (st_frozen_held_by (nobody_gone), 0);
}

static void
test_namespace_files_always_copied (void **state)
{
  (void) state;
  int own = real_elf_file (0644);
  ino_t ino = inode (own);
  int always = st_debug_file_admit (own, "always", true, ST_FROZEN_OWNER_FILE);
  assert_true (always >= 0);
  assert_int_not_equal (inode (always), ino);
  assert_true (st_frozen_is_copy (always));
  st_frozen_close (always);
  assert_int_equal (st_frozen_held (), 0);
}

/* A nosuid mount (what udisks mounts for a user, over an image the user
   may write) makes even our own file one others may write.  In a mount
   namespace of a child's own.  */
static void
test_nosuid_mount_is_others (void **state)
{
  (void) state;
  char dir[] = "/tmp/test-debug-file-mnt.XXXXXX";
  assert_non_null (mkdtemp (dir));
  pid_t kid = fork ();
  assert_true (kid >= 0);
  if (kid == 0)
    {
      int bad = 0;
      if (unshare (CLONE_NEWNS) != 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        _exit (20);
      for (int nosuid = 0; nosuid <= 1; nosuid++)
        {
          if (mount ("tmpfs", dir, "tmpfs", nosuid ? MS_NOSUID : 0, "size=1m") != 0)
            _exit (21);
          char path[sizeof dir + 8];
          snprintf (path, sizeof path, "%s/f", dir);
          int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
          struct stat st;
          if (fd < 0 || fchmod (fd, 0644) != 0 || fstat (fd, &st) != 0)
            _exit (22);
          if (st_others_may_write (fd, &st) != (nosuid == 1))
            bad |= 1 << nosuid;
          /* Whoever made the file system chose its owners: all its files
             are one owner's, for the copies' budget.  */
          if ((st_frozen_owner_of_file (fd, &st) == ST_FROZEN_OWNER_MOUNTS) != (nosuid == 1))
            bad |= 4 << nosuid;
          close (fd);
          umount (dir);
        }
      _exit (bad);
    }
  int status;
  assert_int_equal (waitpid (kid, &status, 0), kid);
  rmdir (dir);
  assert_true (WIFEXITED (status));
  /* 1: our file on a plain mount was taken for others'; 2: on nosuid, for
     ours only; 4 and 8: the same of its owner; 20-22: the mount could not
     be made.  */
  assert_int_equal (WEXITSTATUS (status), 0);
}

/* Not a regular file (a pipe a step could never open, but an fd says
   nothing of where it came from): not served.  */
static void
test_not_a_regular_file_not_served (void **state)
{
  (void) state;
  int p[2];
  assert_int_equal (pipe (p), 0);
  assert_int_equal (admit (p[0], "pipe"), -1);
  close (p[1]);
}

/* The file's owner (here its group and others may write it) rewrites
   e_shnum while the profiler admits the file and libdwfl begins its Elf
   of what is served (elf_begin on the fd, as libdwfl's open_elf does): 1
   (section 0 alone), or 0, the count then being section 0's sh_size,
   5,000, past ST_ELF_MAX_SECTIONS.  However the writes fall, libelf never
   counts more than the check passed: a copy made before a rewrite is
   checked and served as it is, one made after is refused.  Served as it
   was (the file itself), libelf met the rewrite: "begin 184: the check
   passed, libelf counts 5000 sections".  */
static void
test_rewrite_after_the_check_never_reaches_libelf (void **state)
{
  (void) state;
  const uint64_t shoff = 4096, bomb = 5000;
  char path[] = "/tmp/test-debug-file.XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  unlink (path);
  Elf64_Ehdr eh = { 0 };
  memcpy (eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_DYN;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_ehsize = sizeof eh;
  eh.e_shoff = shoff;
  eh.e_shentsize = sizeof (Elf64_Shdr);
  eh.e_shnum = 1;
  assert_int_equal (pwrite (fd, &eh, sizeof eh, 0), (ssize_t) sizeof eh);
  Elf64_Shdr s0 = { .sh_size = bomb };
  assert_int_equal (pwrite (fd, &s0, sizeof s0, shoff), (ssize_t) sizeof s0);
  assert_int_equal (ftruncate (fd, (off_t) (shoff + (bomb + 1) * sizeof (Elf64_Shdr))), 0);
  assert_int_equal (fchmod (fd, 0666), 0);

  elf_version (EV_CURRENT);
  const off_t at = offsetof (Elf64_Ehdr, e_shnum);
  const unsigned char one[2] = { 1, 0 }, zero[2] = { 0, 0 };
  pid_t kid = rewriter_start (fd, at, one, zero, 2);
  assert_true (kid >= 0);
  unsigned served = 0, refused = 0, i;
  size_t shnum = 0;
  bool begun = true;
  for (i = 0; i < 100000 && (served < 100 || refused < 100); i++)
    {
      int fd_served = admit (dup (fd), "racing");
      if (fd_served < 0)
        {
          refused++;
          continue;
        }
      Elf *elf = elf_begin (fd_served, ELF_C_READ_MMAP_PRIVATE, NULL);
      begun = elf != NULL && elf_getshdrnum (elf, &shnum) == 0;
      elf_end (elf);
      st_frozen_close (fd_served);
      if (!begun || shnum > ST_ELF_MAX_SECTIONS)
        break;
      served++;
    }
  rewriter_stop (kid);
  close (fd);
  assert_true (begun);
  if (shnum > ST_ELF_MAX_SECTIONS)
    fail_msg ("begin %u: the check passed, libelf counts %zu sections", i, shnum);
  /* Both sides of the writes were met: the race ran.  */
  assert_true (served >= 100);
  assert_true (refused >= 100);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_own_file_served_as_it_is),
    cmocka_unit_test (test_others_file_served_as_a_copy),
    cmocka_unit_test (test_too_large_to_copy_not_served),
    cmocka_unit_test (test_holes_charged_and_copied),
    cmocka_unit_test (test_one_copy_per_file),
    cmocka_unit_test_teardown (test_copies_within_the_budget, restore_budget),
    cmocka_unit_test_teardown (test_one_owner_takes_its_share, restore_budget),
    cmocka_unit_test_teardown (test_same_file_two_threads_one_copy, restore_budget),
    cmocka_unit_test (test_owner_of_a_process),
    cmocka_unit_test_teardown (test_gone_processes_count_by_file_owner, restore_budget),
    cmocka_unit_test (test_namespace_files_always_copied),
    cmocka_unit_test (test_nosuid_mount_is_others),
    cmocka_unit_test (test_not_a_regular_file_not_served),
    cmocka_unit_test (test_rewrite_after_the_check_never_reaches_libelf),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
