/* SIGINT and SIGTERM: see signals.h.  The handler only sets flags, writes
   one fixed message and forwards a signal: all async-signal-safe.  */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "basic/signals.h"

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t force_flag;
static volatile sig_atomic_t count;
static volatile sig_atomic_t last;
static volatile sig_atomic_t child;

static void
say (const char *msg)
{
  /* Nothing to do if stderr is gone: the exit status still tells.  */
  ssize_t r = write (STDERR_FILENO, msg, strlen (msg));
  (void) r;
}

static void
on_signal (int sig, siginfo_t *info, void *ucontext)
{
  int saved_errno = errno;
  (void) ucontext;
  last = sig;
  if (count < 1000)
    count++;
  stop_flag = count;
  if (count == 1)
    {
      /* A terminal's Ctrl-C (SI_KERNEL) reached the command's process
         group already: forwarding it would make two.  */
      pid_t c = child;
      if (c > 0 && info != NULL && info->si_code != SI_KERNEL)
        kill (c, sig);
    }
  else if (count == 2)
    say ("eu-stacktrace: finishing, writing what was read; a third signal stops at once\n");
  else if (count == 3)
    {
      force_flag = 1;
      say ("eu-stacktrace: stopping at once: samples not unwound yet are dropped\n");
    }
  errno = saved_errno;
}

/* SIGINT and SIGTERM as they were given to us: ignored ones (a shell's
   background job has SIGINT ignored) are given ignored to the command of
   -- CMD too, as it would have them run directly.  */
static bool int_was_ignored, term_was_ignored;

static bool
ignored_now (int sig)
{
  struct sigaction old;
  return sigaction (sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
}

int
st_signals_install (void)
{
  int_was_ignored = ignored_now (SIGINT);
  term_was_ignored = ignored_now (SIGTERM);
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  /* SA_RESTART: a signal must not fail a write to the output (stdio takes
     EINTR for an error).  Blocking reads and polls that must notice a stop
     wait in poll(2), which the kernel never restarts.  Not SA_RESETHAND:
     a second signal must not find the default action.  */
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset (&sa.sa_mask);
  sigaddset (&sa.sa_mask, SIGINT);
  sigaddset (&sa.sa_mask, SIGTERM);
  if (sigaction (SIGINT, &sa, NULL) != 0 || sigaction (SIGTERM, &sa, NULL) != 0)
    return -errno;
  if (signal (SIGPIPE, SIG_IGN) == SIG_ERR)
    return -errno;
  /* A write past RLIMIT_FSIZE fails with EFBIG instead of ending the run:
     the memfd copies of files others may write (basic/frozen-copy.h) and
     the stand-in Dwarf's sparse file are writes too, whose size a user's
     file decides, and so is the output.  */
  if (signal (SIGXFSZ, SIG_IGN) == SIG_ERR)
    return -errno;
  return 0;
}

volatile sig_atomic_t *
st_signals_stop_flag (void)
{
  return &stop_flag;
}

volatile sig_atomic_t *
st_signals_force_flag (void)
{
  return &force_flag;
}

unsigned
st_signals_count (void)
{
  return count;
}

int
st_signals_last (void)
{
  return last;
}

void
st_signals_set_child (pid_t pid)
{
  child = pid;
}

void
st_signals_block (sigset_t *old)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  pthread_sigmask (SIG_BLOCK, &set, old);
}

void
st_signals_restore (const sigset_t *old)
{
  pthread_sigmask (SIG_SETMASK, old, NULL);
}

void
st_signals_reset_for_exec (void)
{
  /* Caught signals go back to their defaults at exec by themselves; an
     ignored one stays ignored, and a program run with SIGPIPE ignored
     would not die at a closed pipe as it expects.  SIGINT and SIGTERM,
     which we catch, go back to what we were given.  */
  struct sigaction dfl;
  memset (&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction (SIGPIPE, &dfl, NULL);
  sigaction (SIGXFSZ, &dfl, NULL);
  struct sigaction ign;
  memset (&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  if (int_was_ignored)
    sigaction (SIGINT, &ign, NULL);
  if (term_was_ignored)
    sigaction (SIGTERM, &ign, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}
