#include "config.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "container/container.h"
#include "basic/cleanup.h"
#include "basic/hashmap.h"
#include "basic/log.h"
#include "core/resolve/demangle.h"
#include "core/resolve/dwarf-alt.h"
#include "core/unwind/process.h"
#include "core/unwind/symbolize.h"
#include "core/unwind/unwinder.h"

/* Inline expansion can add several frames per unwound frame.  */
#define INLINE_FRAMES_PER_FRAME 8

struct st_unwinder {
  struct st_unwinder_options opts;
  struct st_resolver *resolver;
  struct st_process_table *processes;
  struct st_debuginfo_finder finder;
  struct st_raw_frame *raw;
  size_t max_out_frames;
  /* Strings whose owners may go before the result is written (a DWARF
     name when its Dwfl is freed): one stable copy of each.  A mapping's
     path is the process table's, parked for the results that name it.  */
  struct st_hashmap *strings;
  struct st_containers *containers;
  bool warned_regs;
  /* Without opts.arch: the architecture the files of the first sample
     said, for samples whose files say nothing (and for the summary).  */
  const struct st_regs_arch *arch_of_files;
  /* The thread of the last sample, its process, name and container:
     samples come in runs of one thread, and only events change these
     (st_unwinder_event forgets them), so a run looks them up once.  */
  struct {
    bool valid;
    pid_t pid, tid;
    struct st_process *p;   /* NULL: not looked up yet */
    const char *comm;
    const struct st_container *ct;
  } last;
};

ST_DEFINE_CLEANUP (unwinder_freep, struct st_unwinder, st_unwinder_free)

int
st_unwinder_new (const struct st_unwinder_options *opts, struct st_unwinder **out)
{
  _cleanup_ (unwinder_freep) struct st_unwinder *u = calloc (1, sizeof *u);
  if (u == NULL)
    return -ENOMEM;
  u->opts = *opts;
  u->max_out_frames = opts->max_frames * (opts->inline_frames ? INLINE_FRAMES_PER_FRAME : 1);
  u->finder.debuginfod = opts->debuginfod;
  u->finder.ns_client = opts->ns_client;
  u->finder.cfi_only = !opts->inline_frames;
  u->finder.live = opts->live;
  u->resolver = st_resolver_new ();
  u->raw = calloc (opts->max_frames, sizeof *u->raw);
  u->strings = st_hashmap_new (free);
  if (u->resolver == NULL || u->raw == NULL || u->strings == NULL)
    return -ENOMEM;
  int r = st_dwarf_alt_stand_in_new (&u->finder.alt_stand_in);
  if (r < 0)
    return r;
  r = st_containers_new (opts->containers, &u->containers);
  if (r < 0)
    return r;
  st_resolver_set_ways (u->resolver, &(struct st_resolver_ways) {
    .sysroot = opts->sysroot,
    .ns_client = opts->ns_client,
    .containers = u->containers,
    .debuginfod = opts->debuginfod,
    .shared_files = opts->shared_files,
  });
  r = st_process_table_new (u->resolver, &u->processes);
  if (r < 0)
    return r;
  st_process_table_set_debuginfo_finder (u->processes, &u->finder);
  st_process_table_set_jit_budget (u->processes, opts->jit_budget);
  *out = ST_TAKE_PTR (u);
  return 0;
}

void
st_unwinder_free (struct st_unwinder *u)
{
  if (u == NULL)
    return;
  /* Processes hold references into the resolver's files: they go first. */
  st_process_table_free (u->processes);
  st_resolver_free (u->resolver);
  /* After every Dwfl that may hold it as a Dwarf's dwz file.  */
  st_dwarf_alt_stand_in_free (u->finder.alt_stand_in);
  st_containers_free (u->containers);
  st_hashmap_free (u->strings);
  free (u->raw);
  free (u);
}

size_t
st_unwinder_max_out_frames (const struct st_unwinder *u)
{
  return u->max_out_frames;
}

