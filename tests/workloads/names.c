/* What any user can make the kernel tell a profiler of the whole machine:
 * names.  tests/live/user-names.sh runs it as nobody under eu-stacktrace -a.
 *
 *   names comm N        renames its thread N times (prctl PR_SET_NAME):
 *                       a COMM record each, a name never seen before
 *   names paths N DIR   maps a file executable N times, each time under a
 *                       path never seen before, about 3.7 KB long (nested
 *                       directories under DIR, and a hard link made and
 *                       removed each time): an MMAP2 record each
 *   names jit MB SECONDS [short]
 *                       names its JIT code in /tmp/perf-PID.map, MB MiB of
 *                       names never seen before (lines of about 60 bytes,
 *                       or with "short" of 10, "ADDR 1 a"; the shortest
 *                       make the most entries), then runs for SECONDS in
 *                       anonymous executable memory (named jit_spin_loop,
 *                       the map's first line), so that every sample makes
 *                       a profiler look the map up (tests/live/jit-budget.sh)
 *   names maps N SECONDS
 *                       maps its own executable N times, a page each, two
 *                       pages apart (each a mapping of its own), then, once
 *                       sent SIGUSR1 (at most 60 s later: the profiler is
 *                       attached by then), runs for SECONDS in
 *                       spin_among_mappings (tests/live/many-mappings.sh)
 *   names elf DIR sections|phdrs SECONDS
 *                       writes DIR/crafted-PID.so, an ELF file of a few KB on
 *                       disk whose header counts 20 million sections or
 *                       program headers (sparse: the tables read as
 *                       zeros), maps it executable, then, once sent
 *                       SIGUSR1 (at most 60 s later), runs for SECONDS in
 *                       spin_among_mappings (tests/live/crafted-elf.sh)
 *
 * Prints how many it made.  */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static int
comm (unsigned long n)
{
  /* The kernel keeps 15 bytes of a name: "n" and up to 14 digits.  */
  char name[32];
  for (unsigned long i = 0; i < n; i++)
    {
      snprintf (name, sizeof name, "n%lu", i % 100000000000000ul);
      if (prctl (PR_SET_NAME, name) != 0)
        {
          perror ("prctl");
          return 1;
        }
    }
  printf ("%lu names\n", n);
  return 0;
}

static int
paths (unsigned long n, const char *top)
{
  char dir[4096];
  snprintf (dir, sizeof dir, "%s", top);
  /* 14 levels of 250 bytes: paths of about 3.7 KB, under PATH_MAX.  */
  for (int level = 0; level < 14; level++)
    {
      size_t len = strlen (dir);
      if (len + 252 >= sizeof dir - 256)
        break;
      dir[len] = '/';
      memset (dir + len + 1, 'd', 250);
      dir[len + 251] = '\0';
      if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        {
          perror ("mkdir");
          return 1;
        }
    }
  char src[4096 + 16], name[4096 + 256];
  snprintf (src, sizeof src, "%s/file", dir);
  int fd = open (src, O_RDWR | O_CREAT | O_TRUNC, 0700);
  if (fd < 0 || ftruncate (fd, 4096) != 0)
    {
      perror (src);
      return 1;
    }
  close (fd);
  void *at = NULL;
  for (unsigned long i = 0; i < n; i++)
    {
      snprintf (name, sizeof name, "%s/%0200lu", dir, i);
      if (link (src, name) != 0 || (fd = open (name, O_RDONLY)) < 0)
        {
          perror (name);
          return 1;
        }
      /* The same place each time: each mapping replaces the one before.  */
      void *p = mmap (at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);
      if (p == MAP_FAILED)
        {
          perror ("mmap (PROT_EXEC)");
          return 1;
        }
      at = p;
      close (fd);
      unlink (name);
    }
  printf ("%lu paths of %zu bytes\n", n, strlen (name));
  return 0;
}

