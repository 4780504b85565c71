/* The summary that --stats and -v print at the end of a run: the session's
 * counts, then how each file was found (or why not), merged over the
 * unwinding threads, and what the helpers that served them counted.  */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "basic/hashmap.h"
#include "basic/log.h"
#include "basic/untrusted.h"
#include "core/resolve/jit-budget.h"
#include "core/resolve/jit-map.h"
#include "core/resolve/ns-client.h"
#include "core/session-summary.h"
#include "core/unwind/process.h"
#include "debuginfod/debuginfod.h"

/* The summary merges what each unwinder found: a file is counted once,
   whichever thread opened it.  */
struct file_answer {
  int found_by;               /* enum st_found_by, or -1: not found */
  const char *why;
};

static void
merge_answer (const char *path, int found_by, const char *why, void *arg)
{
  struct st_hashmap *files = arg;
  struct file_answer *a = st_hashmap_get (files, path, strlen (path));
  if (a != NULL && a->found_by >= 0)
    return;
  if (a == NULL)
    {
      a = calloc (1, sizeof *a);
      if (a == NULL || st_hashmap_put (files, path, strlen (path), a) < 0)
        {
          free (a);
          return;
        }
    }
  a->found_by = found_by;
  a->why = why;
}

struct summary_counts {
  unsigned found[ST_FOUND_N];
  unsigned missing;
  FILE *out;
};

static int
count_answer (const void *key, size_t len, void *value, void *arg)
{
  struct file_answer *a = value;
  struct summary_counts *c = arg;
  if (a->found_by >= 0)
    c->found[a->found_by]++;
  else
    c->missing++;
  return 0;
}

static int
print_missing (const void *key, size_t len, void *value, void *arg)
{
  struct file_answer *a = value;
  struct summary_counts *c = arg;
  if (a->found_by < 0)
    {
      /* The path is the process's to choose, and the reason may name it.  */
      fputs ("    ", c->out);
      st_log_write_escaped (c->out, key, strnlen (key, len));
      fputs (": ", c->out);
      st_log_write_escaped (c->out, a->why, strlen (a->why));
      fputc ('\n', c->out);
    }
  return 0;
}

/* Which stack copy would have sufficed for what share of the samples: the
   answer to "stack copy exhausted", and to what a recording could save.  */
static void
print_stack_hint (const struct st_stats *st, FILE *out)
{
  if (st->stack_samples == 0)
    return;
  double all = (double) st->stack_samples;
  fprintf (out, "stack copy that would have sufficed (--call-graph dwarf,SIZE, --stack-size "
           "SIZE; these samples carried up to %" PRIu64 " bytes):\n", st->stack_copy_max);
  for (int i = 0; i < ST_STACK_FIT_N; i++)
    {
      if (ST_STACK_FIT_SIZES[i] > st->stack_copy_max && i > 0
          && ST_STACK_FIT_SIZES[i - 1] >= st->stack_copy_max)
        break;
      fprintf (out, "  %-30u %.1f%% of samples\n", ST_STACK_FIT_SIZES[i],
               100.0 * st->stack_fits[i] / all);
    }
  if (st->stack_exhausted > 0)
    fprintf (out, "  more than %-20" PRIu64 " %.1f%% of samples (the copy ran out: record "
             "with a bigger SIZE, at most 65528)\n", st->stack_copy_max,
             100.0 * st->stack_exhausted / all);
}

/* A set of paths: the value is never read, only the key counts.  */
static void
note_path (const char *path, void *set)
{
  st_hashmap_put (set, path, strlen (path), (void *) path);
}

