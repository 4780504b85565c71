/* The steps that open a mapping's candidate file (resolver-private.h),
 * from the recording machine's files under --sysroot to debuginfod by
 * build-id, the last resort.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container/container.h"
#include "basic/elf-begin.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/resolve/ns-client.h"
#include "core/resolve/resolver.h"
#include "core/resolve/resolver-private.h"
#include "core/resolve/sysroot.h"
#include "basic/untrusted.h"
#include "debuginfod/debuginfod.h"

static bool
is_special_name (const char *path)
{
  return path[0] == '[' || strncmp (path, "//anon", 6) == 0 || strncmp (path, "/memfd:", 7) == 0;
}

/* libelf on the candidate's file, its header's counts checked first: a
   user's file may count billions of sections (basic/elf-begin.h).  0, or
   -1 with C->why saying why.  */
static int
candidate_begin (struct candidate *c)
{
  return st_elf_begin_untrusted (c->fd, &c->elf, &c->why) < 0 ? -1 : 0;
}

/* The file at the path the process used, seen from the host.  Right when
   the process shares the host's mount namespace; the build-id/inode check
   catches the cases where it does not.  */
static int
step_host_path (const struct st_mapping_request *req, struct candidate *c)
{
  if (is_special_name (req->path))
    return 1;
  char path[4096];
  snprintf (path, sizeof path, "%s", req->path);
  size_t len = strlen (path);
  static const char deleted[] = " (deleted)";
  bool was_deleted = len > sizeof deleted - 1
                     && strcmp (path + len - (sizeof deleted - 1), deleted) == 0;
  if (was_deleted)
    path[len - (sizeof deleted - 1)] = '\0';
  /* The path comes from the recording or a process's maps, which may be
     hostile: a FIFO blocks the open, a device can act (as root,
     /dev/watchdog arms the watchdog), a /proc file blocks the read.  */
  struct stat st;
  c->fd = st_open_untrusted (AT_FDCWD, path, 0, &st);
  if (c->fd < 0)
    {
      int err = c->fd;
      c->fd = -1;
      st_why_set (&c->why, -err, "%s%s", was_deleted ? "deleted after it was mapped: " : "",
                  st_untrusted_strerror (err));
      return -1;
    }
  if (req->build_id_size == 0 && req->has_dev_ino && st.st_ino != req->ino)
    {
      /* Only the inode is compared: the device number perf records is the
         superblock's, which differs from stat's on btrfs subvolumes.  */
      st_why_set (&c->why, ESTALE, "%s (inode %llu, mapped inode %llu)",
                  was_deleted ? "deleted and replaced" : "replaced since it was mapped",
                  (unsigned long long) st.st_ino, (unsigned long long) req->ino);
      return -1;
    }
  return candidate_begin (c);
}

/* The recording machine's files: under --sysroot by their path, in a
   --search-path directory by their name.  Their inodes are another
   machine's, so only the build-id (in candidate_verify) is checked.  */
static int
step_sysroot (const struct st_mapping_request *req, struct candidate *c)
{
  if (is_special_name (req->path))
    return 1;
  struct stat st;
  int fd = st_sysroot_open (c->resolver->sysroot, req->path, &st);
  if (fd == 1)
    return 1;
  if (fd < 0)
    {
      st_why_set (&c->why, -fd, "%s%s: %s", st_sysroot_root (c->resolver->sysroot),
                  req->path, st_untrusted_strerror (fd));
      return -1;
    }
  c->fd = fd;
  return candidate_begin (c);
}

static int
step_search_path (const struct st_mapping_request *req, struct candidate *c)
{
  if (is_special_name (req->path))
    return 1;
  struct stat st;
  const char *dir = NULL;
  int fd = st_sysroot_search (c->resolver->sysroot, req->path, &st, &dir);
  if (fd == 1)
    return 1;
  if (fd < 0)
    {
      st_why_set (&c->why, -fd, "not in any directory of it (%s)",
                  st_untrusted_strerror (fd));
      return -1;
    }
  c->fd = fd;
  return candidate_begin (c);
}

/* The vdso is not a file: use this process's own, which is the same image
   when the recording was made by this kernel (the build-id check, when the
   recording has one, makes sure).  */
static int
step_vdso (const struct st_mapping_request *req, struct candidate *c)
{
  if (strcmp (req->path, "[vdso]") != 0)
    return 1;
  const unsigned char *base = (const void *) getauxval (AT_SYSINFO_EHDR);
  if (base == NULL)
    {
      st_why_set (&c->why, ENOENT, "this system has no vdso");
      return -1;
    }
  Elf *probe = elf_memory ((char *) base, 1 << 20);
  GElf_Ehdr ehdr;
  size_t size = 0;
  if (probe != NULL && gelf_getehdr (probe, &ehdr) != NULL)
    {
      size = ehdr.e_shoff + (size_t) ehdr.e_shnum * ehdr.e_shentsize;
      size_t phnum;
      if (elf_getphdrnum (probe, &phnum) == 0)
        for (size_t i = 0; i < phnum; i++)
          {
            GElf_Phdr ph;
            if (gelf_getphdr (probe, i, &ph) && ph.p_offset + ph.p_filesz > size)
              size = ph.p_offset + ph.p_filesz;
          }
    }
  elf_end (probe);
  if (size == 0 || size > (1 << 20))
    {
      st_why_set (&c->why, EIO, "cannot read this system's vdso");
      return -1;
    }
  c->image = malloc (size);
  if (c->image == NULL)
    return -1;
  memcpy (c->image, base, size);
  c->elf = elf_memory (c->image, size);
  return 0;
}