uint64_t
st_unwinder_modules_refused (const struct st_unwinder *u)
{
  return st_process_table_modules_refused (u->processes);
}

uint64_t
st_unwinder_mappings_refused (const struct st_unwinder *u)
{
  return st_process_table_mappings_refused (u->processes);
}

uint64_t
st_unwinder_jit_dumps_refused (const struct st_unwinder *u)
{
  return st_process_table_jit_dumps_refused (u->processes);
}

const struct st_resolver *
st_unwinder_resolver (const struct st_unwinder *u)
{
  return u->resolver;
}

void
st_unwinder_park_files (struct st_unwinder *u, uint64_t stamp)
{
  st_resolver_park (u->resolver, stamp);
  st_process_table_park (u->processes, stamp);
}

void
st_unwinder_release_files (struct st_unwinder *u, uint64_t written)
{
  st_resolver_release_parked (u->resolver, written);
  st_process_table_release_parked (u->processes, written);
}

/* A copy of STR that lives as long as the unwinder.  */
static const char *
intern (struct st_unwinder *u, const char *str)
{
  const char *copy = st_hashmap_intern (u->strings, str);
  return copy != NULL || str == NULL ? copy : "[out of memory]";
}

/* The shown name of an inlined function that DWARF names RAW (often a
   mangled linkage name): demangled once per name, not per frame, and kept
   as long as the unwinder, under RAW with its NUL (a key intern () never
   uses).  */
static const char *
intern_demangled (struct st_unwinder *u, const char *raw)
{
  if (raw == NULL)
    return NULL;
  size_t len = strlen (raw) + 1;
  char *copy = st_hashmap_get (u->strings, raw, len);
  if (copy != NULL)
    return copy;
  copy = st_demangle (raw, st_demangle_style ());
  if (copy == NULL)
    copy = strdup (raw);
  if (copy == NULL || st_hashmap_put (u->strings, raw, len, copy) < 0)
    {
      free (copy);
      return "[out of memory]";
    }
  return copy;
}

int
st_unwinder_event (struct st_unwinder *u, const struct st_event *ev)
{
  if (ev->kind != ST_EVENT_SAMPLE)
    u->last.valid = false;
  switch (ev->kind)
    {
    case ST_EVENT_MMAP:
      return st_process_table_mmap (u->processes, &ev->mmap);
    case ST_EVENT_COMM:
      return st_process_table_comm (u->processes, &ev->comm);
    case ST_EVENT_FORK:
      return st_process_table_fork (u->processes, &ev->task);
    case ST_EVENT_EXIT:
      if (ev->task.pid == ev->task.tid)
        st_containers_forget (u->containers, ev->task.pid);
      return st_process_table_exit (u->processes, &ev->task);
    case ST_EVENT_BUILD_ID:
      return st_process_table_build_id (u->processes, &ev->build_id);
    case ST_EVENT_SAMPLE:
    case ST_EVENT_LOST:
    case ST_EVENT_RAW:
    case ST_EVENT_RECORDING:
      break;
    }
  return 0;
}

const char *
st_unwinder_comm (struct st_unwinder *u, pid_t pid, pid_t tid)
{
  return st_process_table_comm_of (u->processes, pid, tid);
}

/* Fills u->last for SAMPLE's thread.  */
static void
sample_thread (struct st_unwinder *u, const struct st_sample *sample)
{
  if (u->last.valid && u->last.pid == sample->pid && u->last.tid == sample->tid)
    return;
  u->last.pid = sample->pid;
  u->last.tid = sample->tid;
  u->last.p = NULL;
  u->last.comm = st_unwinder_comm (u, sample->pid, sample->tid);
  u->last.ct = st_containers_of (u->containers, sample->pid);
  u->last.valid = true;
}

/* The sample's process (made if new): NULL when memory ran out.  */
static struct st_process *
sample_process (struct st_unwinder *u, const struct st_sample *sample)
{
  sample_thread (u, sample);
  if (u->last.p == NULL)
    u->last.p = st_process_table_get (u->processes, sample->pid);
  return u->last.p;
}