void
st_session_summary_print (FILE *out, const struct st_stats *st,
                          struct st_unwinder *const *unwinders, unsigned n_unwinders,
                          struct st_jit_budget *jit_budget, const struct st_session_options *opts)
{
  fprintf (out, "samples read:       %" PRIu64 "\n", st->samples);
  fprintf (out, "samples unwound:    %" PRIu64 "\n", st->unwound);
  fprintf (out, "user frames:        %" PRIu64 " (%.1f per sample)\n", st->frames,
           st->samples ? (double) st->frames / st->samples : 0.0);
  uint64_t stepped = st->frames_by_cache + st->frames_by_libdwfl;
  if (stepped > 0)
    fprintf (out, "frames stepped:     %.1f%% by the unwind-rule cache, %.1f%% by libdwfl\n",
             100.0 * st->frames_by_cache / stepped, 100.0 * st->frames_by_libdwfl / stepped);
  fprintf (out, "unwinds by how they ended:\n");
  for (int i = 0; i < ST_STOP_N; i++)
    if (st->stops[i] > 0)
      fprintf (out, "  %-30s %" PRIu64 " (%.1f%%)\n", st_stop_reason_name (i), st->stops[i],
               100.0 * st->stops[i] / (st->samples ? st->samples : 1));
  print_stack_hint (st, out);
  if (st->lost > 0)
    fprintf (out, "samples lost by the kernel: %" PRIu64 " (%.1f%% of %" PRIu64 ")\n", st->lost,
             100.0 * st->lost / (st->samples + st->dropped + st->lost),
             st->samples + st->dropped + st->lost);
  if (st->dropped > 0)
    fprintf (out, "samples read, not unwound (stopped at once): %" PRIu64 "\n", st->dropped);

