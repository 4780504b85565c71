#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "ns-helper/landlock.h"
#include "ns-helper/sandbox.h"

/* nobody and nogroup, as on Debian and Fedora; not looked up, so that no
   NSS module runs in the helper.  */
#define NOBODY_UID 65534
#define NOBODY_GID 65534

/* The kernel's O_TMPFILE bit without O_DIRECTORY, which a read-only
   directory open has.  */
#define OPEN_TMPFILE_BIT 020000000

static int
set_limit (int resource, rlim_t value)
{
  struct rlimit rl = { value, value };
  return setrlimit (resource, &rl) == 0 ? 0 : -errno;
}

int
st_sandbox_limits (void)
{
  int r;
  if ((r = set_limit (RLIMIT_CORE, 0)) < 0)
    return r;
  /* Not dumpable: no core, and no ptrace by processes of the same uid.  */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return -errno;
  /* Pins hold four descriptors each (pin.h); a reply needs a few more.  */
  if ((r = set_limit (RLIMIT_NOFILE, 1024)) < 0)
    return r;
  if ((r = set_limit (RLIMIT_AS, 256ul << 20)) < 0)
    return r;
  if ((r = set_limit (RLIMIT_MEMLOCK, 0)) < 0)
    return r;
  return 0;
}

/* The helper works in bursts of microseconds while the unwinder waits for
   it, often on CPUs that the profiled programs keep busy.  A short slice
   asks the scheduler (EEVDF, Linux 6.12) to run it soon after it wakes
   rather than after a full slice of each busy task: the round trip then
   stays in microseconds under load, not milliseconds.  A hint only: an
   older kernel ignores or refuses it.  A forked child does not keep
   it: each process asks as it starts.  */
void
st_sandbox_short_slices (void)
{
  /* The kernel's struct sched_attr (linux/sched/types.h, which <sched.h>
     does not get along with), its first version.  */
  struct {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
  } attr = {
    .size = sizeof attr,
    .sched_policy = SCHED_OTHER,
    .sched_runtime = 100 * 1000,   /* ns: the shortest slice the kernel takes */
  };
  (void) syscall (SYS_sched_setattr, 0, &attr, 0);
}

/* Capabilities.  */

static bool
permitted (cap_t caps, cap_value_t cap)
{
  cap_flag_value_t v = CAP_CLEAR;
  return cap_get_flag (caps, cap, CAP_PERMITTED, &v) == 0 && v == CAP_SET;
}

static size_t
role_caps (enum st_sandbox_role role, const struct st_sandbox_client *client, cap_value_t *out)
{
  size_t n = 0;
  switch (role)
    {
    case ST_SANDBOX_PARSER:
      break;
    case ST_SANDBOX_OPENER:
      out[n++] = CAP_SYS_PTRACE;
      out[n++] = CAP_DAC_READ_SEARCH;
      /* Before Linux 5.9, map_files took CAP_SYS_ADMIN itself.  */
      out[n++] = cap_max_bits () > CAP_CHECKPOINT_RESTORE ? CAP_CHECKPOINT_RESTORE : CAP_SYS_ADMIN;
      break;
    case ST_SANDBOX_RESOLVER:
      if (client == NULL)
        out[n++] = CAP_DAC_READ_SEARCH;
      break;
    case ST_SANDBOX_BROKER:
      out[n++] = CAP_SYS_ADMIN;
      out[n++] = CAP_SYS_CHROOT;
      if (client == NULL)
        out[n++] = CAP_DAC_READ_SEARCH;
      else
        {
          /* Each worker becomes the client (st_sandbox_become_client).  */
          out[n++] = CAP_SETUID;
          out[n++] = CAP_SETGID;
        }
      break;
    }
  return n;
}

/* What st_sandbox_prune_bounding_set dropped from the bounding set before
   the others were forked: a bit a capability, not dropped again by each
   (a prctl each, at start-up).  */
static uint64_t bound_dropped;

