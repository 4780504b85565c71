#include "config.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/elf-begin.h"
#include "basic/frozen-copy.h"
#include "core/resolve/debuginfo-host.h"
#include "core/resolve/dwarf-alt.h"
#include "core/resolve/find-debuginfo.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "core/resolve/ns-client.h"
#include "basic/untrusted.h"
#include "core/resolve/elf-file.h"
#include "core/resolve/inflate-bounds.h"
#include "core/resolve/mapping.h"
#include "debuginfod/debuginfod.h"

/* What libdwfl asked for.  */
struct request {
  Dwfl_Module *mod;
  void **userdata;
  const char *modname;
  Dwarf_Addr base;
  const char *file_name;
  const char *debuglink_file;
  GElf_Word debuglink_crc;
  const struct st_mapping *mapping;   /* the module's userdata */
};

/* A step returns a file descriptor of the debug file, with *PATH set (a
   malloc'ed string) when it knows one, or -1 when it has none.  */
typedef int (*step_fn) (const struct request *q, char **path);

/* Whom a copy of a debug file the request finds is charged to
   (basic/frozen-copy.h): live, the user of the module's process (for a
   process gone by then, the file's owner, in a share apart:
   st_frozen_owner_of_process, and same_process); else the file's owner.  */
static uint64_t
owner_of_request (const struct request *q)
{
  const struct st_mapping *m = q->mapping;
  if (m != NULL && m->finder != NULL && m->finder->live && m->pid > 0)
    return ST_FROZEN_OWNER_PID | (uint32_t) m->pid;
  return ST_FROZEN_OWNER_FILE;
}

/* st_frozen_same_process_fn for a request's mapping ARG: the process that
   has its pid now still maps the module where the record said.  Else the
   pid was reused between the sample and its unwinding (a second or so),
   and the process that has it now is somebody else's, whom a user could
   otherwise charge with a short process.  Asked only when a copy is made:
   it reads the process's maps.  */
static bool
same_process (pid_t pid, const void *arg)
{
  const struct st_mapping *m = arg;
  int same = st_proc_maps_file_at (pid, m->start, m->end, m->pgoff, m->has_dev_ino, m->maj,
                                   m->min, m->ino);
  return same != 0 && same != -ENOENT;   /* unreadable maps: cannot tell */
}

/* libdwfl asks again, with the .gnu_debugaltlink name and no CRC, for the
   dwz file that a module's DWARF refers to.  The request for the debug file
   itself carries the module's own .gnu_debuglink, or none.  */
static bool
is_altlink_request (const struct request *q, Elf *main_elf)
{
  if (q->debuglink_file == NULL)
    return false;
  GElf_Word crc = 0;
  const char *link = dwelf_elf_gnu_debuglink (main_elf, &crc);
  return link == NULL || strcmp (link, q->debuglink_file) != 0 || crc != q->debuglink_crc;
}

/* The build-id of the dwz file that an altlink request asks for, in *ID
   (the module's own memory): its length, or 0 or -1 when there is none.
   The module's Dwarf is set up by then (so this returns at once) and names
   the dwz file's build-id.  */
static ssize_t
altlink_build_id (const struct request *q, const void **id)
{
  Dwarf_Addr bias;
  Dwarf *dw = dwfl_module_getdwarf (q->mod, &bias);
  const char *alt_name;
  return dw != NULL ? dwelf_dwarf_gnu_debugaltlink (dw, &alt_name, id) : -1;
}

/* libdw 0.188 looks for a dwz file on its own, with a blocking open, when
   none was set (dwarf-alt.h): the module's Dwarf gets the stand-in before
   the steps look, and libdwfl replaces it with what they find.  */
