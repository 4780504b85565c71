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
#include "basic/elf-begin.h"
#include "basic/procfs.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/inflate-bounds.h"
#include "core/resolve/ns-client.h"
#include "core/resolve/resolver.h"
#include "core/resolve/resolver-private.h"
#include "core/resolve/sysroot.h"
#include "basic/untrusted.h"
#include "debuginfod/debuginfod.h"

static void
candidate_discard (struct candidate *c)
{
  /* The vdso's Elf reads its image; every other one a file's frozen
     mapping (basic/elf-begin.h).  */
  if (c->image != NULL)
    elf_end (c->elf);
  else
    st_elf_end_untrusted (c->elf);
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
  /* Compressed sections that say they inflate past their bound: the file
     is read with them empty, by us and by libdwfl (inflate-bounds.h).  */
  struct st_why bomb = { 0 };
  if (c->fd >= 0 && st_inflate_check_sections (c->elf, &bomb) < 0)
    {
      Elf *hidden = st_inflate_hidden (c->fd, false);
      st_untrusted_refuse (req->path, "compressed sections not read", bomb.text);
      if (hidden == NULL)
        {
          st_why_set (&c->why, E2BIG, "%s", bomb.text);
          return false;
        }
      st_elf_end_untrusted (c->elf);
      c->elf = hidden;
    }
  return true;
}

/* Whether the file of A, known by its inode only, was written since it
   was opened (one fstat of the descriptor it keeps).  */
static bool
rewritten_since (const struct answer *a)
{
  struct stat st;
  if (!a->by_inode || fstat (a->file->fd, &st) < 0)
    return false;
  return st.st_ctim.tv_sec != a->ctime.tv_sec || st.st_ctim.tv_nsec != a->ctime.tv_nsec;
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
  r->sweep_at = ST_RESOLVER_IDLE_KEPT;
  r->missing_sweep_at = ST_RESOLVER_MISSING_KEPT;
  if (r->answers == NULL || r->by_build_id == NULL)
    {
      st_resolver_free (r);
      return NULL;
    }
  return r;
}