int
st_sandbox_prune_bounding_set (const struct st_sandbox_client *client)
{
  cap_value_t keep[4 * 8 + 1];
  size_t n = 0;
  static const enum st_sandbox_role roles[] = {
    ST_SANDBOX_PARSER, ST_SANDBOX_OPENER, ST_SANDBOX_RESOLVER, ST_SANDBOX_BROKER,
  };
  for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
    n += role_caps (roles[i], client, keep + n);
  keep[n++] = CAP_SETPCAP;   /* each drops the rest of its own */
  cap_t have = cap_get_proc ();
  if (have == NULL)
    return -errno;
  cap_flag_value_t eff = CAP_CLEAR;
  bool can = cap_get_flag (have, CAP_SETPCAP, CAP_EFFECTIVE, &eff) == 0 && eff == CAP_SET;
  cap_free (have);
  if (!can)
    return 0;   /* a user's helper: each process drops what it can */
  for (cap_value_t c = 0; c < (cap_value_t) cap_max_bits () && c < 64; c++)
    {
      bool kept = false;
      for (size_t i = 0; i < n; i++)
        kept |= keep[i] == c;
      if (kept)
        continue;
      if (cap_drop_bound (c) != 0)
        {
          if (errno != EINVAL)
            return -errno;
          continue;
        }
      bound_dropped |= (uint64_t) 1 << c;
    }
  return 0;
}

static int
drop_capabilities (enum st_sandbox_role role, const struct st_sandbox_client *client)
{
  cap_value_t want[8], keep[8];
  size_t n_want = role_caps (role, client, want), n_keep = 0;
  cap_t have = cap_get_proc ();
  if (have == NULL)
    return -errno;
  for (size_t i = 0; i < n_want; i++)
    if (permitted (have, want[i]))
      keep[n_keep++] = want[i];
  bool can_setpcap = permitted (have, CAP_SETPCAP);
  bool can_setid = permitted (have, CAP_SETUID) && permitted (have, CAP_SETGID);
  int r = 0;

  /* drop_bounding_set: no exec could ever regain what goes here.  */
  if (can_setpcap)
    {
      cap_value_t setpcap = CAP_SETPCAP;
      if (cap_set_flag (have, CAP_EFFECTIVE, 1, &setpcap, CAP_SET) != 0
          || cap_set_proc (have) != 0)
        r = -errno;
      for (cap_value_t c = 0; r == 0 && c < (cap_value_t) cap_max_bits (); c++)
        {
          bool kept = false;
          for (size_t i = 0; i < n_keep; i++)
            kept |= keep[i] == c;
          bool gone = c < 64 && (bound_dropped & ((uint64_t) 1 << c)) != 0;
          if (!kept && !gone && cap_drop_bound (c) != 0 && errno != EINVAL)
            r = -errno;
        }
    }
  cap_free (have);
  if (r < 0)
    return r;

  /* drop_root_uid: uid 0 owns files that need no capability to write.
     The resolver of a client that is not root becomes the client, and
     keeps nothing.  */
  if (can_setid && role == ST_SANDBOX_RESOLVER && client != NULL)
    return st_sandbox_become_client (client);
  if (can_setid && (getuid () == 0 || geteuid () == 0))
    {
      if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setgroups (0, NULL) != 0
          || setresgid (NOBODY_GID, NOBODY_GID, NOBODY_GID) != 0
          || setresuid (NOBODY_UID, NOBODY_UID, NOBODY_UID) != 0
          || prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0)
        return -errno;
    }

  /* drop_all_other_caps: the role's, permitted and effective; nothing
     inheritable or ambient.  */
  cap_t caps = cap_init ();
  if (caps == NULL)
    return -errno;
  if ((n_keep > 0
       && (cap_set_flag (caps, CAP_PERMITTED, (int) n_keep, keep, CAP_SET) != 0
           || cap_set_flag (caps, CAP_EFFECTIVE, (int) n_keep, keep, CAP_SET) != 0))
      || cap_set_proc (caps) != 0)
    r = -errno;
  cap_free (caps);
  /* One prctl: libcap's cap_reset_ambient asks for each capability first
     (PR_CAP_AMBIENT_IS_SET, 41 system calls a process at start-up).
     EINVAL: a kernel without ambient capabilities (before 4.3).  */
  if (r == 0 && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0
      && errno != EINVAL)
    r = -errno;
  return r;
}

int
st_sandbox_become_client (const struct st_sandbox_client *client)
{
  if (setgroups (client->n_groups, client->groups) != 0
      || setresgid (client->gid, client->gid, client->gid) != 0
      || setresuid (client->uid, client->uid, client->uid) != 0)
    return -errno;
  /* From nobody, the kernel kept the capabilities: drop them all.  */
  cap_t none = cap_init ();
  if (none == NULL)
    return -errno;
  int r = cap_set_proc (none) == 0 ? 0 : -errno;
  cap_free (none);
  /* Changing credentials cleared the parent-death signal; the client's
     uid must not make the process dumpable (ptrace-able by the client).  */
  if (r == 0 && (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) != 0
                 || prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0))
    r = -errno;
  return r;
}

