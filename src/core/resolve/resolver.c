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
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/resolve/ns-client.h"
#include "core/resolve/resolver.h"
#include "core/resolve/sysroot.h"
#include "basic/untrusted.h"
#include "debuginfod/debuginfod.h"

/* One cached answer: a file, or why there is none.  */
struct answer {
  struct st_elf_file *file;
  char *why_not;
  char *path;
  bool by_name;            /* under the sysroot or search path, no build-id to check */
};

struct st_resolver {
  struct st_hashmap *answers;     /* path + identity -> struct answer */
  struct st_hashmap *by_build_id; /* build-id -> st_elf_file (one ref) */
  struct st_debuginfod *debuginfod; /* NULL: off */
  struct st_ns_client *ns_client;   /* NULL: off */
  struct st_containers *containers; /* NULL: off */
  unsigned upper_only;              /* files gone with a removed container's layer */
  const struct st_sysroot *sysroot; /* NULL: off */
};

/* A step opens a candidate: 0 with its fd and Elf (or memory image), 1 when
   the step does not apply, or -1 with *WHY set.  */
struct candidate {
  const struct st_resolver *resolver;   /* for the steps that need more than REQ */
  int fd;
  void *image;
  Elf *elf;
  struct st_why why;
  /* What the container step learnt, for the caller to act on: the steps
     read the resolver, they do not change it.  */
  const struct st_container *ran_in;    /* see struct st_resolution */
  bool upper_only;          /* only in a removed container's own layer */
};

typedef int (*step_fn) (const struct st_mapping_request *req, struct candidate *c);

static bool
is_special_name (const char *path)
{
  return path[0] == '[' || strncmp (path, "//anon", 6) == 0 || strncmp (path, "/memfd:", 7) == 0;
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
}

/* The file as the process's own mount namespace has it, opened by the
   namespace helper.  Asked only when the host path failed (missing, or
   another file than the one mapped): each step before this one returned
   -1 or did not apply.  */
static int
step_ns_helper (const struct st_mapping_request *req, struct candidate *c)
{
  struct st_ns_client *ns = c->resolver->ns_client;
  /* Without a build-id or an inode, what the helper finds could not be
     checked: the pid may be another process's by now.  */
  if (ns == NULL || is_special_name (req->path) || req->pid <= 0
      || (req->build_id_size == 0 && !req->has_dev_ino))
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
}

/* Is the file open in C->fd the mapped one?  Without a build-id, by size
   and inode (overlay shows the layer file's inode in the maps).  */
static bool
storage_matches (const struct st_mapping_request *req, struct candidate *c)
{
  if (req->build_id_size > 0)
    {
      Elf *elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
      uint8_t id[ST_BUILD_ID_MAX];
      size_t n = elf ? st_elf_read_build_id (elf, id) : 0;
      elf_end (elf);
      return n == req->build_id_size && memcmp (id, req->build_id, n) == 0;
    }
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
  c->elf = elf_begin (c->fd, ELF_C_READ_MMAP, NULL);
  return 0;
}

static const struct {
  enum st_found_by how;
  step_fn open;
} steps[] = {
  { ST_FOUND_SYSROOT, step_sysroot },
  { ST_FOUND_SEARCH_PATH, step_search_path },
  { ST_FOUND_HOST_PATH, step_host_path },
  { ST_FOUND_VDSO, step_vdso },
  { ST_FOUND_NS_HELPER, step_ns_helper },
  { ST_FOUND_CONTAINER, step_container },
  { ST_FOUND_DEBUGINFOD, step_debuginfod },
};

static void
candidate_discard (struct candidate *c)
{
  elf_end (c->elf);
  if (c->fd >= 0)
    close (c->fd);
  free (c->image);
  c->elf = NULL;
  c->fd = -1;
  c->image = NULL;
}

/* Is the candidate an ELF file, and the one that was mapped?  */
static bool
candidate_verify (const struct st_mapping_request *req, struct candidate *c)
{
  if (c->elf == NULL || elf_kind (c->elf) != ELF_K_ELF)
    {
      st_why_set (&c->why, ENOEXEC, "not an ELF file");
      return false;
    }
  if (req->build_id_size > 0)
    {
      uint8_t id[ST_BUILD_ID_MAX];
      size_t n = st_elf_read_build_id (c->elf, id);
      if (n != req->build_id_size || memcmp (id, req->build_id, n) != 0)
        {
          char want[2 * ST_BUILD_ID_MAX + 1], have[2 * ST_BUILD_ID_MAX + 1];
          st_build_id_to_hex (req->build_id, req->build_id_size, want);
          st_build_id_to_hex (id, n, have);
          st_why_set (&c->why, ESTALE, "build-id %s, but %s was mapped",
                      n ? have : "(none)", want);
          return false;
        }
    }
  return true;
}

