/* The owner of a file rewriting it while the profiler reads it: a child
 * that writes one value and another at the same place, in turn, as fast
 * as it can.  The unit tests of what is checked before libelf reads a file
 * again (test-elf-begin, test-debug-file) race it.  Header only: static
 * functions for the test programs that include it.  */
#pragma once

#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Starts the child: BENIGN, then BOMB (LEN bytes each) at AT of FD, again
   and again.  It ends with the test however that ends (PR_SET_PDEATHSIG);
   -1 when fork failed.  */
static pid_t
rewriter_start (int fd, off_t at, const void *benign, const void *bomb, size_t len)
{
  pid_t kid = fork ();
  if (kid == 0)
    {
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) != 0)
        _exit (1);
      for (;;)
        if (pwrite (fd, benign, len, at) != (ssize_t) len
            || pwrite (fd, bomb, len, at) != (ssize_t) len || getppid () == 1)
          _exit (1);
    }
  return kid;
}

/* Ends the child, before any assertion can end the test.  */
static void
rewriter_stop (pid_t kid)
{
  kill (kid, SIGKILL);
  waitpid (kid, NULL, 0);
}