/* seccomp.  */

#define ALLOW(ctx, name, ...) \
  seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (name), __VA_ARGS__)

/* NO_READ_FD >= 0: read and recvmsg on any descriptor but that one.  */
static int
allow_common (scmp_filter_ctx ctx, int no_read_fd)
{
  static const int plain[] = {
    /* memory (mmap and mprotect below, never executable) */
    SCMP_SYS (brk), SCMP_SYS (munmap), SCMP_SYS (mremap), SCMP_SYS (madvise),
    /* descriptors and messages */
    SCMP_SYS (close), SCMP_SYS (pread64), SCMP_SYS (fstat),
    SCMP_SYS (newfstatat), SCMP_SYS (statx), SCMP_SYS (sendmsg),
    /* the rest of a C program's life */
    SCMP_SYS (exit), SCMP_SYS (exit_group), SCMP_SYS (rt_sigreturn),
    SCMP_SYS (rt_sigprocmask), SCMP_SYS (restart_syscall), SCMP_SYS (futex),
    SCMP_SYS (getpid), SCMP_SYS (gettid), SCMP_SYS (getppid), SCMP_SYS (getuid),
    SCMP_SYS (geteuid), SCMP_SYS (getgid), SCMP_SYS (getegid), SCMP_SYS (clock_gettime),
    SCMP_SYS (gettimeofday), SCMP_SYS (getrandom),
  };
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (seccomp_rule_add (ctx, SCMP_ACT_ALLOW, plain[i], 0) < 0)
      return -EINVAL;
  int r = 0;
  if (no_read_fd < 0)
    {
      r |= ALLOW (ctx, read, 0);
      r |= ALLOW (ctx, recvmsg, 0);
      r |= ALLOW (ctx, fcntl, 0);
    }
  else
    {
      /* The kernel takes the fd as a 32-bit int and seccomp sees all 64
         bits of the argument: "A0 != 3" would let 0x100000003 through.
         Nor may fcntl (F_DUPFD) give the client's socket another number
         to read it by.  So these three are allowed for every A0 whose 64
         bits are a 32-bit number other than 3: {0, 1}, {2}, then
         [2^k, 2^(k+1)) for k = 2..31, each one masked comparison.  */
      _Static_assert (ST_SANDBOX_OPENER_CLIENT_FD == 3, "the ranges below leave out 3");
      static const int calls[] = { SCMP_SYS (read), SCMP_SYS (recvmsg), SCMP_SYS (fcntl) };
      for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        {
          r |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, calls[i], 1,
                                 SCMP_A0 (SCMP_CMP_MASKED_EQ, ~(scmp_datum_t) 1, 0));
          r |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, calls[i], 1, SCMP_A0 (SCMP_CMP_EQ, 2));
          for (int k = 2; k < 32; k++)
            r |= seccomp_rule_add (ctx, SCMP_ACT_ALLOW, calls[i], 1,
                                   SCMP_A0 (SCMP_CMP_MASKED_EQ, ~(((scmp_datum_t) 1 << k) - 1),
                                            (scmp_datum_t) 1 << k));
        }
      /* How much of its replies the client has not read (opener.c).  */
      r |= ALLOW (ctx, ioctl, 2, SCMP_A0 (SCMP_CMP_EQ, (scmp_datum_t) no_read_fd),
                  SCMP_A1 (SCMP_CMP_EQ, SIOCOUTQ));
    }
  /* Nothing executable is ever mapped: no code can be brought in.  */
  r |= ALLOW (ctx, mmap, 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  r |= ALLOW (ctx, mprotect, 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  /* Messages to stderr only.  */
  r |= ALLOW (ctx, write, 1, SCMP_A0 (SCMP_CMP_EQ, STDERR_FILENO));
  r |= ALLOW (ctx, ioctl, 1, SCMP_A1 (SCMP_CMP_EQ, NS_GET_NSTYPE));
  return r < 0 ? -EINVAL : 0;
}

/* Files open read-only, and nothing is created: for every process but the
   parser, which opens nothing.  */
static int
allow_open_read_only (scmp_filter_ctx ctx)
{
  return ALLOW (ctx, openat, 1,
                SCMP_A2 (SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND
                         | OPEN_TMPFILE_BIT, O_RDONLY)) < 0 ? -EINVAL : 0;
}

static int
allow_parser (scmp_filter_ctx ctx)
{
  int r = 0;
  /* Whether the client hung up (st_nsh_peer_closed).  */
  r |= ALLOW (ctx, poll, 0);
  r |= ALLOW (ctx, ppoll, 0);
  return r < 0 ? -EINVAL : 0;
}

static int
allow_resolver (scmp_filter_ctx ctx)
{
  /* openat2's flags are out of a filter's reach (they are in memory):
     Landlock is what keeps this process from writing.  */
  int r = ALLOW (ctx, openat2, 0);
  if (r == 0)
    r = allow_open_read_only (ctx);
  return r < 0 ? -EINVAL : 0;
}

static int
allow_opener (scmp_filter_ctx ctx)
{
  int r = allow_open_read_only (ctx);
  /* To see how a broker or the parser ended.  */
  r |= ALLOW (ctx, wait4, 0);
  r |= ALLOW (ctx, getdents64, 0);
  r |= ALLOW (ctx, pidfd_open, 0);
  r |= ALLOW (ctx, poll, 0);
  r |= ALLOW (ctx, ppoll, 0);
  r |= ALLOW (ctx, lseek, 0);
  r |= ALLOW (ctx, ioctl, 1, SCMP_A1 (SCMP_CMP_EQ, NS_GET_USERNS));
  r |= ALLOW (ctx, ioctl, 1, SCMP_A1 (SCMP_CMP_EQ, NS_GET_PARENT));
  r |= ALLOW (ctx, ioctl, 1, SCMP_A1 (SCMP_CMP_EQ, NS_GET_OWNER_UID));
  return r < 0 ? -EINVAL : 0;
}

static int
allow_broker (scmp_filter_ctx ctx, const struct st_sandbox_client *client)
{
  int r = allow_resolver (ctx);
  /* A worker per job: fork, but into no new namespace.  */
  r |= ALLOW (ctx, clone, 1,
              SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS
                       | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
                       | CLONE_THREAD, 0));
  /* clone3's flags are out of a filter's reach: make libc use clone.  */
  r |= seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0);
  r |= ALLOW (ctx, set_robust_list, 0);
  r |= ALLOW (ctx, wait4, 0);
  r |= ALLOW (ctx, socketpair, 1, SCMP_A0 (SCMP_CMP_EQ, AF_UNIX));
  r |= ALLOW (ctx, prctl, 1, SCMP_A0 (SCMP_CMP_EQ, PR_SET_PDEATHSIG));
  r |= ALLOW (ctx, prctl, 1, SCMP_A0 (SCMP_CMP_EQ, PR_SET_DUMPABLE));
  r |= ALLOW (ctx, unshare, 1, SCMP_A0 (SCMP_CMP_EQ, CLONE_FS));
  /* A pooled worker waits for its next job, its process's exit, or the
     end of its idle time (pool.h).  */
  r |= ALLOW (ctx, poll, 0);
  r |= ALLOW (ctx, ppoll, 0);
  /* A worker's job timer (broker.h): a signal to itself only.  */
  r |= ALLOW (ctx, setitimer, 1, SCMP_A0 (SCMP_CMP_EQ, ITIMER_REAL));
  /* The opener's receive timeout on a pooled worker's socket (broker.c,
     spawn_pooled): that one option, nothing else of any socket's.  */
  r |= ALLOW (ctx, setsockopt, 2, SCMP_A1 (SCMP_CMP_EQ, SOL_SOCKET),
              SCMP_A2 (SCMP_CMP_EQ, SO_RCVTIMEO));
  if (client != NULL)
    {
      /* A worker becomes the client, and no one else.  */
      r |= ALLOW (ctx, setgroups, 0);
      r |= ALLOW (ctx, setresgid, 3, SCMP_A0 (SCMP_CMP_EQ, client->gid),
                  SCMP_A1 (SCMP_CMP_EQ, client->gid), SCMP_A2 (SCMP_CMP_EQ, client->gid));
      r |= ALLOW (ctx, setresuid, 3, SCMP_A0 (SCMP_CMP_EQ, client->uid),
                  SCMP_A1 (SCMP_CMP_EQ, client->uid), SCMP_A2 (SCMP_CMP_EQ, client->uid));
      r |= ALLOW (ctx, capget, 0);
      r |= ALLOW (ctx, capset, 0);
    }
  r |= ALLOW (ctx, setns, 1, SCMP_A1 (SCMP_CMP_EQ, CLONE_NEWNS));
  r |= ALLOW (ctx, setns, 1, SCMP_A1 (SCMP_CMP_EQ, CLONE_NEWUSER));
  return r < 0 ? -EINVAL : 0;
}

