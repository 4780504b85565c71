#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Capabilities.  */

static bool
permitted (cap_t caps, cap_value_t cap)
{
  cap_flag_value_t v = CAP_CLEAR;
  return cap_get_flag (caps, cap, CAP_PERMITTED, &v) == 0 && v == CAP_SET;
}

static size_t
role_caps (enum st_sandbox_role role, cap_value_t *out)
{
  size_t n = 0;
  if (role == ST_SANDBOX_MAIN)
    {
      out[n++] = CAP_SYS_PTRACE;
      out[n++] = CAP_DAC_READ_SEARCH;
      /* Before Linux 5.9, map_files took CAP_SYS_ADMIN itself.  */
      out[n++] = cap_max_bits () > CAP_CHECKPOINT_RESTORE ? CAP_CHECKPOINT_RESTORE : CAP_SYS_ADMIN;
    }
  else
    {
      out[n++] = CAP_SYS_ADMIN;
      out[n++] = CAP_SYS_CHROOT;
      out[n++] = CAP_DAC_READ_SEARCH;
    }
  return n;
}

static int
drop_capabilities (enum st_sandbox_role role)
{
  cap_value_t want[4], keep[4];
  size_t n_want = role_caps (role, want), n_keep = 0;
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
          if (!kept && cap_drop_bound (c) != 0 && errno != EINVAL)
            r = -errno;
        }
    }
  cap_free (have);
  if (r < 0)
    return r;

  /* drop_root_uid: uid 0 owns files that need no capability to write.  */
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
  if (r == 0 && cap_reset_ambient () != 0 && errno != EINVAL)
    r = -errno;
  return r;
}

/* seccomp.  */

#define ALLOW(ctx, name, ...) \
  seccomp_rule_add (ctx, SCMP_ACT_ALLOW, SCMP_SYS (name), __VA_ARGS__)

static int
allow_common (scmp_filter_ctx ctx)
{
  static const int plain[] = {
    /* memory (mmap and mprotect below, never executable) */
    SCMP_SYS (brk), SCMP_SYS (munmap), SCMP_SYS (mremap), SCMP_SYS (madvise),
    /* descriptors and messages */
    SCMP_SYS (close), SCMP_SYS (read), SCMP_SYS (pread64), SCMP_SYS (fstat),
    SCMP_SYS (newfstatat), SCMP_SYS (statx), SCMP_SYS (fcntl), SCMP_SYS (openat2),
    SCMP_SYS (recvmsg), SCMP_SYS (sendmsg),
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
  /* Nothing executable is ever mapped: no code can be brought in.  */
  r |= ALLOW (ctx, mmap, 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  r |= ALLOW (ctx, mprotect, 1, SCMP_A2 (SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
  /* Messages to stderr only.  */
  r |= ALLOW (ctx, write, 1, SCMP_A0 (SCMP_CMP_EQ, STDERR_FILENO));
  /* Files open read-only, and nothing is created.  */
  r |= ALLOW (ctx, openat, 1,
              SCMP_A2 (SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND
                       | OPEN_TMPFILE_BIT, O_RDONLY));
  r |= ALLOW (ctx, ioctl, 1, SCMP_A1 (SCMP_CMP_EQ, NS_GET_NSTYPE));
  return r < 0 ? -EINVAL : 0;
}

static int
allow_main (scmp_filter_ctx ctx)
{
  int r = 0;
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
allow_broker (scmp_filter_ctx ctx)
{
  int r = 0;
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
  r |= ALLOW (ctx, unshare, 1, SCMP_A0 (SCMP_CMP_EQ, CLONE_FS));
  r |= ALLOW (ctx, setns, 1, SCMP_A1 (SCMP_CMP_EQ, CLONE_NEWNS));
  r |= ALLOW (ctx, setns, 1, SCMP_A1 (SCMP_CMP_EQ, CLONE_NEWUSER));
  return r < 0 ? -EINVAL : 0;
}

static int
install_seccomp (enum st_sandbox_role role)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    return -ENOMEM;
  int r = allow_common (ctx);
  if (r == 0)
    r = role == ST_SANDBOX_MAIN ? allow_main (ctx) : allow_broker (ctx);
  if (r == 0)
    r = seccomp_load (ctx);
  seccomp_release (ctx);
  return r;
}

int
st_sandbox_enter (enum st_sandbox_role role)
{
  int r = drop_capabilities (role);
  if (r < 0)
    return r;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  return install_seccomp (role);
}

#ifdef ST_NSH_TEST_HOOKS
#include <sys/mount.h>
#include <sys/ptrace.h>

int
st_sandbox_try_forbidden (const char *name)
{
  if (strcmp (name, "execve") == 0)
    {
      char *const argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "exit 0", NULL };
      execve ("/bin/sh", argv, argv + 3);
    }
  else if (strcmp (name, "ptrace") == 0)
    ptrace (PTRACE_ATTACH, getppid (), NULL, NULL);
  else if (strcmp (name, "socket") == 0)
    socket (AF_INET, SOCK_STREAM, 0);
  else if (strcmp (name, "mount") == 0)
    mount ("none", "/tmp", "tmpfs", 0, NULL);
  else if (strcmp (name, "setns") == 0)
    setns (0, CLONE_NEWNS);
  else if (strcmp (name, "kill") == 0)
    kill (getppid (), SIGTERM);
  else if (strcmp (name, "write-stdout") == 0)
    (void) !write (STDOUT_FILENO, "x", 1);
  else if (strcmp (name, "open-write") == 0)
    open ("/tmp/eu-stacktrace-ns-helper-must-not-exist", O_WRONLY | O_CREAT, 0600);
  else if (strcmp (name, "mmap-exec") == 0)
    mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  else
    return -EINVAL;
  return 0;
}
#endif