void
st_resolver_set_ways (struct st_resolver *r, const struct st_resolver_ways *ways)
{
  r->debuginfod = ways->debuginfod;
  r->shared_files = ways->shared_files;
  r->ns_client = ways->ns_client;
  r->containers = ways->containers;
  r->sysroot = ways->sysroot;
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
  /* Nothing is written after this: every file goes at once.  */
  r->park = false;
  st_hashmap_free (r->answers);
  st_hashmap_free (r->by_build_id);
  st_resolver_release_parked (r, UINT64_MAX);
  free (r->parked);
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
  for (size_t i = 0; i < st_resolver_n_steps; i++)
    {
      struct candidate c = { .resolver = r, .fd = -1 };
      int s = st_resolver_steps[i].open (req, &c);
      candidate_learnt (r, &c, res);
      if (s == 1)
        continue;
      if (s == 0 && candidate_verify (req, &c))
        {
          struct st_elf_file *f = st_elf_file_new (c.fd, c.image, c.elf, req->path, st_resolver_steps[i].how);
          if (f == NULL)
            {
              candidate_discard (&c);
              st_why_set (why, ENOMEM, "out of memory");
              return NULL;
            }
          st_resolver_own_file (r, f);
          if (st_resolver_steps[i].how == ST_FOUND_NS_HELPER)
            f->ns_pid = req->pid;   /* its debuginfo is looked for there too */
          if (r->shared_files != NULL)
            f->shared = st_shared_files_get (r->shared_files, f);
          if ((st_resolver_steps[i].how == ST_FOUND_SYSROOT || st_resolver_steps[i].how == ST_FOUND_SEARCH_PATH)
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
          st_info ("pid %d: %s: found by %s", (int) req->pid, req->path, st_found_by_name (st_resolver_steps[i].how));
          return f;
        }
      /* The first step's reason first: later steps' are less telling,
         but a last resort that failed too says why.  */
      size_t used = strlen (why->text);
      if (used + 3 < sizeof why->text)
        {
          if (st_resolver_steps[i].how == ST_FOUND_SYSROOT && s == 0)
            /* Name the wrong file: the sysroot is the user's to fix.  */
            snprintf (why->text + used, sizeof why->text - used, "%ssysroot: %s%s: %.159s",
                      used > 0 ? "; " : "", st_sysroot_root (r->sysroot), req->path,
                      c.why.text);
          else
            /* A step's reason is told in 159 bytes at most, as always.  */
            snprintf (why->text + used, sizeof why->text - used, "%s%s: %.159s",
                      used > 0 ? "; " : "", st_found_by_name (st_resolver_steps[i].how), c.why.text);
        }
      candidate_discard (&c);
    }
  if (why->text[0] == '\0')
    st_why_set (why, ENOENT, "no way to open it");
  return NULL;
}

/* Whether the steps before the namespace helper's find REQ's file (each
   candidate is closed again: this only looks).  find's loop, without
   what it keeps: the file is opened again, and kept, when resolved.  */
static bool
found_before_helper (struct st_resolver *r, const struct st_mapping_request *req)
{
  for (size_t i = 0; i < st_resolver_n_steps && st_resolver_steps[i].how != ST_FOUND_NS_HELPER;
       i++)
    {
      struct candidate c = { .resolver = r, .fd = -1 };
      bool found = st_resolver_steps[i].open (req, &c) == 0 && candidate_verify (req, &c);
      candidate_discard (&c);
      if (found)
        return true;
    }
  return false;
}

void
st_resolver_prefetch (struct st_resolver *r, const struct st_mapping_request *reqs, size_t n)
{
  /* The cheap checks first (the steps before the helper's open files),
     and the one that fails for most processes first of those: this runs
     for every process that maps new files.  */
  if (n < 2 || r->ns_client == NULL || !st_proc_in_other_mount_namespace (reqs[0].pid)
      || !st_ns_client_batches (r->ns_client))
    return;
  struct st_mapping_request ask[ST_NS_PREFETCH_MAX];
  size_t m = 0;
  char key[4096 + 64];
  for (size_t i = 0; i < n && m < ST_NS_PREFETCH_MAX; i++)
    {
      const struct st_mapping_request *req = &reqs[i];
      if (!st_resolver_helper_applies (req)
          || (req->build_id_size > 0
              && st_hashmap_get (r->by_build_id, req->build_id, req->build_id_size) != NULL)
          || st_hashmap_get (r->answers, key, answer_key (req, key, sizeof key)) != NULL
          || found_before_helper (r, req))
        continue;
      ask[m++] = *req;
    }
  st_ns_client_prefetch (r->ns_client, ask, m);
}

void
st_resolver_drop_build_id_ref (struct st_resolver *r, struct st_elf_file *f)
{
  if (f->build_id_size > 0 && st_hashmap_get (r->by_build_id, f->build_id, f->build_id_size) == f)
    st_hashmap_remove (r->by_build_id, f->build_id, f->build_id_size);   /* unrefs */
}

/* Forgets the answer A at KEY, whose file was rewritten in place: also
   by_build_id's reference, so that no other path is given the old file.  */
static void
forget_rewritten (struct st_resolver *r, const char *key, size_t key_len, const struct answer *a)
{
  st_resolver_drop_build_id_ref (r, a->file);
  r->files_held--;
  st_hashmap_remove (r->answers, key, key_len);   /* frees it */
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
  if (a != NULL && rewritten_since (a))
    {
      st_info ("%s: rewritten in place since it was opened: opened again", req->path);
      forget_rewritten (r, key, key_len, a);
      a = NULL;
    }
  r->clock++;
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
      struct stat st;
      if (a->file != NULL && req->build_id_size == 0 && req->has_dev_ino && a->file->fd >= 0
          && fstat (a->file->fd, &st) == 0)
        {
          a->by_inode = true;
          a->ctime = st.st_ctim;
        }
      if (a->file == NULL)
        {
          a->why_not = strdup (why.text);
          st_info ("%s: not found (%s)", req->path, why.text);
        }
      a->used = r->clock;
      if (st_hashmap_put (r->answers, key, key_len, a) < 0)
        {
          answer_free (a);
          *why_not = "out of memory";
          return NULL;
        }
      if (a->file != NULL && ++r->files_held > r->sweep_at)
        st_resolver_let_idle_files_go (r);
      /* The new answer is the one asked for last: never the one forgotten.  */
      if (a->file == NULL && ++r->missing_held > r->missing_sweep_at)
        st_resolver_forget_old_missing (r);
    }
  a->used = r->clock;
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
