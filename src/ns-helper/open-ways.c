#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns-helper/auth.h"
#include "ns-helper/debuginfo.h"
#include "ns-helper/open-ways.h"

/* What the ways met, for the error reply: "map_files: ...; openat2: ...".
   A file that was found but failed a check says more than a way that
   found nothing, so its error is the one returned.  */
struct attempts {
  char *why;
  size_t size, len;
  int error;
  bool checked;             /* error comes from a check of a found file */
};

static void __attribute__ ((format (printf, 3, 4)))
attempt_failed (struct attempts *a, int error, const char *fmt, ...)
{
  if (a->len + 3 < a->size)
    {
      if (a->len > 0)
        {
          memcpy (a->why + a->len, "; ", 3);
          a->len += 2;
        }
      va_list ap;
      va_start (ap, fmt);
      int n = vsnprintf (a->why + a->len, a->size - a->len, fmt, ap);
      va_end (ap);
      if (n > 0)
        a->len += (size_t) n < a->size - a->len ? (size_t) n : a->size - a->len - 1;
    }
  bool checked = error == -EINVAL || error == -ENOEXEC || error == -ESTALE;
  if (!a->checked || checked)
    {
      a->error = error;
      a->checked = checked;
    }
}

/* The map_files entry of the mapping at START: its exact name when the
   mapping is still the one recorded, else the one that contains START (a
   later mprotect may have split it).  */