static void
give_alt_stand_in (const struct request *q)
{
  const struct st_debuginfo_finder *finder = q->mapping->finder;
  Dwarf_Addr bias;
  Dwarf *dw = dwfl_module_getdwarf (q->mod, &bias);
  if (dw != NULL && finder != NULL && finder->alt_stand_in != NULL)
    {
      st_dwarf_alt_stand_in_give (finder->alt_stand_in, dw);
      /* The module's userdata, ours to mark: what libdwfl sets from here
         on is the file the steps found.  */
      ((struct st_mapping *) q->mapping)->alt_given = true;
    }
}

/* The host's debug directories and the module's own, searched our way
   (core/resolve/debuginfo-host.h says why not libdwfl's): every candidate opened
   as untrusted, accepted by build-id (or CRC).  */
static int
step_host (const struct request *q, char **path)
{
  const struct st_mapping *m = q->mapping;
  struct st_debuginfo_want w = {
    .file_name = q->file_name,
    .debuglink = q->debuglink_file,
    .crc = q->debuglink_crc,
    .owner = owner_of_request (q),
  };
  const unsigned char *bits = NULL;
  GElf_Addr vaddr;
  int n = dwfl_module_build_id (q->mod, &bits, &vaddr);
  if (n > 0)
    {
      w.build_id = bits;
      w.build_id_size = (size_t) n;
    }
  if (m != NULL && m->file != NULL && is_altlink_request (q, m->file->elf))
    {
      const void *alt_id;
      ssize_t len = altlink_build_id (q, &alt_id);
      if (len <= 0)
        return -1;
      w.alt = true;
      w.build_id = alt_id;
      w.build_id_size = (size_t) len;
      w.crc = 0;
    }
  struct stat st;
  if (m != NULL && m->file != NULL && m->file->fd >= 0 && fstat (m->file->fd, &st) == 0)
    {
      w.has_main = true;
      w.main_dev = st.st_dev;
      w.main_ino = st.st_ino;
    }
  return st_debuginfo_host_find (&w, path);
}

/* A file that the namespace helper opened has its debug file in the same
   mount namespace, where the host's paths do not reach: ask the helper,
   which checks the build-id.  Files found on the host are the host's, and
   so is their debuginfo.  (A dwz file, asked for by its own build-id, is
   left to the host and debuginfod.)  */
static int
step_ns_helper (const struct request *q, char **path)
{
  const struct st_mapping *m = q->mapping;
  struct st_ns_client *ns = m != NULL && m->finder != NULL ? m->finder->ns_client : NULL;
  if (ns == NULL || m->file == NULL || m->file->found_by != ST_FOUND_NS_HELPER
      || m->file->build_id_size == 0 || is_altlink_request (q, m->file->elf))
    return -1;
  const char *way = NULL;
  struct st_why why;
  int fd = st_ns_client_open_debuginfo (ns, m->file->ns_pid, m->path, m->file->build_id,
                                        m->file->build_id_size, q->debuglink_file, path, &way,
                                        &why);
  if (fd < 0)
    {
      st_debug ("%s: no debuginfo in its namespace: %s", m->path, why.text);
      return -1;
    }
  /* The helper checked the build-id of the file in the namespace, whose
     owners may write it since: what libdwfl reads is a copy, its build-id
     checked again, charged to the user of the process that maps the module
     (not of the process the file was first opened for: files are shared),
     in a recording too: the helper reaches only processes that run.  */
  pid_t by = m->pid > 0 ? m->pid : m->file->ns_pid;
  fd = st_freeze (fd, true, ST_FROZEN_OWNER_PID | (uint32_t) by, &why);
  if (fd >= 0 && !st_elf_fd_has_build_id (fd, m->file->build_id, m->file->build_id_size))
    {
      st_frozen_close (fd);
      fd = st_why_set (&why, ESTALE, "its build-id is not the one the helper checked");
    }
  if (fd < 0)
    {
      st_untrusted_refuse (*path != NULL ? *path : m->path, "debug file not read", why.text);
      return -1;
    }
  uint64_t owner = 0;
  char owner_name[160];
  (void) st_frozen_copy_owner (fd, &owner);
  st_info ("pid %d: %s: debuginfo %s opened by the namespace helper (%s), read from a copy "
           "counted with %s", (int) m->file->ns_pid, m->path, *path ? *path : "?", way,
           st_frozen_owner_name (owner, owner_name, sizeof owner_name));
  return fd;
}