static int
install_seccomp (enum st_sandbox_role role, const struct st_sandbox_client *client)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    return -ENOMEM;
  int r = allow_common (ctx, role == ST_SANDBOX_OPENER ? ST_SANDBOX_OPENER_CLIENT_FD : -1);
  if (r == 0)
    switch (role)
      {
      case ST_SANDBOX_PARSER:
        r = allow_parser (ctx);
        break;
      case ST_SANDBOX_OPENER:
        r = allow_opener (ctx);
        break;
      case ST_SANDBOX_RESOLVER:
        r = allow_resolver (ctx);
        break;
      case ST_SANDBOX_BROKER:
        r = allow_broker (ctx, client);
        break;
      }
  if (r == 0)
    r = seccomp_load (ctx);
  seccomp_release (ctx);
  return r;
}

int
st_sandbox_enter (enum st_sandbox_role role, const struct st_sandbox_client *client)
{
  bool was_root = geteuid () == 0;
  int r = drop_capabilities (role, client);
  if (r < 0)
    return r;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  if (role != ST_SANDBOX_OPENER)
    {
      r = st_landlock_forbid_writes ();
      /* Without Landlock, nothing but the user's own rights keeps a user's
         helper from writing; a privileged helper does not start.  */
      if (r == -EOPNOTSUPP && !was_root)
        r = 0;
      if (r < 0)
        return r;
    }
  return install_seccomp (role, client);
}