/* The executable by build-id from a debuginfod server: the last resort
   for a file that is gone (deleted, updated, a removed container's
   layer).  The build-id is what is asked for, and is checked again.  */
static int
step_debuginfod (const struct st_mapping_request *req, struct candidate *c)
{
  struct st_debuginfod *d = c->resolver->debuginfod;
  if (d == NULL || req->build_id_size == 0 || is_special_name (req->path))
    return 1;
  c->fd = st_debuginfod_find_executable (d, req->build_id, req->build_id_size, req->path,
                                         &c->why);
  if (c->fd < 0)
    return -1;
  return candidate_begin (c);
}

bool
st_resolver_helper_applies (const struct st_mapping_request *req)
{
  /* Without a build-id or an inode, what the helper finds could not be
     checked: the pid may be another process's by now.  */
  return !is_special_name (req->path) && req->pid > 0
         && (req->build_id_size > 0 || req->has_dev_ino);
}

/* The file as the process's own mount namespace has it, opened by the
   namespace helper.  Asked only when the host path failed (missing, or
   another file than the one mapped): each step before this one returned
   -1 or did not apply.  */
static int
step_ns_helper (const struct st_mapping_request *req, struct candidate *c)
{
  struct st_ns_client *ns = c->resolver->ns_client;
  if (ns == NULL || !st_resolver_helper_applies (req))
    return 1;
  const char *way = NULL;
  c->fd = st_ns_client_open (ns, req, &way, &c->why);
  if (c->fd < 0)
    return -1;
  struct stat st;
  if (req->build_id_size == 0 && req->has_dev_ino
      && (fstat (c->fd, &st) != 0 || st.st_ino != req->ino))
    {
      st_why_set (&c->why, ESTALE, "%s finds inode %llu, but inode %llu was mapped", way,
                  (unsigned long long) st.st_ino, (unsigned long long) req->ino);
      return -1;
    }
  st_info ("pid %d: %s: opened by the namespace helper (%s)", (int) req->pid, req->path, way);
  return candidate_begin (c);
}

/* Is the file open in C->fd the mapped one?  Without a build-id, by size
   and inode (overlay shows the layer file's inode in the maps).  */
static bool
storage_matches (const struct st_mapping_request *req, struct candidate *c)
{
  if (req->build_id_size > 0)
    return st_elf_fd_has_build_id (c->fd, req->build_id, req->build_id_size);
  struct stat st;
  return fstat (c->fd, &st) == 0 && st.st_ino == req->ino
         && (uint64_t) st.st_size >= req->end - req->start + req->pgoff - 4096;
}

struct storage_search {
  const struct st_mapping_request *req;
  struct candidate *c;
  const struct st_container *found_in;
  bool upper;
};

static int
search_container (const struct st_container *ct, void *arg)
{
  struct storage_search *s = arg;
  size_t next = 0;
  while (next < ct->n_dirs)
    {
      bool upper = false;
      s->c->fd = st_container_open (ct, s->req->path, &next, &upper, &s->c->why);
      if (s->c->fd < 0)
        return 0;
      if (storage_matches (s->req, s->c))
        {
          s->found_in = ct;
          s->upper = upper;
          return 1;
        }
      close (s->c->fd);
      s->c->fd = -1;
    }
  return 0;
}

/* The file in the container's storage on the host: flatpak's app and
   runtime deployments, podman's container and image layers.  They stay
   readable after the process is gone; for a process that is gone before
   it was seen, every container and image podman stores is searched.  Only
   the mapped file is accepted: its build-id, or its inode.  */
static int
step_container (const struct st_mapping_request *req, struct candidate *c)
{
  const struct st_resolver *r = c->resolver;
  if (r->containers == NULL || is_special_name (req->path) || req->path[0] != '/'
      || (req->build_id_size == 0 && !req->has_dev_ino))
    return 1;
  struct storage_search s = { req, c, NULL, false };
  const struct st_container *ct = st_containers_detected (r->containers, req->pid);
  if (ct != NULL)
    search_container (ct, &s);
  else
    st_containers_foreach_stored (r->containers, search_container, &s);
  if (s.found_in == NULL)
    {
      /* Overlay shows its files on an anonymous device (major 0): a file
         no stored layer has lived in a removed container's own layer.  */
      if (ct == NULL && req->has_dev_ino && req->maj == 0)
        {
          c->upper_only = true;
          st_why_set (&c->why, ENOENT, "gone with its container: in no stored container "
                      "or image layer (only in a removed container's own layer?)");
        }
      else
        st_why_set (&c->why, ENOENT, "not in %s%s", ct ? "the storage of " : "any stored "
                    "container or image", ct ? ct->root_frame : "");
      return -1;
    }
  st_info ("pid %d: %s: found in the storage of %s (%s%s)", (int) req->pid, req->path,
           s.found_in->root_frame, s.upper ? "its own layer" : "a lower layer or deployment",
           ct ? "" : ", the process was gone");
  if (ct == NULL && s.upper)
    c->ran_in = s.found_in;
  return candidate_begin (c);
}

const struct st_resolver_step st_resolver_steps[] = {
  { ST_FOUND_SYSROOT, step_sysroot },
  { ST_FOUND_SEARCH_PATH, step_search_path },
  { ST_FOUND_HOST_PATH, step_host_path },
  { ST_FOUND_VDSO, step_vdso },
  { ST_FOUND_NS_HELPER, step_ns_helper },
  { ST_FOUND_CONTAINER, step_container },
  { ST_FOUND_DEBUGINFOD, step_debuginfod },
};
const size_t st_resolver_n_steps = sizeof st_resolver_steps / sizeof st_resolver_steps[0];