static int
open_map_files (const struct st_pin *pin, uint64_t start, uint64_t end)
{
  char name[64];
  snprintf (name, sizeof name, "map_files/%" PRIx64 "-%" PRIx64, start, end);
  int fd = openat (pin->proc_fd, name, O_PATH | O_CLOEXEC);
  if (fd >= 0 || errno != ENOENT)
    return fd >= 0 ? fd : -errno;
  int dir_fd = openat (pin->proc_fd, "map_files", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return -errno;
  DIR *dir = fdopendir (dir_fd);
  if (dir == NULL)
    {
      int e = errno;
      close (dir_fd);
      return -e;
    }
  fd = -ENOENT;
  struct dirent *d;
  while ((d = readdir (dir)) != NULL)
    {
      uint64_t a, b;
      char dash;
      if (sscanf (d->d_name, "%" SCNx64 "%c%" SCNx64, &a, &dash, &b) == 3 && dash == '-'
          && a <= start && start < b)
        {
          fd = openat (dirfd (dir), d->d_name, O_PATH | O_CLOEXEC);
          if (fd < 0)
            fd = -errno;
          break;
        }
    }
  closedir (dir);
  return fd;
}

/* The user namespace the broker must enter before the mount namespace, or
   -1 when it need not.  A privileged helper enters any mount namespace;
   for a client that is not root, it enters first a user namespace the
   client owns, as the client (broker.h), so that the client's files in
   its own container are its own there.  A helper without privileges
   enters the owning user namespace always.  */
static int
owning_user_namespace (const struct st_ways *ways, const struct st_pin *pin)
{
  if (ways->privileged && ways->client_uid < 0)
    return -1;
  /* Never /proc/PID/ns/user: flatpak nests a second user namespace, whose
     owner may not enter the mount namespace of the first.  */
  int fd = ioctl (pin->mnt_fd, NS_GET_USERNS);
  if (fd < 0)
    return -1;
  struct stat a, b;
  uid_t owner;
  if ((fstat (fd, &a) == 0 && stat ("/proc/self/ns/user", &b) == 0 && a.st_dev == b.st_dev
       && a.st_ino == b.st_ino)
      || (ways->privileged
          && (ioctl (fd, NS_GET_OWNER_UID, &owner) != 0 || (long) owner != ways->client_uid)))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* N paths opened by the resolver (MNT_FD < 0: under the pinned root) or
   the setns broker: read-only descriptors into FDS (-errno where a path
   failed).  */
static int
open_by (const struct st_ways *ways, const struct st_pin *pin, bool by_setns,
         const char *const *paths, size_t n, int *fds)
{
  int errs[ST_BROKER_MAX_PATHS];
  int r;
  /* Every slot starts as "not opened": a way that fails before it fills
     them must not leave a stale number, which the checks below would
     fstat and close as if it were a file of ours (it would be one of the
     opener's own descriptors).  */
  for (size_t i = 0; i < n; i++)
    {
      fds[i] = -1;
      errs[i] = EIO;
    }
  if (by_setns)
    {
      int userns = owning_user_namespace (ways, pin);
      /* A pooled worker lives no longer than its process (pool.h); the
         namespace of one that exited, which its pin keeps, is entered by
         a worker of this one job, as before the pool.  */
      r = st_pin_alive (pin)
          ? st_pool_open (ways->pool, ways->broker, pin, userns, paths, n, fds, errs)
          : st_broker_open (ways->broker, pin->mnt_fd, userns, paths, n, fds, errs);
      if (userns >= 0)
        close (userns);
    }
  else
    r = st_broker_open_in_root (ways->resolver, pin->root_fd, pin->id, paths, n, fds, errs);
  for (size_t i = 0; i < n; i++)
    {
      if (r < 0 && fds[i] >= 0)
        close (fds[i]);   /* a way that failed part way: nothing of it is used */
      if (r < 0 || fds[i] < 0)
        fds[i] = r < 0 ? r : -errs[i];
    }
  return r;
}

static bool
allowed (const struct st_nsh_request *req, enum st_nsh_way way)
{
  return (req->ways & (1u << way)) != 0;
}

/* Checks what a way found: FD is an O_PATH descriptor (map_files) or one
   reopened read-only already (the others).  On success fills FOUND.  */
static bool
accept_file (const struct st_ways *ways, int fd, bool o_path, const uint8_t *want,
             size_t want_size, enum st_nsh_way way, const char *path, struct st_found *found,
             struct attempts *a)
{
  char why[256];
  int r = o_path ? st_check_file (fd, ways->fd_dir, want, want_size, &found->file, why,
                                  sizeof why)
                 : st_check_elf (fd, want, want_size, &found->file, why, sizeof why);
  if (r < 0)
    {
      attempt_failed (a, r, "%s: %s: %s", st_nsh_way_name (way), path, why);
      return false;
    }
  found->way = way;
  snprintf (found->path, sizeof found->path, "%s", path);
  return true;
}

/* The numbers are those of broker.h and pool.h.  */
#define TIMED_OUT "did not answer in 10 s (a file system that does not answer?) and was given up"
#define HUNG "a worker hung in that mount namespace less than 60 s ago (a file system that " \
  "does not answer): none is started there until then"

static const char *
way_error (int fd, int r)
{
  _Static_assert (ST_BROKER_JOB_TIMEOUT_S == 10 && ST_POOL_HUNG_S == 60, "the messages' numbers");
  return r == -ETIMEDOUT ? "the process that opens it " TIMED_OUT
         : r == -ETIME ? HUNG
         : r < 0 ? "the process that opens it failed"
         : fd == -EINVAL ? "not a regular file" : strerror (-fd);
}

int
st_open_mapping (const struct st_ways *ways, const struct st_pin *pin, int level,
                 const struct st_nsh_request *req, struct st_found *found, char *why,
                 size_t why_size)
{
  struct attempts a = { why, why_size, 0, -ENOENT, false };
  why[0] = '\0';
  const uint8_t *want = req->build_id;
  size_t want_size = req->build_id_size;
  if (allowed (req, ST_NSH_WAY_MAP_FILES))
    {
      /* No pidfd poll first: /proc/PID of a process that exited opens
         nothing, also once another process has its pid (proc_fd is the
         pinned one's), so the poll only names the failure.  */
      int fd = level < ST_AUTH_MAPPED ? -EPERM
               : !req->has_range ? -EDESTADDRREQ : open_map_files (pin, req->start, req->end);
      if (fd < 0 && fd != -EPERM && fd != -EDESTADDRREQ && !st_pin_alive (pin))
        fd = -ESRCH;
      /* The process may have exec'd a setuid program since it was judged:
         what the open got is the client's only if the client may still
         read the process now (auth.h).  */
      bool changed = fd >= 0 && ways->limited_peer != NULL
                     && !st_auth_still_mapped (ways->limited_peer, pin);
      if (changed)
        {
          close (fd);
          fd = -EPERM;
        }
      if (fd < 0)
        attempt_failed (&a, fd, "map_files: %s",
                        level < ST_AUTH_MAPPED || changed
                        ? "only for a process the client may read itself"
                        : fd == -EDESTADDRREQ ? "no address range given"
                        : fd == -ESRCH ? "the process exited" : strerror (-fd));
      else if (accept_file (ways, fd, true, want, want_size, ST_NSH_WAY_MAP_FILES, req->path,
                            found, &a))
        return 0;
    }
  for (int w = ST_NSH_WAY_OPENAT2; w <= ST_NSH_WAY_SETNS; w++)
    {
      if (!allowed (req, (enum st_nsh_way) w))
        continue;
      const char *paths[] = { req->path };
      int fd;
      int r = open_by (ways, pin, w == ST_NSH_WAY_SETNS, paths, 1, &fd);
      if (fd < 0)
        attempt_failed (&a, fd == -EINVAL ? -EINVAL : fd, "%s: %s%s%s",
                        st_nsh_way_name ((enum st_nsh_way) w),
                        fd == -EINVAL ? req->path : "", fd == -EINVAL ? ": " : "",
                        way_error (fd, r));
      else if (accept_file (ways, fd, false, want, want_size, (enum st_nsh_way) w, req->path,
                            found, &a))
        return 0;
    }
  if (a.len == 0)
    attempt_failed (&a, -EINVAL, "no way allowed");
  return a.error;
}

/* Is FD the same file as the binary (dev, ino), which a debuglink naming
   the binary itself would find?  */
static bool
same_file (int fd, const struct stat *binary)
{
  struct stat st;
  return binary != NULL && fstat (fd, &st) == 0 && st.st_dev == binary->st_dev
         && st.st_ino == binary->st_ino;
}

int
st_open_debuginfo (const struct st_ways *ways, const struct st_pin *pin,
                   const struct st_nsh_request *req, struct st_found *found, char *why,
                   size_t why_size)
{
  struct attempts a = { why, why_size, 0, -ENOENT, false };
  why[0] = '\0';
  char candidates[ST_DEBUGINFO_MAX_CANDIDATES][ST_NSH_PATH_MAX];
  size_t n = st_debuginfo_candidates (req->path, req->build_id, req->build_id_size,
                                      req->debuglink, candidates);
  for (int w = ST_NSH_WAY_OPENAT2; w <= ST_NSH_WAY_SETNS; w++)
    {
      if (!allowed (req, (enum st_nsh_way) w))
        continue;
      const char *name = st_nsh_way_name ((enum st_nsh_way) w);
      /* The binary first, to tell it from a debuglink that names it.  */
      const char *paths[ST_BROKER_MAX_PATHS] = { req->path };
      for (size_t i = 0; i < n; i++)
        paths[i + 1] = candidates[i];
      int fds[ST_BROKER_MAX_PATHS];
      int r = open_by (ways, pin, w == ST_NSH_WAY_SETNS, paths, n + 1, fds);
      struct stat binary_st;
      const struct stat *binary = fds[0] >= 0 && fstat (fds[0], &binary_st) == 0 ? &binary_st
                                                                                  : NULL;
      bool done = false;
      size_t missing = 0;
      for (size_t i = 1; i <= n; i++)
        {
          int fd = fds[i];
          if (done || fd == -ENOENT || (fd >= 0 && same_file (fd, binary)))
            {
              if (fd >= 0)
                close (fd);
              missing += !done;
              continue;
            }
          if (fd < 0)
            attempt_failed (&a, fd, "%s: %s: %s", name, candidates[i - 1], way_error (fd, r));
          else
            done = accept_file (ways, fd, false, req->build_id, req->build_id_size,
                                (enum st_nsh_way) w, candidates[i - 1], found, &a);
        }
      if (fds[0] >= 0)
        close (fds[0]);
      if (done)
        return 0;
      if (missing == n)
        attempt_failed (&a, -ENOENT, "%s: none of %zu places has it", name, n);
      /* setns is tried even when openat2 found every place empty: openat2
         looks under the root the process had when it was pinned, setns
         under its namespace's root now, which the maps' paths are
         relative to; a chrooted process (a daemon's privilege separation)
         or one pinned before a pivot_root has its debuginfo only there.  */
    }
  if (a.len == 0)
    attempt_failed (&a, -EINVAL, "no way allowed (map_files has no debuginfo)");
  return a.error;
}