static int
step_debuginfod (const struct request *q, char **path)
{
  const struct st_mapping *m = q->mapping;
  struct st_debuginfod *d = m != NULL && m->finder != NULL ? m->finder->debuginfod : NULL;
  if (d == NULL || m->file == NULL)
    return -1;
  /* Only for what the module's file lacks: never for a file that has
     what the unwinder and the symbolizer need.  */
  unsigned want = st_debuginfod_debuginfo_wanted (d, m->file->elf);
  if (want == 0)
    return -1;
  const uint8_t *id = m->file->build_id;
  size_t n = m->file->build_id_size;
  if (is_altlink_request (q, m->file->elf))
    {
      const void *alt_id;
      ssize_t len = altlink_build_id (q, &alt_id);
      if (len <= 0)
        return -1;
      id = alt_id;
      n = (size_t) len;
    }
  struct st_why why;
  int fd = st_debuginfod_find_debuginfo (d, id, n, m->path, want, path, &why);
  if (fd < 0)
    st_debug ("%s: no debuginfo from debuginfod: %s", m->path, why.text);
  return fd;
}

static const struct {
  const char *name;
  step_fn find;
} steps[] = {
  { "namespace helper", step_ns_helper },
  { "host", step_host },
  { "debuginfod", step_debuginfod },
};

/* Whether ELF has a .debug_frame (or .zdebug_frame) section; true when
   it cannot tell (the file is then served as it is).  */
static bool
has_debug_frame (Elf *elf)
{
  size_t shstrndx;
  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    return true;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      const char *name;
      if (gelf_getshdr (scn, &shdr) != NULL && shdr.sh_type != SHT_NOBITS
          && (name = elf_strptr (elf, shstrndx, shdr.sh_name)) != NULL
          && (strcmp (name, ".debug_frame") == 0 || strcmp (name, ".zdebug_frame") == 0))
        return true;
    }
  return false;
}

/* Whether libdwfl may have the debug file FD: an ELF file (not one
   compressed whole), its header's counts (basic/elf-begin.h) and what its
   compressed sections say they inflate to (inflate-bounds.h; libdw
   inflates every one when the Dwarf opens) within bounds.  *HAS_FRAME
   (when not NULL): whether it has a .debug_frame, read from the same
   copy of its tables, which costs an ELF header check, a mapping and its
   tables' pages again on this project's VMs (a quarter of a millisecond
   a debug file).  */
static bool
debug_file_within_bounds (int fd, struct st_why *why, bool *has_frame)
{
  Elf *elf = NULL;
  if (st_elf_begin_untrusted (fd, &elf, why) < 0)
    return false;
  /* libdwfl inflates a gzip, bzip2, xz or zstd file whole and reads the
     ELF file inside, which the header check never saw.  */
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    {
      st_elf_end_untrusted (elf);
      st_why_set (why, ENOEXEC, "not an ELF file");
      return false;
    }
  bool ok = st_inflate_check_sections (elf, why) == 0;
  if (ok && has_frame != NULL)
    *has_frame = has_debug_frame (elf);
  st_elf_end_untrusted (elf);
  return ok;
}

/* st_debug_file_admit, and *HAS_FRAME as debug_file_within_bounds says.  */
static int
admit (int fd, const char *name, bool always_copy, uint64_t owner, bool *has_frame)
{
  struct st_why why = { 0 };
  struct stat st;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      st_untrusted_refuse (name, "debug file not read", "not a regular file");
      st_frozen_close (fd);
      return -1;
    }
  /* libdwfl's elf_begin reads what it is given after our checks: checked
     and served is a copy nobody can write (made by the step already, for
     the host's candidates).  */
  int served = st_freeze (fd, always_copy, owner, &why);
  if (served >= 0 && served != fd)
    st_frozen_say_copied (name, served);
  if (served >= 0 && debug_file_within_bounds (served, &why, has_frame))
    return served;
  st_untrusted_refuse (name, "debug file not read", why.text);
  st_frozen_close (served);
  return -1;
}