  struct st_hashmap *files = st_hashmap_new (free);
  if (files == NULL)
    return;
  for (unsigned i = 0; i < n_unwinders; i++)
    st_resolver_foreach_answer (st_unwinder_resolver (unwinders[i]), merge_answer, files);
  struct summary_counts c = { .out = out };
  st_hashmap_foreach (files, count_answer, &c);
  unsigned let_go_by_name = 0;
  uint64_t let_go = 0;
  for (unsigned i = 0; i < n_unwinders; i++)
    {
      st_resolver_let_go_found (st_unwinder_resolver (unwinders[i]), c.found, &let_go_by_name);
      let_go += st_resolver_let_go (st_unwinder_resolver (unwinders[i]));
    }
  /* A file closed and found again (or closed in one thread, open in
     another) counts again: the paths of closed files are not kept.  */
  fprintf (out, "files found, by how%s:\n",
           let_go > 0 ? " (a file closed when no process mapped it counts again if found again)" : "");
  for (int i = 0; i < ST_FOUND_N; i++)
    fprintf (out, "  %-30s %u\n", st_found_by_name (i), c.found[i]);
  uint64_t forgotten = 0;
  for (unsigned i = 0; i < n_unwinders; i++)
    forgotten += st_resolver_missing_forgotten (st_unwinder_resolver (unwinders[i]));
  if (c.missing > 0 || forgotten > 0)
    {
      fprintf (out, "  %-30s %u\n", "not found", c.missing);
      st_hashmap_foreach (files, print_missing, &c);
      if (forgotten > 0)
        fprintf (out, "    and %" PRIu64 " answers \"not found\" forgotten, with their paths "
                 "(counted in each unwinding thread, which keeps the %d asked for last)\n",
                 forgotten, ST_RESOLVER_MISSING_KEPT);
    }
  st_hashmap_free (files);
  /* Each unwinding thread sees every mapping: the first one's count.  */
  if (n_unwinders > 0 && st_unwinder_mappings_refused (unwinders[0]) > 0)
    fprintf (out, "mappings not kept, of processes naming over %u MiB of paths: %" PRIu64 "\n",
             ST_PROCESS_PATH_BYTES >> 20, st_unwinder_mappings_refused (unwinders[0]));
  /* Each thread makes the Dwfls of the processes it unwinds: the sum.  */
  uint64_t modules_refused = 0;
  for (size_t i = 0; i < n_unwinders; i++)
    modules_refused += st_unwinder_modules_refused (unwinders[i]);
  if (modules_refused > 0)
    fprintf (out, "mappings given no module, of processes with over %d: %" PRIu64
             " (counted in each unwinding thread)\n", ST_PROCESS_MAX_MODULES, modules_refused);
  if (st_jit_budget_reads_refused (jit_budget) > 0)
    fprintf (out, "JIT file reads stopped at their user's budget (%u MiB held, %u MiB a second): "
             "%" PRIu64 ", of %u users\n", ST_JIT_USER_HELD_BYTES >> 20,
             ST_JIT_USER_RATE_BYTES >> 20, st_jit_budget_reads_refused (jit_budget),
             st_jit_budget_users_refused (jit_budget));
  if (n_unwinders > 0 && st_unwinder_jit_dumps_refused (unwinders[0]) > 0)
    fprintf (out, "processes whose jitdump files past the first %d were not read: %" PRIu64 "\n",
             ST_JIT_MAP_MAX_DUMPS, st_unwinder_jit_dumps_refused (unwinders[0]));
  unsigned upper_only = 0;
  for (unsigned i = 0; i < n_unwinders; i++)
    upper_only += st_resolver_upper_only (st_unwinder_resolver (unwinders[i]));
  if (upper_only > 0)
    fprintf (out, "files gone with a removed container's own layer: %u\n", upper_only);
  if (let_go > 0)
    fprintf (out, "files closed when no process mapped them any more (each unwinding thread "
             "keeps the %d used last): %" PRIu64 "\n", ST_RESOLVER_IDLE_KEPT, let_go);
  /* Each unwinding thread resolves on its own: count each path once.  */
  struct st_hashmap *by_name = st_hashmap_new (NULL);
  for (unsigned i = 0; by_name != NULL && i < n_unwinders; i++)
    st_resolver_foreach_by_name (st_unwinder_resolver (unwinders[i]), note_path, by_name);
  if (by_name != NULL && st_hashmap_size (by_name) + let_go_by_name > 0)
    fprintf (out, "files of the sysroot or search path accepted by name "
             "(no build-id recorded): %zu\n", st_hashmap_size (by_name) + let_go_by_name);
  st_hashmap_free (by_name);
  if (opts->arch != NULL)
    fprintf (out, "architecture unwound: %s\n", st_regs_arch_name (opts->arch));
  else
    for (unsigned i = 0; i < n_unwinders; i++)
      if (st_unwinder_arch (unwinders[i]) != NULL)
        {
          fprintf (out, "architecture unwound: %s (from the files' ELF headers: the "
                   "recording named none when its reading began)\n",
                   st_regs_arch_name (st_unwinder_arch (unwinders[i])));
          break;
        }
  /* Root's run against what users planted: what was refused, and what the
     container metadata cost.  */
  st_untrusted_print_summary (out);
  if (opts->debuginfod != NULL)
    st_debuginfod_print_summary (opts->debuginfod, out);
  if (opts->ns_client != NULL)
    st_ns_client_print_summary (opts->ns_client, out);
}

const uint32_t ST_STACK_FIT_SIZES[ST_STACK_FIT_N] = { 2048, 4096, 8192, 16384, 32768, 65528 };

/* Which stack copy sizes would have unwound SAMPLE as far as U goes.  */
void
st_session_count_stack_needed (struct st_stats *st, const struct st_sample *sample,
                               const struct st_unwound *u)
{
  if (sample->stack_size == 0 || u->stop == ST_STOP_NOT_UNWOUND
      || u->stop == ST_STOP_NO_USER_STACK)
    return;
  st->stack_samples++;
  if (sample->stack_size > st->stack_copy_max)
    st->stack_copy_max = sample->stack_size;
  if (u->stop == ST_STOP_STACK_EXHAUSTED)
    {
      st->stack_exhausted++;
      return;
    }
  for (int i = 0; i < ST_STACK_FIT_N; i++)
    if (u->stack_needed <= ST_STACK_FIT_SIZES[i])
      st->stack_fits[i]++;
}