static int
jit (unsigned long mb, unsigned seconds, bool short_lines)
{
  /* An instruction that jumps to itself.  */
#if defined(__x86_64__) || defined(__i386__)
  static const unsigned char spin[] = { 0xeb, 0xfe };
#elif defined(__aarch64__)
  static const unsigned char spin[] = { 0x00, 0x00, 0x00, 0x14 };
#else
  fprintf (stderr, "names jit: no spin loop for this architecture\n");
  return 2;
#endif
  unsigned char *code = mmap (NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED)
    {
      perror ("mmap (PROT_EXEC)");
      return 1;
    }
  memcpy (code, spin, sizeof spin);
  __builtin___clear_cache ((char *) code, (char *) code + sizeof spin);
  char path[64];
  snprintf (path, sizeof path, "/tmp/perf-%d.map", (int) getpid ());
  FILE *f = fopen (path, "w");
  if (f == NULL)
    {
      perror (path);
      return 1;
    }
  /* The loop first, then names of code that is never run, past it.  */
  fprintf (f, "%lx 1000 jit_spin_loop\n", (unsigned long) (uintptr_t) code);
  unsigned long bytes = 0, lines = 0;
  uintptr_t base = (uintptr_t) code + 16 * 4096;
  while (bytes < mb << 20)
    {
      int n = short_lines
                ? fprintf (f, "%lx 1 a\n", 0x100000ul + lines)
                : fprintf (f, "%lx 10 jit_function_%lu_with_a_name_of_some_length\n",
                           (unsigned long) (base + 16 * lines), lines);
      if (n < 0)
        break;
      bytes += (unsigned long) n;
      lines++;
    }
  if (fclose (f) != 0 || bytes < mb << 20)
    {
      perror (path);
      return 1;
    }
  printf ("%d: %lu names in %s\n", (int) getpid (), lines + 1, path);
  fflush (stdout);
  alarm (seconds);   /* its default action ends the loop */
  ((void (*) (void)) code) ();
  return 0;
}

/* Where the maps workload spends its time: a frame a profiler names.  */
static __attribute__ ((noinline)) void
spin_among_mappings (void)
{
  for (volatile unsigned long x = 0;; x++)
    ;
}

/* The test's go: SIGUSR1, blocked before the line that tells the test to
   send it is printed (block_go), then waited for at most 60 s
   (wait_for_go): by then the profiler is attached.  */
static void
block_go (void)
{
  sigset_t go;
  sigemptyset (&go);
  sigaddset (&go, SIGUSR1);
  sigprocmask (SIG_BLOCK, &go, NULL);
}

static void
wait_for_go (void)
{
  sigset_t go;
  sigemptyset (&go);
  sigaddset (&go, SIGUSR1);
  struct timespec limit = { .tv_sec = 60 };
  while (sigtimedwait (&go, NULL, &limit) < 0 && errno == EINTR)
    ;
}

static int
maps (unsigned long n, unsigned seconds)
{
  int fd = open ("/proc/self/exe", O_RDONLY);
  if (fd < 0)
    {
      perror ("/proc/self/exe");
      return 1;
    }
  /* Room for all, given back, then filled a page in two: the holes keep
     the kernel from merging neighbours into one mapping.  */
  size_t step = 2 * 4096;
  char *base = mmap (NULL, n * step, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || munmap (base, n * step) != 0)
    {
      perror ("mmap");
      return 1;
    }
  unsigned long made = 0;
  for (; made < n; made++)
    if (mmap (base + made * step, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0)
        == MAP_FAILED)
      {
        perror ("mmap (PROT_EXEC)");
        return 1;
      }
  close (fd);
  /* Mapping takes seconds on a loaded machine, and the processes finish
     apart: the run starts when the test says, so that none has ended
     before the profiler attaches to all.  */
  block_go ();
  printf ("%d: %lu mappings\n", (int) getpid (), made);
  fflush (stdout);
  wait_for_go ();
  alarm (seconds);   /* its default action ends the loop */
  spin_among_mappings ();
  return 0;
}

/* Stores V in N little-endian bytes at P.  */
static void
put_le (unsigned char *p, size_t n, uint64_t v)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char) (v >> (8 * i));
}