#ifdef ST_NSH_TEST_HOOKS
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/ptrace.h>

int
st_sandbox_try_forbidden (const char *name)
{
  static const char marker[] = "/tmp/eu-stacktrace-ns-helper-must-not-exist";
  long r;
  errno = 0;
  if (strcmp (name, "execve") == 0)
    {
      char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "exit 0", NULL };
      r = execve ("/bin/sh", argv, argv + 3);
    }
  else if (strcmp (name, "ptrace") == 0)
    r = ptrace (PTRACE_ATTACH, getppid (), NULL, NULL);
  else if (strcmp (name, "socket") == 0)
    r = socket (AF_INET, SOCK_STREAM, 0);
  else if (strcmp (name, "mount") == 0)
    r = mount ("none", "/tmp", "tmpfs", 0, NULL);
  else if (strcmp (name, "setns") == 0)
    r = setns (0, CLONE_NEWNS);
  else if (strcmp (name, "kill") == 0)
    r = kill (getppid (), SIGTERM);
  else if (strcmp (name, "read-client") == 0)
    {
      /* The opener's copy of the client's socket (sandbox.h).  */
      char c;
      r = read (ST_SANDBOX_OPENER_CLIENT_FD, &c, 1);
    }
  else if (strcmp (name, "read-client-dup") == 0)
    {
      /* The client's socket under another number.  */
      int d = fcntl (ST_SANDBOX_OPENER_CLIENT_FD, F_DUPFD_CLOEXEC, 10);
      char c;
      r = d < 0 ? -1 : (int) recv (d, &c, 1, MSG_DONTWAIT);
    }
  else if (strcmp (name, "read-client-hi") == 0)
    {
      /* Descriptor 3 with bits above the 32 the kernel uses.  */
      char c;
      r = (int) syscall (SYS_read, 0x100000000L | ST_SANDBOX_OPENER_CLIENT_FD, &c, 1L);
    }
  else if (strcmp (name, "write-stdout") == 0)
    r = write (STDOUT_FILENO, "x", 1);
  else if (strcmp (name, "open-write") == 0)
    r = open (marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  else if (strcmp (name, "openat2-write") == 0)
    {
      struct open_how how = { .flags = O_WRONLY | O_CREAT | O_CLOEXEC, .mode = 0600 };
      r = syscall (SYS_openat2, AT_FDCWD, marker, &how, sizeof how);
    }
  else if (strcmp (name, "mmap-exec") == 0)
    r = mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        == MAP_FAILED ? -1 : 0;
  else
    return -1;
  return r < 0 ? errno : 0;
}
#endif