/* perf record -g: no stack to unwind, the kernel walked the frame
   pointers.  Its chain is shown as it is, symbolized like ours: the first
   address is the sampled pc, the others return addresses.  */
static int
kernel_chain (struct st_unwinder *u, const struct st_sample *sample, struct st_unwound *out)
{
  struct st_process *p = sample_process (u, sample);
  if (p == NULL)
    return -ENOMEM;
  Dwfl *dwfl = st_process_dwfl (u->processes, p);
  size_t n = sample->n_user_ips < u->opts.max_frames ? sample->n_user_ips : u->opts.max_frames;
  for (size_t i = 0; i < n; i++)
    u->raw[i] = (struct st_raw_frame) { sample->user_ips[i], i == 0 };
  struct st_symbolize_options sym_opts = { .inline_frames = u->opts.inline_frames };
  out->n_frames = st_symbolize (&sym_opts, dwfl, p, u->raw, n, out->frames, u->max_out_frames);
  if (u->opts.inline_frames)
    for (size_t i = 0; i < out->n_frames; i++)
      if (out->frames[i].inlined)
        out->frames[i].symbol = intern (u, out->frames[i].symbol);
  out->stop = n < sample->n_user_ips ? ST_STOP_FRAME_LIMIT
              : sample->user_chain_lbr ? ST_STOP_LBR_CHAIN : ST_STOP_KERNEL_CHAIN;
  out->container = u->last.ct ? &u->last.ct->label : NULL;
  return 0;
}

static const struct st_regs_arch *
arch_of_module (Dwfl_Module *mod)
{
  GElf_Addr bias;
  Elf *elf = dwfl_module_getelf (mod, &bias);
  GElf_Ehdr ehdr;
  if (elf == NULL || gelf_getehdr (elf, &ehdr) == NULL)
    return NULL;
  return st_regs_arch_of_elf (ehdr.e_machine, ehdr.e_ident[EI_CLASS], ehdr.e_ident[EI_DATA]);
}