static int
elf (const char *dir, const char *kind, unsigned seconds)
{
  const uint64_t count = 20000000, shoff = 4096;
  bool sections = strcmp (kind, "sections") == 0;
  char path[4096];
  snprintf (path, sizeof path, "%s/crafted-%d.so", dir, (int) getpid ());
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    {
      perror (path);
      return 1;
    }
  /* ELF64, little-endian, ET_DYN for x86-64; one PT_LOAD of the first
     page, r-x; the counts past 16 bits in section 0 (sh_size for
     sections, sh_info for program headers).  */
  unsigned char h[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
  put_le (h + 16, 2, 3);              /* e_type ET_DYN */
  put_le (h + 18, 2, 62);             /* e_machine EM_X86_64 */
  put_le (h + 20, 4, 1);              /* e_version */
  put_le (h + 32, 8, 64);             /* e_phoff */
  put_le (h + 40, 8, shoff);          /* e_shoff */
  put_le (h + 52, 2, 64);             /* e_ehsize */
  put_le (h + 54, 2, 56);             /* e_phentsize */
  put_le (h + 56, 2, sections ? 1 : 0xffff);   /* e_phnum, or PN_XNUM */
  put_le (h + 58, 2, 64);             /* e_shentsize */
  put_le (h + 60, 2, sections ? 0 : 1);        /* e_shnum: 0 is extended */
  unsigned char ph[56] = { 0 };
  put_le (ph, 4, 1);                  /* PT_LOAD */
  put_le (ph + 4, 4, 5);              /* PF_R | PF_X */
  put_le (ph + 32, 8, 4096);          /* p_filesz */
  put_le (ph + 40, 8, 4096);          /* p_memsz */
  put_le (ph + 48, 8, 4096);          /* p_align */
  unsigned char sh[64] = { 0 };
  put_le (sh + 32, 8, sections ? count : 1);   /* sh_size: the section count */
  put_le (sh + 44, 4, sections ? 0 : count);   /* sh_info: the phdr count */
  uint64_t size = sections ? shoff + count * 64 : 64 + count * 56 + shoff;
  if (pwrite (fd, h, sizeof h, 0) != (ssize_t) sizeof h
      || pwrite (fd, ph, sizeof ph, 64) != (ssize_t) sizeof ph
      || pwrite (fd, sh, sizeof sh, sections ? shoff : 64 + count * 56) != (ssize_t) sizeof sh
      || ftruncate (fd, (off_t) size) != 0)
    {
      perror (path);
      return 1;
    }
  if (!sections)
    {
      /* e_shoff: section 0 after the program headers.  */
      unsigned char off[8];
      put_le (off, 8, 64 + count * 56);
      if (pwrite (fd, off, 8, 40) != 8)
        {
          perror (path);
          return 1;
        }
    }
  if (mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED)
    {
      perror ("mmap (PROT_EXEC)");
      return 1;
    }
  close (fd);
  block_go ();
  printf ("%d: %s maps %s\n", (int) getpid (), path, kind);
  fflush (stdout);
  wait_for_go ();
  alarm (seconds);
  spin_among_mappings ();
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 3 && strcmp (argv[1], "comm") == 0)
    return comm (strtoul (argv[2], NULL, 10));
  if (argc >= 4 && strcmp (argv[1], "paths") == 0)
    return paths (strtoul (argv[2], NULL, 10), argv[3]);
  if (argc >= 4 && strcmp (argv[1], "jit") == 0)
    return jit (strtoul (argv[2], NULL, 10), (unsigned) strtoul (argv[3], NULL, 10),
                argc >= 5 && strcmp (argv[4], "short") == 0);
  if (argc >= 4 && strcmp (argv[1], "maps") == 0)
    return maps (strtoul (argv[2], NULL, 10), (unsigned) strtoul (argv[3], NULL, 10));
  if (argc >= 5 && strcmp (argv[1], "elf") == 0)
    return elf (argv[2], argv[3], (unsigned) strtoul (argv[4], NULL, 10));
  fprintf (stderr,
           "usage: %s comm N | paths N DIR | jit MB SECONDS [short] | maps N SECONDS"
           " | elf DIR sections|phdrs SECONDS\n",
           argv[0]);
  return 2;
}
