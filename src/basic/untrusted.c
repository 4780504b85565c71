#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/fd-limit.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/untrusted.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

/* File systems whose "regular files" are not data: reading them can block
   (/proc/kmsg), act (sysfs, debugfs, tracefs), or wait on another user's
   process (FUSE: a server that never answers holds the reader).  */
static const unsigned long pseudo_fs[] = {
  PROC_SUPER_MAGIC, SYSFS_MAGIC, DEVPTS_SUPER_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC,
  SECURITYFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC,
  BPF_FS_MAGIC, PSTOREFS_MAGIC, EFIVARFS_MAGIC, BINFMTFS_MAGIC, NSFS_MAGIC, PIPEFS_MAGIC,
  SOCKFS_MAGIC, ANON_INODE_FS_MAGIC, FUSE_SUPER_MAGIC, 0x65735543 /* fusectl */,
  0x62656570 /* configfs */, RDTGROUP_SUPER_MAGIC, BINDERFS_SUPER_MAGIC,
};

int
st_untrusted_check_fd (int fd, struct stat *st)
{
  struct stat buf;
  if (st == NULL)
    st = &buf;
  if (fstat (fd, st) != 0)
    return -errno;
  if (!S_ISREG (st->st_mode))
    return -ST_UNTRUSTED_ENOTREG;
  struct statfs fs;
  if (fstatfs (fd, &fs) != 0)
    return -errno;
  for (size_t i = 0; i < sizeof pseudo_fs / sizeof pseudo_fs[0]; i++)
    if ((unsigned long) fs.f_type == pseudo_fs[i])
      return -ST_UNTRUSTED_EPSEUDO;
  return 0;
}

const char *
st_untrusted_strerror (int err)
{
  switch (-err)
    {
    case ST_UNTRUSTED_ENOTREG:
      return "not a regular file (a FIFO, socket, device, directory or symlink)";
    case ST_UNTRUSTED_EPSEUDO:
      return "on a pseudo file system (proc, sys, devpts, FUSE...), not data";
    case EFBIG:
      return "larger than the limit";
    default:
      return strerror (-err);
    }
}

/* A name for the record: the directory's path (DIR_NAME, else what the
   kernel says DIR_FD is), then PATH.  */
static void
record_name (int dir_fd, const char *dir_name, const char *path, char *out, size_t size)
{
  if (dir_name != NULL)
    {
      snprintf (out, size, "%s/%s", dir_name, path);
      return;
    }
  if (dir_fd == AT_FDCWD || path[0] == '/')
    {
      snprintf (out, size, "%s", path);
      return;
    }
  char self[64], dir[2048];
  snprintf (self, sizeof self, "/proc/self/fd/%d", dir_fd);
  ssize_t n = readlink (self, dir, sizeof dir - 1);
  if (n < 0)
    n = 0;
  dir[n] = '\0';
  snprintf (out, size, "%s%s%s", n > 0 ? dir : "?", n == 1 && dir[0] == '/' ? "" : "/", path);
}

/* st_reopen_untrusted of PATH_FD, which is PATH in DIR_FD (named DIR_NAME
   when not NULL): a refusal is recorded under that name, made only then
   (it may cost a readlink).  */