static int
first_module_arch (Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                   void *arg)
{
  const struct st_regs_arch **arch = arg;
  *arch = arch_of_module (mod);
  return *arch != NULL ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* The architecture of a sample when the recording names none (perf pipes
   and files of old perf, Sysprof streams): the ELF header of the file the
   sampled pc lies in, else of any file of the process, never this
   machine's.  The sample's ABI then picks the compat table (an i386 task
   on x86_64), as with a named architecture.  */
static const struct st_regs_arch *
arch_of_files (struct st_unwinder *u, Dwfl *dwfl, const struct st_sample *sample)
{
  const struct st_regs_arch *arch = NULL;
  if (dwfl != NULL)
    {
      Dwfl_Module *mod = sample->ip != 0 ? dwfl_addrmodule (dwfl, sample->ip) : NULL;
      arch = mod != NULL ? arch_of_module (mod) : NULL;
      if (arch == NULL)
        dwfl_getmodules (dwfl, first_module_arch, &arch, 0);
    }
  if (arch == NULL)
    return u->arch_of_files;
  if (u->arch_of_files == NULL)
    u->arch_of_files = arch;
  return arch;
}

const struct st_regs_arch *
st_unwinder_arch (const struct st_unwinder *u)
{
  return u->opts.arch != NULL ? u->opts.arch : u->arch_of_files;
}

int
st_unwinder_sample (struct st_unwinder *u, const struct st_sample *sample,
                    struct st_unwound *out)
{
  sample_thread (u, sample);
  st_unwound_set_comm (out, u->last.comm);
  out->container = u->last.ct ? &u->last.ct->label : NULL;
  out->n_frames = 0;
  out->detail = NULL;
  out->stack_needed = 0;
  out->frames_by_cache = 0;
  out->frames_by_libdwfl = 0;
  struct st_dwarf_regs regs;
  if ((sample->abi == ST_REGS_ABI_NONE || sample->stack_size == 0) && sample->n_user_ips > 0)
    return kernel_chain (u, sample, out);
  const struct st_regs_arch *arch = u->opts.arch;
  struct st_process *p = NULL;
  Dwfl *dwfl = NULL;
  if (arch == NULL && sample->abi != ST_REGS_ABI_NONE && sample->stack_size > 0)
    {
      p = sample_process (u, sample);
      if (p == NULL)
        return -ENOMEM;
      dwfl = st_process_dwfl (u->processes, p);
      arch = arch_of_files (u, dwfl, sample);
    }
  if (arch == NULL && sample->abi != ST_REGS_ABI_NONE && sample->stack_size > 0)
    {
      /* No file of the process was found, so nothing says how to read its
         registers: the sampled pc is still a frame.  */
      memset (&regs, 0, sizeof regs);
      regs.pc = sample->ip;
      dwfl = NULL;
    }
  else if (sample->abi == ST_REGS_ABI_NONE || sample->stack_size == 0
           || st_regs_to_dwarf (arch, sample, &regs) < 0)
    {
      if (sample->abi != ST_REGS_ABI_NONE && sample->stack_size > 0 && !u->warned_regs)
        {
          st_warning ("sample at byte %" PRIu64 "%s%s lacks the pc or stack pointer register "
                      "(register mask %#" PRIx64 ")", sample->input_offset,
                      sample->input_file != NULL ? " of " : "",
                      sample->input_file != NULL ? sample->input_file : "", sample->regs_mask);
          u->warned_regs = true;
        }
      out->stop = ST_STOP_NO_USER_STACK;
      return 0;
    }

  if (p == NULL)
    {
      p = sample_process (u, sample);
      if (p == NULL)
        return -ENOMEM;
      dwfl = st_process_dwfl (u->processes, p);
    }
  struct st_unwind_result result;
  if (dwfl == NULL)
    {
      /* Nothing to unwind with, but the sampled pc is still a frame.  */
      u->raw[0] = (struct st_raw_frame) { regs.pc, true };
      result = (struct st_unwind_result) { u->raw, 1, ST_STOP_NO_PROCESS_FILES, NULL, 0, 0 };
      if (st_process_find_mapping (p, regs.pc) == NULL)
        result.stop = ST_STOP_NO_MODULE;
    }
  else
    {
      st_unwind_sample (dwfl, p->slot, sample, &regs, u->raw, u->opts.max_frames,
                        !u->opts.unwinder_libdwfl, &result);
      out->frames_by_cache = result.n_by_cache;
      out->frames_by_libdwfl = result.n_frames - result.n_by_cache;
    }

  struct st_symbolize_options sym_opts = { .inline_frames = u->opts.inline_frames };
  out->n_frames = st_symbolize (&sym_opts, dwfl, p, result.frames, result.n_frames,
                                out->frames, u->max_out_frames);
  /* Module paths are the process table's (kept while a result may name
     them); names from DWARF belong to a Dwfl that an exit may free.  */
  if (u->opts.inline_frames)
    for (size_t i = 0; i < out->n_frames; i++)
      if (out->frames[i].inlined)
        {
          out->frames[i].raw_symbol = intern (u, out->frames[i].symbol);
          out->frames[i].symbol = intern_demangled (u, out->frames[i].symbol);
        }
  out->stop = result.stop;
  out->detail = result.detail;
  out->stack_needed = result.stack_needed;
  /* Finding its files may have told which container a process that was
     gone belonged to.  */
  if (p->ran_in != NULL)
    {
      st_containers_adopt (u->containers, sample->pid, p->ran_in);
      p->ran_in = NULL;
      u->last.ct = st_containers_of (u->containers, sample->pid);
      out->container = u->last.ct ? &u->last.ct->label : NULL;
    }
  return 0;
}