int
st_debug_file_admit (int fd, const char *name, bool always_copy, uint64_t owner)
{
  return admit (fd, name, always_copy, owner, NULL);
}

/* Keeps FD (and PATH) as FILE's debug file, for this Dwfl and the next;
   HAS_FRAME: it has a .debug_frame.  */
static void
keep (struct st_elf_file *file, int fd, const char *path, bool has_frame)
{
  file->debug_has_frame = has_frame;
  file->debug_searched = true;
  file->debug_fd = fd;
  free (file->debug_path);
  file->debug_path = path != NULL ? strdup (path) : NULL;
}

/* A dup of FD (-1: none, -1 returned) for one more Dwfl, which closes
   what it gets, and PATH as its name.  */
static int
serve_dup (int fd, const char *path, char **debuginfo_file_name)
{
  int dup = fd >= 0 ? fcntl (fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (dup >= 0)
    {
      free (*debuginfo_file_name);
      *debuginfo_file_name = path != NULL ? strdup (path) : NULL;
    }
  return dup;
}

/* FILE's debug file for one more Dwfl, which closes what it gets.  libdw
   0.188 inflates every compressed debug section when it opens the file's
   Dwarf, which libdwfl does in every process whose unwinding tries
   .debug_frame: the Dwfls get a copy inflated once, made at the first
   request that is not for the symbol table (which is built once per file,
   needs no inflating, and would make a run that never needs the Dwarf
   inflate for nothing).  */
static int
serve_cached (struct st_elf_file *file, char **debuginfo_file_name)
{
  errno = 0;
  if (file->debug_fd < 0)
    return -1;
  if (!file->symtab_building && !file->debug_inflate_tried)
    {
      file->debug_inflate_tried = true;
      int copy = st_elf_inflated_copy (file->debug_fd);
      if (copy >= 0)
        {
          st_debug ("%s: debug file %s inflated once for all its processes", file->path,
                    file->debug_path != NULL ? file->debug_path : "?");
          st_frozen_close (file->debug_fd);
          file->debug_fd = copy;
        }
    }
  return serve_dup (file->debug_fd, file->debug_path, debuginfo_file_name);
}

/* FILE's debug file, searched before (by this thread: each has its own
   files), for one more Dwfl.  A process's module asks for it only for its
   Dwarf (the symbol table is read in a Dwfl of its own, which asks with
   SYMTAB_BUILDING set: core/unwind/module-symbols.c), which libdwfl asks
   for whenever .eh_frame does not unwind a frame (the loader's _start, in
   nearly every process).  Without .debug_frame and inline frames nothing
   in it is read, but whether the Dwarf opens decides how libdwfl ends the
   unwind ("end" or "No DWARF information found"): a stand-in that opens
   as a Dwarf with no .debug_frame, a page to map, spares mapping and
   unmapping the whole file in every process, and inflating it (libdw 0.188
   inflates every compressed section when the Dwarf opens).  */
static int
serve_searched (const struct request *q, struct st_elf_file *file, char **debuginfo_file_name)
{
  const struct st_debuginfo_finder *finder = q->mapping->finder;
  if (!file->symtab_building && !file->debug_has_frame && finder != NULL && finder->cfi_only
      && file->debug_fd >= 0)
    {
      if (file->debug_stand_in_fd == -2)
        file->debug_stand_in_fd = st_elf_dwarf_stand_in (file->debug_fd);
      int fd = serve_dup (file->debug_stand_in_fd, file->debug_path, debuginfo_file_name);
      if (fd >= 0)
        return fd;
    }
  return serve_cached (file, debuginfo_file_name);
}

/* Step I of the search: its file, admitted, with *PATH and *HAS_FRAME as
   search gives them, or -1 (*PATH freed).  */
static int
search_step (const struct request *q, size_t i, char **path, bool *has_frame)
{
  int fd = steps[i].find (q, path);
  if (fd >= 0)
    fd = admit (fd, *path != NULL ? *path : q->modname, steps[i].find == step_ns_helper,
                owner_of_request (q), has_frame);
  if (fd >= 0)
    {
      st_debug ("%s: %s file found by %s: %s", q->modname,
                q->mapping != NULL && q->mapping->file != NULL
                    && is_altlink_request (q, q->mapping->file->elf) ? "dwz" : "debug",
                steps[i].name, *path != NULL ? *path : "?");
      return fd;
    }
  /* libdwfl would open a name left behind.  */
  free (*path);
  *path = NULL;
  return -1;
}

/* The steps in order: the first file found and admitted, with *PATH
   (malloc'ed, or NULL) and *HAS_FRAME (whether it has a .debug_frame;
   HAS_FRAME may be NULL), or -1.  A copy made meanwhile for a process of
   the request's is charged to it only while it still maps the module
   (same_process).  */
static int
search (const struct request *q, char **path, bool *has_frame)
{
  int fd = -1;
  if (q->mapping != NULL)
    st_frozen_set_same_process (same_process, q->mapping);
  for (size_t i = 0; fd < 0 && i < sizeof steps / sizeof steps[0]; i++)
    fd = search_step (q, i, path, has_frame);
  st_frozen_set_same_process (NULL, NULL);
  return fd;
}

int
st_find_debuginfo (Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                   char **debuginfo_file_name)
{
  struct request q = {
    .mod = mod,
    .userdata = userdata,
    .modname = modname,
    .base = base,
    .file_name = file_name,
    .debuglink_file = debuglink_file,
    .debuglink_crc = debuglink_crc,
    .mapping = userdata != NULL ? *userdata : NULL,
  };
  struct st_elf_file *file = q.mapping != NULL ? q.mapping->file : NULL;
  char *path = NULL;
  if (file == NULL)
    {
      int fd = search (&q, &path, NULL);
      /* libdwfl closes what it gets: a copy (frozen-copy.h counts its
         holders and charges it) would go uncounted, held by nothing of
         ours.  A module without a file of ours gets none.  */
      if (fd >= 0 && st_frozen_is_copy (fd))
        {
          st_frozen_close (fd);
          fd = -1;
        }
      if (fd < 0)
        {
          free (path);
          errno = 0;
          return -1;
        }
      free (*debuginfo_file_name);
      *debuginfo_file_name = path;
      return fd;
    }
  /* Each request has one answer per run and thread, found once and served
     (a dup) to each process that maps the file: the file's own debug file,
     and the dwz file its Dwarf names (one memory copy of a file others may
     write, not one per process).  */
  if (is_altlink_request (&q, file->elf))
    {
      give_alt_stand_in (&q);
      if (!file->alt_searched)
        {
          unsigned refused = st_frozen_budget_refusals ();
          file->alt_fd = search (&q, &path, NULL);
          file->alt_path = path;
          /* Not found because the copies' budget was spent: asked again
             for the next process, the budget may have freed up.  */
          file->alt_searched = file->alt_fd >= 0 || st_frozen_budget_refusals () == refused;
        }
      errno = 0;   /* not found is not an error */
      return serve_dup (file->alt_fd, file->alt_path, debuginfo_file_name);
    }
  if (!file->debug_searched)
    {
      unsigned refused = st_frozen_budget_refusals ();
      bool has_frame = true;
      int fd = search (&q, &path, &has_frame);
      if (fd >= 0)
        keep (file, fd, path, has_frame);
      free (path);
      file->debug_searched = fd >= 0 || st_frozen_budget_refusals () == refused;
    }
  return serve_searched (&q, file, debuginfo_file_name);
}