static int
reopen_checked (int path_fd, int dir_fd, const char *dir_name, const char *path, unsigned flags,
                struct stat *st)
{
  struct stat buf;
  if (st == NULL)
    st = &buf;
  int r = st_untrusted_check_fd (path_fd, st);
  if (r < 0)
    {
      if (!(flags & ST_UNTRUSTED_QUIET) && (r == -ST_UNTRUSTED_ENOTREG || r == -ST_UNTRUSTED_EPSEUDO))
        {
          char name[4096];
          record_name (dir_fd, dir_name, path, name, sizeof name);
          st_untrusted_refuse (name, NULL, st_untrusted_strerror (r));
        }
      return r;
    }
  /* /proc/self/fd/N of an O_PATH fd reopens the inode it holds, not
     whatever the path names by now: what was checked is what is opened.  */
  char self[64];
  snprintf (self, sizeof self, "/proc/self/fd/%d", path_fd);
  int fd = open (self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return -st_fd_limit_check (errno, path);
  struct stat again;
  if (fstat (fd, &again) != 0 || again.st_ino != st->st_ino || again.st_dev != st->st_dev)
    {
      close (fd);
      return -ESTALE;
    }
  return fd;
}

int
st_reopen_untrusted (int path_fd, const char *name, unsigned flags, struct stat *st)
{
  return reopen_checked (path_fd, AT_FDCWD, NULL, name, flags, st);
}

int
st_open_untrusted (int dir_fd, const char *path, unsigned flags, struct stat *st)
{
  return st_open_untrusted_in (dir_fd, NULL, path, flags, st);
}

/* The O_PATH lookup that every open here starts with: opens nothing.  */
static int
lookup (int dir_fd, const char *path, unsigned flags)
{
  int pfd;
  if (flags & (ST_UNTRUSTED_IN_ROOT | ST_UNTRUSTED_BENEATH))
    {
      struct open_how how = { .flags = O_PATH | O_CLOEXEC };
      how.resolve = RESOLVE_NO_MAGICLINKS
                    | ((flags & ST_UNTRUSTED_IN_ROOT) ? RESOLVE_IN_ROOT
                                                      : RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
      if (flags & ST_UNTRUSTED_NOFOLLOW)
        how.flags |= O_NOFOLLOW;
      pfd = (int) syscall (SYS_openat2, dir_fd, path, &how, sizeof how);
    }
  else
    pfd = openat (dir_fd, path, O_PATH | O_CLOEXEC | ((flags & ST_UNTRUSTED_NOFOLLOW) ? O_NOFOLLOW : 0));
  return pfd < 0 ? -st_fd_limit_check (errno, path) : pfd;
}

bool
st_untrusted_may_exist (int dir_fd, const char *path, unsigned flags)
{
  int pfd = lookup (dir_fd, path, flags);
  if (pfd >= 0)
    close (pfd);
  return pfd != -ENOENT;
}

int
st_open_untrusted_in (int dir_fd, const char *dir_name, const char *path, unsigned flags,
                      struct stat *st)
{
  int pfd = lookup (dir_fd, path, flags);
  if (pfd < 0)
    return pfd;
  int r = reopen_checked (pfd, dir_fd, dir_name, path, flags, st);
  close (pfd);
  return r;
}

int
st_read_untrusted (int fd, size_t max, char **out, size_t *len)
{
  *out = NULL;
  struct stat st = { .st_size = 0 };
  if (fstat (fd, &st) == 0 && (uint64_t) st.st_size > max)
    return -EFBIG;
  /* The size is a hint only (the file may grow): read at most MAX + 1.  */
  size_t cap = st.st_size > 0 ? (size_t) st.st_size + 1 : 4096, n = 0;
  if (cap > max + 1)
    cap = max + 1;
  char *buf = malloc (cap + 1);
  if (buf == NULL)
    return -ENOMEM;
  for (;;)
    {
      if (n == cap)
        {
          if (cap > max)
            {
              free (buf);
              return -EFBIG;
            }
          size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
          char *b = realloc (buf, ncap + 1);
          if (b == NULL)
            {
              free (buf);
              return -ENOMEM;
            }
          buf = b;
          cap = ncap;
        }
      ssize_t r = read (fd, buf + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno == EAGAIN ? EWOULDBLOCK : errno;
          free (buf);
          return -e;
        }
      if (r == 0)
        break;
      n += (size_t) r;
    }
  if (n > max)
    {
      free (buf);
      return -EFBIG;
    }
  buf[n] = '\0';
  *out = buf;
  if (len != NULL)
    *len = n;
  return 0;
}

/* The run's ledger.  */
#define MAX_LISTED 32

static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  struct st_hashmap *said;        /* file -> (nothing): refusals said once */
  unsigned refused;
  char *listed[MAX_LISTED];
  struct st_hashmap *budget;      /* uid -> uint64_t bytes taken */
  struct st_hashmap *paid;        /* file versions charged to a budget */
  uint64_t storage_ns, storage_files, storage_bytes;
} ledger;

void
st_untrusted_refuse (const char *file, const char *who, const char *why)
{
  pthread_mutex_lock (&ledger_lock);
  if (ledger.said == NULL)
    ledger.said = st_hashmap_new (free);
  bool known = ledger.said != NULL && st_hashmap_get (ledger.said, file, strlen (file)) != NULL;
  if (!known)
    {
      if (ledger.said != NULL)
        {
          char *mark = strdup ("");
          if (mark != NULL && st_hashmap_put (ledger.said, file, strlen (file), mark) < 0)
            free (mark);
        }
      if (ledger.refused < MAX_LISTED
          && asprintf (&ledger.listed[ledger.refused], "%s%s%s%s: %s", file, who ? " (" : "",
                       who ? who : "", who ? ")" : "", why) < 0)
        ledger.listed[ledger.refused] = NULL;
      ledger.refused++;
    }
  pthread_mutex_unlock (&ledger_lock);
  if (!known)
    st_warning ("refusing untrusted file %s%s%s%s: %s", file, who ? " (" : "", who ? who : "",
                who ? ")" : "", why);
}

bool
st_untrusted_budget_take (unsigned uid, uint64_t bytes, uint64_t budget, const void *file_key,
                          size_t key_len)
{
  bool ok = false;
  pthread_mutex_lock (&ledger_lock);
  if (ledger.paid == NULL)
    ledger.paid = st_hashmap_new (free);
  if (ledger.paid != NULL && st_hashmap_get (ledger.paid, file_key, key_len) != NULL)
    {
      pthread_mutex_unlock (&ledger_lock);
      return true;
    }
  if (ledger.budget == NULL)
    ledger.budget = st_hashmap_new (free);
  uint64_t *used = ledger.budget ? st_hashmap_get (ledger.budget, &uid, sizeof uid) : NULL;
  if (used == NULL && ledger.budget != NULL)
    {
      used = calloc (1, sizeof *used);
      if (used != NULL && st_hashmap_put (ledger.budget, &uid, sizeof uid, used) < 0)
        {
          free (used);
          used = NULL;
        }
    }
  if (used != NULL && *used + bytes <= budget)
    {
      *used += bytes;
      ok = true;
      char *mark = ledger.paid != NULL ? strdup ("") : NULL;
      if (mark != NULL && st_hashmap_put (ledger.paid, file_key, key_len, mark) < 0)
        free (mark);
    }
  pthread_mutex_unlock (&ledger_lock);
  return ok;
}

void
st_untrusted_add_storage_time (uint64_t ns, uint64_t files_parsed, uint64_t bytes_parsed)
{
  pthread_mutex_lock (&ledger_lock);
  ledger.storage_ns += ns;
  ledger.storage_files += files_parsed;
  ledger.storage_bytes += bytes_parsed;
  pthread_mutex_unlock (&ledger_lock);
}

unsigned
st_untrusted_refused_count (void)
{
  pthread_mutex_lock (&ledger_lock);
  unsigned n = ledger.refused;
  pthread_mutex_unlock (&ledger_lock);
  return n;
}

void
st_untrusted_print_summary (FILE *out)
{
  pthread_mutex_lock (&ledger_lock);
  if (ledger.storage_ns > 0)
    fprintf (out, "container storage metadata: %" PRIu64 " files parsed (%" PRIu64 " bytes), "
             "%.1f ms in all\n", ledger.storage_files, ledger.storage_bytes,
             ledger.storage_ns / 1e6);
  fprintf (out, "refused untrusted files: %u\n", ledger.refused);
  for (unsigned i = 0; i < ledger.refused && i < MAX_LISTED; i++)
    if (ledger.listed[i] != NULL)
      fprintf (out, "  %s\n", ledger.listed[i]);
  if (ledger.refused > MAX_LISTED)
    fprintf (out, "  (%u more)\n", ledger.refused - MAX_LISTED);
  pthread_mutex_unlock (&ledger_lock);
}