static void
answer_free (void *p)
{
  struct answer *a = p;
  st_elf_file_unref (a->file);
  free (a->why_not);
  free (a->path);
  free (a);
}

struct st_resolver *
st_resolver_new (void)
{
  struct st_resolver *r = calloc (1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->answers = st_hashmap_new (answer_free);
  r->by_build_id = st_hashmap_new ((st_hashmap_free_fn) st_elf_file_unref);
  if (r->answers == NULL || r->by_build_id == NULL)
    {
      st_resolver_free (r);
      return NULL;
    }
  return r;
}

void
st_resolver_set_debuginfod (struct st_resolver *r, struct st_debuginfod *d)
{
  r->debuginfod = d;
}

void
st_resolver_set_ns_client (struct st_resolver *r, struct st_ns_client *c)
{
  r->ns_client = c;
}

void
st_resolver_set_containers (struct st_resolver *r, struct st_containers *cs)
{
  r->containers = cs;
}

void
st_resolver_set_sysroot (struct st_resolver *r, const struct st_sysroot *s)
{
  r->sysroot = s;
}

struct by_name_visit {
  void (*fn) (const char *, void *);
  void *arg;
};

static int
visit_by_name (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  struct by_name_visit *v = arg;
  if (a->by_name && a->file != NULL && a->path != NULL)
    v->fn (a->path, v->arg);
  return 0;
}

void
st_resolver_foreach_by_name (const struct st_resolver *r, void (*fn) (const char *path, void *arg),
                             void *arg)
{
  struct by_name_visit v = { fn, arg };
  st_hashmap_foreach (r->answers, visit_by_name, &v);
}

unsigned
st_resolver_upper_only (const struct st_resolver *r)
{
  return r->upper_only;
}

void
st_resolver_free (struct st_resolver *r)
{
  if (r == NULL)
    return;
  st_hashmap_free (r->answers);
  st_hashmap_free (r->by_build_id);
  free (r);
}

/* The cache key: the path and what identifies the mapped file.  */
static size_t
answer_key (const struct st_mapping_request *req, char *key, size_t size)
{
  int n = snprintf (key, size, "%s", req->path);
  size_t len = (size_t) n + 1 < size ? (size_t) n + 1 : size;
  if (req->build_id_size > 0 && len + req->build_id_size + 1 <= size)
    {
      key[len++] = 'b';
      memcpy (key + len, req->build_id, req->build_id_size);
      len += req->build_id_size;
    }
  else if (req->has_dev_ino && len + 1 + sizeof req->ino + 2 * sizeof (uint32_t) <= size)
    {
      /* The device too: each container's file system numbers its inodes
         from the same start, so one path and inode may name as many
         files as there are containers.  (As recorded, not as stat says:
         only compared with itself.)  */
      key[len++] = 'i';
      memcpy (key + len, &req->ino, sizeof req->ino);
      len += sizeof req->ino;
      memcpy (key + len, &req->maj, sizeof req->maj);
      len += sizeof req->maj;
      memcpy (key + len, &req->min, sizeof req->min);
      len += sizeof req->min;
    }
  return len;
}

/* Keeps what step candidate C learnt besides its file (even when the file
   then fails its checks: the process did run in that container).  */
static void
candidate_learnt (struct st_resolver *r, const struct candidate *c, struct st_resolution *res)
{
  if (c->upper_only)
    r->upper_only++;
  if (c->ran_in != NULL && res->ran_in == NULL)
    res->ran_in = c->ran_in;
}

static struct st_elf_file *
find (struct st_resolver *r, const struct st_mapping_request *req, struct st_why *why,
      struct st_resolution *res, bool *by_name)
{
  /* A build-id already opened for another path or process is the same
     file: share it.  */
  if (req->build_id_size > 0)
    {
      struct st_elf_file *f = st_hashmap_get (r->by_build_id, req->build_id, req->build_id_size);
      if (f != NULL)
        return st_elf_file_ref (f);
    }
  st_why_clear (why);
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    {
      struct candidate c = { .resolver = r, .fd = -1 };
      int s = steps[i].open (req, &c);
      candidate_learnt (r, &c, res);
      if (s == 1)
        continue;
      if (s == 0 && candidate_verify (req, &c))
        {
          struct st_elf_file *f = st_elf_file_new (c.fd, c.image, c.elf, req->path, steps[i].how);
          if (f == NULL)
            {
              candidate_discard (&c);
              st_why_set (why, ENOMEM, "out of memory");
              return NULL;
            }
          if (steps[i].how == ST_FOUND_NS_HELPER)
            f->ns_pid = req->pid;   /* its debuginfo is looked for there too */
          if ((steps[i].how == ST_FOUND_SYSROOT || steps[i].how == ST_FOUND_SEARCH_PATH)
              && req->build_id_size == 0)
            {
              *by_name = true;
              st_info ("pid %d: %s: no build-id recorded, accepted by its name", (int) req->pid,
                       req->path);
            }
          if (f->build_id_size > 0)
            {
              struct st_elf_file *known = st_hashmap_get (r->by_build_id, f->build_id,
                                                          f->build_id_size);
              if (known != NULL)
                {
                  st_elf_file_unref (f);
                  return st_elf_file_ref (known);
                }
              if (st_hashmap_put (r->by_build_id, f->build_id, f->build_id_size,
                                  st_elf_file_ref (f)) < 0)
                st_elf_file_unref (f);
            }
          st_info ("pid %d: %s: found by %s", (int) req->pid, req->path, st_found_by_name (steps[i].how));
          return f;
        }
      /* The first step's reason first: later steps' are less telling,
         but a last resort that failed too says why.  */
      size_t used = strlen (why->text);
      if (used + 3 < sizeof why->text)
        {
          if (steps[i].how == ST_FOUND_SYSROOT && s == 0)
            /* Name the wrong file: the sysroot is the user's to fix.  */
            snprintf (why->text + used, sizeof why->text - used, "%ssysroot: %s%s: %.159s",
                      used > 0 ? "; " : "", st_sysroot_root (r->sysroot), req->path,
                      c.why.text);
          else
            /* A step's reason is told in 159 bytes at most, as always.  */
            snprintf (why->text + used, sizeof why->text - used, "%s%s: %.159s",
                      used > 0 ? "; " : "", st_found_by_name (steps[i].how), c.why.text);
        }
      candidate_discard (&c);
    }
  if (why->text[0] == '\0')
    st_why_set (why, ENOENT, "no way to open it");
  return NULL;
}

struct st_elf_file *
st_resolver_resolve (struct st_resolver *r, const struct st_mapping_request *req,
                     struct st_resolution *res)
{
  const char **why_not = &res->why_not;
  res->why_not = NULL;
  res->ran_in = NULL;
  char key[4096 + 64];
  size_t key_len = answer_key (req, key, sizeof key);
  struct answer *a = st_hashmap_get (r->answers, key, key_len);
  if (a == NULL)
    {
      struct st_why why;
      a = calloc (1, sizeof *a);
      if (a == NULL)
        {
          *why_not = "out of memory";
          return NULL;
        }
      a->file = find (r, req, &why, res, &a->by_name);
      a->path = strdup (req->path);
      if (a->file == NULL)
        {
          a->why_not = strdup (why.text);
          st_info ("%s: not found (%s)", req->path, why.text);
        }
      if (st_hashmap_put (r->answers, key, key_len, a) < 0)
        {
          answer_free (a);
          *why_not = "out of memory";
          return NULL;
        }
    }
  if (a->file == NULL)
    {
      *why_not = a->why_not ? a->why_not : "out of memory";
      return NULL;
    }
  return st_elf_file_ref (a->file);
}

struct answer_visit {
  void (*fn) (const char *, int, const char *, void *);
  void *arg;
};

static int
visit_answer (const void *key, size_t len, void *value, void *arg)
{
  struct answer *a = value;
  struct answer_visit *v = arg;
  if (a->path != NULL)
    v->fn (a->path, a->file ? (int) a->file->found_by : -1, a->why_not ? a->why_not : "?",
           v->arg);
  return 0;
}

void
st_resolver_foreach_answer (const struct st_resolver *r,
                            void (*fn) (const char *path, int found_by, const char *why,
                                        void *arg),
                            void *arg)
{
  struct answer_visit v = { fn, arg };
  st_hashmap_foreach (r->answers, visit_answer, &v);
}
