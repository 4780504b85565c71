/* The cross-architecture workload (tests/arch/arch.sh): a deep -O2 call
   chain, a call through the PLT into a shared library that calls back, a
   function built without a frame pointer and a signal handler frame.  gdb
   stops it at many points; each stop becomes a perf sample.  */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*archwork_cb) (int);
int lib_outer (int n, archwork_cb cb);

volatile int sink;

__attribute__ ((noinline, noclone)) int
leaf (int n)
{
  int s = 0;
  for (int i = 0; i < (n & 3) + 2; i++)
    s += i * n;
  sink = s;
  return s;
}

/* No frame pointer whatever the rest of the file is built with.  */
__attribute__ ((noinline, noclone, optimize ("omit-frame-pointer"))) int
nofp (int n)
{
  int s = leaf (n + 2);
  sink = s;
  return s + 1;
}

__attribute__ ((noinline, noclone)) int
callback (int n)
{
  int r = nofp (n);
  return r + leaf (n);
}

__attribute__ ((noinline, noclone)) int
in_handler (int n)
{
  int r = leaf (n);
  sink = r;
  return r + 1;
}

static void
handler (int sig)
{
  sink += in_handler (sig);
}

__attribute__ ((noinline, noclone)) int
f1 (int n)
{
  int r = lib_outer (n, callback);
  sink = r;
  return r + 1;
}

__attribute__ ((noinline, noclone)) int
f2 (int n)
{
  int r = f1 (n + 1);
  sink = r;
  return r + 2;
}

__attribute__ ((noinline, noclone)) int
f3 (int n)
{
  int r = f2 (n + 1);
  sink = r;
  return r + 3;
}

__attribute__ ((noinline, noclone)) int
f4 (int n)
{
  int r = f3 (n + 1);
  sink = r;
  return r + 4;
}

/* The emulated process's maps, as qemu-user shows them to it: the test
   turns them into the recording's MMAP2 records.  */
static void
save_maps (const char *path)
{
  FILE *in = fopen ("/proc/self/maps", "r");
  FILE *out = fopen (path, "w");
  char line[1024];
  while (in != NULL && out != NULL && fgets (line, sizeof line, in) != NULL)
    fputs (line, out);
  if (in != NULL)
    fclose (in);
  if (out == NULL || fclose (out) != 0)
    exit (1);
}

int
main (void)
{
  const char *maps = getenv ("ARCHWORK_MAPS");
  if (maps != NULL)
    save_maps (maps);
  signal (SIGUSR1, handler);
  for (int i = 0; i < 24; i++)
    {
      sink += f4 (i);
      if (i % 3 == 0)
        raise (SIGUSR1);
    }
  return 0;
}
