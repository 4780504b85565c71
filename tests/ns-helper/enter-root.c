/* enter-root ROOT PROGRAM [ARG...]: makes ROOT, a mount point in this
 * process's own mount namespace, its root, as container runtimes do
 * (pivot_root, then the old root detached), and runs PROGRAM there.
 * tests/ns-helper/ns-run.sh uses it inside `unshare -m' (or -U -m -r).  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: %s ROOT PROGRAM [ARG...]\n", argv[0]);
      return 2;
    }
  if (chdir (argv[1]) != 0 || (mkdir (".old-root", 0700) != 0 && errno != EEXIST)
      || syscall (SYS_pivot_root, ".", ".old-root") != 0 || chdir ("/") != 0
      || umount2 ("/.old-root", MNT_DETACH) != 0 || rmdir ("/.old-root") != 0)
    {
      fprintf (stderr, "enter-root %s: %s\n", argv[1], strerror (errno));
      return 1;
    }
  execv (argv[2], argv + 2);
  fprintf (stderr, "enter-root: %s: %s\n", argv[2], strerror (errno));
  return 127;
}
