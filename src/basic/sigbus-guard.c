/* The SIGBUS guard of mapped files: every file libelf maps.
 *
 * A mapped file that shrinks under us, or whose page cannot be read (an
 * I/O error on a disk, a FUSE server under an overlay), makes the next
 * touch of that page a SIGBUS, whose default action ends the process with
 * nothing said.  libelf maps every ELF file it reads (ELF_C_READ_MMAP), a
 * container's or another user's too, who could cut one short under root's
 * profiler.  So, as systemd guards its journal files: the handler maps an
 * anonymous page of zeros over the faulting page and returns, the faulting
 * read carries on with zeros (libelf and libdw take them as they take any
 * malformed file), and the page is counted: the run says so at its end.
 * Only a missing page (BUS_ADRERR) is papered over; any other SIGBUS goes
 * to the handler that was there before ours (the default: the process
 * ends, as without this guard).  The page is writable: basic/elf-begin.c
 * maps the files of others private and writable, as libdwfl relocates an
 * ET_REL file's sections in place.  (The recording itself is read, never
 * mapped: see core/input/input.c.)  */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "basic/sigbus-guard.h"

static struct sigaction previous;
static uintptr_t page_size;   /* set before the handler is installed */
static _Atomic uint64_t zero_pages;

static void
on_sigbus (int sig, siginfo_t *info, void *context)
{
  /* BUS_ADRERR is a mapping's missing page, never a fault of our code
     (that is SIGSEGV, or BUS_ADRALN).  */
  if (info->si_code == BUS_ADRERR)
    {
      uintptr_t at = (uintptr_t) info->si_addr;
      void *p = (void *) (at & ~(page_size - 1));
      if (mmap (p, page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
          == p)
        {
          atomic_fetch_add (&zero_pages, 1);
          return;
        }
    }
  /* Not ours: the handler before ours takes it, or the default action
     when the fault comes again.  */
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != NULL)
    {
      previous.sa_sigaction (sig, info, context);
      return;
    }
  sigaction (SIGBUS, &previous, NULL);
}

int
st_sigbus_guard (void)
{
  /* Installed again unless it is still ours: whoever set another since (a
     test framework) is the one to call when not ours.  */
  struct sigaction now;
  if (sigaction (SIGBUS, NULL, &now) != 0)
    return -errno;
  if (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_sigbus)
    {
      page_size = (uintptr_t) sysconf (_SC_PAGESIZE);
      struct sigaction sa;
      memset (&sa, 0, sizeof sa);
      sa.sa_sigaction = on_sigbus;
      sa.sa_flags = SA_SIGINFO;
      sigemptyset (&sa.sa_mask);
      if (sigaction (SIGBUS, &sa, &previous) != 0)
        return -errno;
    }
  return 0;
}

uint64_t
st_sigbus_zero_pages (void)
{
  return atomic_load (&zero_pages);
}
