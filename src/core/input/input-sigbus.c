/* The SIGBUS guard of mapped files: the input, and every file libelf maps.
 *
 * A mapped file that shrinks under us, or whose page cannot be read (an
 * I/O error on a disk, a FUSE server under an overlay), makes the next
 * touch of that page a SIGBUS, whose default action ends the process with
 * nothing said.  input.c maps only files that no other user can change,
 * but an I/O error needs no such user, and libelf maps every ELF file it
 * reads, a container's or another user's too.  So, as systemd guards its
 * journal files: the handler maps an anonymous page of zeros over the
 * faulting page and returns, and the faulting read carries on with zeros.
 * In a watched input the fault is noted for it, and the input then
 * reports the file unreadable (st_sigbus_caught) instead of trusting what
 * follows; anywhere else it is counted (st_sigbus_elsewhere), and the run
 * says so at its end.  Only a missing page (BUS_ADRERR) is papered over;
 * any other SIGBUS goes to the handler that was there before ours (the
 * default: the process ends, as without this guard).  The page is
 * read-only: we map no file for writing.
 *
 * The slots are written only by the thread that maps or unmaps, read in
 * the handler by any thread: atomics, no locks (a handler may not take
 * one).  */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/input/input-sigbus.h"

#define SLOTS 4

struct slot {
  _Atomic uintptr_t start;    /* 0: free */
  _Atomic size_t len;
  atomic_bool caught;
};

static struct slot slots[SLOTS];
static struct sigaction previous;
static uintptr_t page_size;   /* set before the handler is installed */
static _Atomic uint64_t elsewhere;

static void
on_sigbus (int sig, siginfo_t *info, void *context)
{
  uintptr_t at = (uintptr_t) info->si_addr;
  struct slot *in = NULL;
  for (size_t i = 0; i < SLOTS && in == NULL; i++)
    {
      uintptr_t start = atomic_load (&slots[i].start);
      if (start != 0 && at >= start && at - start < atomic_load (&slots[i].len))
        in = &slots[i];
    }
  /* In a watched input, or a page missing from some other file we map
     (libelf's): zeros, and the read is made again.  libelf and libdw take
     them as they take any malformed file.  BUS_ADRERR is a mapping's
     missing page, never a fault of our code (that is SIGSEGV, or
     BUS_ADRALN).  */
  if (in != NULL || info->si_code == BUS_ADRERR)
    {
      void *p = (void *) (at & ~(page_size - 1));
      if (mmap (p, page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p)
        {
          if (in != NULL)
            atomic_store (&in->caught, true);
          else
            atomic_fetch_add (&elsewhere, 1);
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
st_sigbus_elsewhere (void)
{
  return atomic_load (&elsewhere);
}

int
st_sigbus_watch (void *addr, size_t len)
{
  int r = st_sigbus_guard ();
  if (r < 0)
    return r;
  for (size_t i = 0; i < SLOTS; i++)
    if (atomic_load (&slots[i].start) == 0)
      {
        atomic_store (&slots[i].caught, false);
        atomic_store (&slots[i].len, len);
        atomic_store (&slots[i].start, (uintptr_t) addr);
        return 0;
      }
  return -ENOSPC;
}

static struct slot *
slot_of (void *addr)
{
  for (size_t i = 0; i < SLOTS; i++)
    if (atomic_load (&slots[i].start) == (uintptr_t) addr)
      return &slots[i];
  return NULL;
}

void
st_sigbus_unwatch (void *addr)
{
  struct slot *s = slot_of (addr);
  if (s != NULL)
    atomic_store (&s->start, 0);
}

bool
st_sigbus_caught (void *addr)
{
  struct slot *s = slot_of (addr);
  return s != NULL && atomic_load (&s->caught);
}
