/* eu-stacktrace: turns user-space stack samples into call chains.
 *
 * One run for every kind of input: the source is opened (a recording, or
 * live sampling), then the output and the session that feeds it, the
 * source runs into the session, says what it skipped, and the output is
 * closed with the run's status.  Options: options.c.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/fd-limit.h"
#include "basic/log.h"
#include "basic/procfs.h"
#include "basic/sigbus-guard.h"
#include "basic/why.h"
#include "container/container.h"
#include "core/input/input.h"
#include "core/input/source-live.h"
#include "core/input/source-perf.h"
#include "core/input/source.h"
#include "core/options.h"
#include "core/output/output-file.h"
#include "core/output/sink.h"
#include "core/resolve/ns-client.h"
#include "core/resolve/sysroot.h"
#include "core/session.h"
#include "basic/signals.h"
#include "debuginfod/debuginfod.h"

/* A malformed input names its byte offset; a source that knows what
   failed says it; else the input and the errno.  */
static int
report_source_error (const char *input, int r, const struct st_why *why)
{
  if (r == -EBADMSG || r == -ENOTSUP)
    {
      st_error ("%s: byte offset %" PRIu64 ": %s", why->input != NULL ? why->input : input,
                why->offset, why->text);
      return EXIT_BAD_INPUT;
    }
  if (why->text[0] != '\0')
    st_error ("%s", why->text);
  else
    st_error ("%s: %s", input, strerror (-r));
  return EXIT_RUNTIME;
}

/* The exit status of a run that a third signal stopped at once (or a
   second one, on a Sysprof stream): what the shell shows for a process
   that the signal killed, though this one wrote what it had.  */
static int
forced_status (void)
{
  return 128 + st_signals_last ();
}

/* Where unwound samples go: the output file, its sink and the session
   that feeds it, the same for every kind of input.  */
struct output {
  struct st_output file;
  const struct st_sink_ops *sink_ops;
  struct st_sink *sink;
  struct st_session *session;
};

static int
output_open (const struct st_options *o, const struct st_regs_arch *arch, unsigned jobs,
             const char *default_format, struct output *out)
{
  memset (out, 0, sizeof *out);
  out->sink_ops = st_sink_lookup (o->format ? o->format : default_format);
  if (st_output_open (&out->file, o->output, out->sink_ops->whole_file) < 0)
    return EXIT_RUNTIME;
  struct st_sink_options sink_opts = o->sink;
  sink_opts.output_name = o->output;
  out->sink = out->sink_ops->new (out->file.file, &sink_opts);
  struct st_session_options sopts = {
    .max_frames = o->max_frames,
    .inline_frames = o->inline_frames,
    .unwinder_libdwfl = o->unwinder_libdwfl,
    .live = st_options_live (o),
    .arch = arch,
    .jobs = jobs,
    .debuginfod = o->debuginfod,
    .ns_client = o->ns_client,
    .sysroot = o->files,
    .containers = (unsigned) st_containers_parse_kinds (o->container),
    .mode = o->mode,
    .force_stop = st_signals_force_flag (),
  };
  int r = out->sink ? st_session_new (&sopts, out->sink, out->sink_ops, &out->session)
                    : -ENOMEM;
  if (r < 0)
    {
      if (r == -ENOMEM)
        st_error ("out of memory");
      else
        st_error ("cannot start the unwinding threads: %s", strerror (-r));
      return EXIT_RUNTIME;
    }
  return EXIT_OK;
}

/* True when the session's sink failed: the run ends, and output_close
   says why, once.  */
static bool
output_failed (const struct output *out)
{
  return out->session != NULL && st_session_output_error (out->session) < 0;
}

/* Ends the output; STATUS is the run's so far, the result the final one.
   A whole-file output replaces the -o file only when the run did not fail
   (a malformed input or a stop on a signal keep what was read).  */
static int
output_close (const struct st_options *o, struct output *out, int status)
{
  int write_error = 0;
  if (out->session != NULL)
    {
      int r = st_session_finish (out->session);
      write_error = st_session_output_error (out->session);
      if (write_error < 0)
        {
          st_error ("writing %s: %s", out->file.name, strerror (-write_error));
          status = EXIT_RUNTIME;
        }
      else if (r < 0 && status != EXIT_RUNTIME)
        {
          st_error ("unwinding: %s", strerror (-r));
          status = EXIT_RUNTIME;
        }
      const struct st_stats *st = st_session_stats (out->session);
      if (st->lost > 0)
        {
          uint64_t all = st->samples + st->dropped + st->lost;
          if (st_options_live (o))
            st_warning ("lost %" PRIu64 " samples (%.1f%% of %" PRIu64 "): the kernel's "
                        "sample ring was full when they came: eu-stacktrace did not read it in "
                        "time (it could not keep up, or was stopped or kept off the CPUs); "
                        "sample less often (-F, now %" PRIu64 " Hz), copy less stack (--stack-size, now "
                        "%" PRIu32 "), or give the ring more room (--mmap-pages, now %u)",
                        st->lost, 100.0 * st->lost / all, all, o->freq, o->stack_size,
                        o->mmap_pages ? o->mmap_pages : ST_LIVE_DEFAULT_MMAP_PAGES);
          else
            st_warning ("lost %" PRIu64 " samples (%.1f%% of %" PRIu64 "): the recording "
                        "says the kernel could not store them (perf record could not keep "
                        "up: record with a lower -F, a smaller --call-graph dwarf,SIZE or a "
                        "bigger -m; unwinding faster cannot bring them back)",
                        st->lost, 100.0 * st->lost / all, all);
        }
      if (st->dropped > 0)
        st_warning ("stopped at once: %" PRIu64 " samples read were not unwound",
                    st->dropped);
      if (o->stats || o->verbose > 0)
        st_session_print_summary (out->session, stderr);
    }
  st_session_free (out->session);
  if (out->sink != NULL)
    out->sink_ops->free (out->sink);
  bool keep = status != EXIT_RUNTIME && status != EXIT_USAGE;
  if (st_output_close (&out->file, keep, write_error < 0) < 0)
    status = EXIT_RUNTIME;
  return status;
}

/* What a run reads from: the source and what the run needs to know of it
   before it starts.  */
struct source {
  const struct st_source_ops *ops;
  void *state;
  struct st_input *in;              /* a recording's input; NULL live */
  const char *name;                 /* for messages */
  const struct st_regs_arch *arch;
  unsigned jobs;                    /* unwinding threads */
  const char *default_format;
  struct st_live_options live;
};

static void
source_close (struct source *s)
{
  if (s->ops != NULL && s->state != NULL)
    s->ops->free (s->state);
  st_input_free (s->in);
}

/* A recording: a file, a pipe or a stream, whichever format it is.  */
static int
source_open_input (const struct st_options *o, struct source *s)
{
  const char *input_path = o->input;
  if (input_path == NULL)
    input_path = isatty (STDIN_FILENO) ? "perf.data" : "-";

  int r = st_input_open (input_path, &s->in);
  if (r == -EISDIR)
    {
      /* perf record --threads writes a directory: its header file is
         "data", which names the others (source-perf.h).  */
      struct st_why why;
      st_why_clear (&why);
      r = st_perf_source_open_dir (input_path, &s->in, &why);
      if (r < 0)
        {
          st_error ("%s", why.text[0] ? why.text : strerror (-r));
          return EXIT_RUNTIME;
        }
    }
  if (r < 0)
    {
      st_error ("cannot open %s: %s", input_path, strerror (-r));
      return EXIT_RUNTIME;
    }
  s->name = st_input_name (s->in);
  const uint8_t *magic;
  ssize_t got = st_input_peek (s->in, 8, &magic);
  if (got < 0)
    {
      st_error ("%s: %s", s->name, strerror (-got));
      return EXIT_RUNTIME;
    }
  const struct st_source_ops *ops = st_source_detect (magic, got);
  if (ops == NULL)
    {
      st_error ("%s: byte offset 0: not %s (%s)", s->name, st_source_names (),
                got == 0 ? "the input is empty" : "unknown magic");
      return EXIT_BAD_INPUT;
    }

  struct st_why why;
  st_why_clear (&why);
  r = ops->open (s->in, &s->state, &why);
  if (r < 0)
    return report_source_error (s->name, r, &why);
  s->ops = ops;

  /* A recording that names no architecture (old perf, perf pipes without
     HEADER_ARCH, Sysprof streams) is unwound as its files' ELF headers
     say, never as this machine: s->arch stays NULL.  */
  const char *arch_name = ops->arch (s->state);
  s->arch = arch_name != NULL ? st_regs_arch_lookup (arch_name) : NULL;
  if (s->arch == NULL && arch_name != NULL)
    {
      st_error ("%s: recorded on %s, which this build cannot unwind: %s", s->name,
                arch_name, st_regs_arch_unsupported_reason (arch_name));
      return EXIT_BAD_INPUT;
    }
  s->jobs = o->jobs ? o->jobs : st_session_default_jobs ();
  /* As elfutils' eu-stacktrace: a Sysprof stream gives a Sysprof capture. */
  s->default_format = ops == &st_source_sysprof ? "sysprof" : "text";
  return EXIT_OK;
}

static void
prepare_ns_helper (void *client)
{
  st_ns_client_prepare (client);
}

/* Whether a live run will likely ask the namespace helper, so that it is
   started beside the sampling (its start, 10-70 ms of setting up its
   processes, then makes no request wait): as root (whose helper opens
   any process's files), with the whole machine or a command (which may
   start containers), or processes one of which is in a container.  */
static bool
live_needs_ns_helper (const struct st_options *o)
{
  if (o->ns_client == NULL || geteuid () != 0)
    return false;
  if (o->all_cpus || o->command != NULL)
    return true;
  for (size_t i = 0; i < o->n_pids; i++)
    if (st_proc_in_other_mount_namespace (o->pids[i]))
      return true;
  return false;
}

/* Live sampling: a command, processes, or the whole machine.  */
static int
source_open_live (const struct st_options *o, struct source *s)
{
  s->arch = st_regs_arch_lookup (NULL);
  if (s->arch == NULL)
    {
      st_error ("live sampling is not supported on this architecture");
      return EXIT_RUNTIME;
    }
  s->live = (struct st_live_options) {
    .command = o->command,
    .command_env = o->command_env,
    .pids = o->pids,
    .n_pids = o->n_pids,
    .all_cpus = o->all_cpus,
    .event = o->event,
    .freq = o->freq,
    .period = o->period,
    .stack_size = o->stack_size,
    .kernel = o->kernel,
    .record_path = o->record,
    .mmap_pages = o->mmap_pages,
    .arch = s->arch,
    .force_stop = st_signals_force_flag (),
    .stats = o->stats || o->verbose > 0,
    .set_child = st_signals_set_child,
    .reset_for_exec = st_signals_reset_for_exec,
    .sampling = live_needs_ns_helper (o) ? prepare_ns_helper : NULL,
    .sampling_arg = o->ns_client,
  };
  /* A whole-machine run keeps memory for each process it unwinds (its
     Dwfl, the debug sections libdw decompresses for it) and frees it when
     the process goes.  glibc's adaptive threshold would serve those big
     blocks from the heap after the first free, where they fragment it and
     stay: a fixed threshold gives them back to the system.  */
  mallopt (M_MMAP_THRESHOLD, 256 * 1024);
  if (st_live_source_new (&s->live, (struct st_live_source **) &s->state) < 0)
    {
      st_error ("out of memory");
      return EXIT_RUNTIME;
    }
  s->ops = &st_source_live;
  s->name = "the sample buffer";
  /* One unwinding thread keeps up with sampling at any sane rate and costs
     the least CPU: the point of live profiling is to disturb little.  */
  s->jobs = o->jobs ? o->jobs : 1;
  s->default_format = "text";
  return EXIT_OK;
}

/* The cost of live profiling, against what was profiled (cpu-clock periods
   are nanoseconds of sampled CPU time).  */
static void
print_overhead (const struct st_options *o, const struct rusage *before,
                const struct st_session *session)
{
  struct rusage after;
  getrusage (RUSAGE_SELF, &after);
  double self = (after.ru_utime.tv_sec - before->ru_utime.tv_sec)
                + (after.ru_stime.tv_sec - before->ru_stime.tv_sec)
                + ((after.ru_utime.tv_usec - before->ru_utime.tv_usec)
                   + (after.ru_stime.tv_usec - before->ru_stime.tv_usec)) / 1e6;
  const struct st_stats *st = st_session_stats (session);
  if ((o->stats || o->verbose > 0) && o->event == ST_LIVE_CPU_CLOCK && st->period_sum > 0)
    fprintf (stderr, "profiler CPU time: %.3f s for %.3f s of sampled CPU time "
             "(overhead %.2f%%)\n", self, st->period_sum / 1e9,
             100.0 * self / (st->period_sum / 1e9));
  /* Everything read was unwound by now: the run's peak (VmHWM).  */
  if (o->stats || o->verbose > 0)
    fprintf (stderr, "profiler peak RSS: %.1f MB\n", after.ru_maxrss / 1024.0);
}

static int
run (const struct st_options *o)
{
  bool live = st_options_live (o);
  if (live && o->input != NULL)
    {
      st_error ("-i reads a recording; -p, -a and a command sample live: choose one");
      return EXIT_USAGE;
    }
  struct source s = { 0 };
  int status = live ? source_open_live (o, &s) : source_open_input (o, &s);
  if (status != EXIT_OK)
    {
      source_close (&s);
      return status;
    }

  volatile sig_atomic_t *stop = st_signals_stop_flag ();
  struct output out;
  status = output_open (o, s.arch, s.jobs, s.default_format, &out);
  if (status == EXIT_OK)
    {
      struct rusage before;
      getrusage (RUSAGE_SELF, &before);
      /* From here on, a stop ends a read that waits on a pipe (a source
         opening its input reads what it must, whatever comes).  */
      if (s.in != NULL)
        {
          st_input_set_interrupt (s.in, stop);
          st_session_hold_input (out.session, s.in);
        }
      struct st_why why;
      st_why_clear (&why);
      int r = s.ops->run (s.state, st_session_handle_event, out.session, stop, &why);
      if (output_failed (&out))
        status = EXIT_RUNTIME;   /* the output's error, not the input's */
      else if (r == -ECANCELED)
        {
          st_warning ("interrupted again: the stream was not read to its end");
          status = forced_status ();
        }
      else if (r == -EINTR || (r == 0 && *stop && !s.ops->endless))
        st_warning ("interrupted: the input was not read to its end");
      else if (r < 0)
        status = report_source_error (s.name, r, &why);
      if (status == EXIT_OK && *st_signals_force_flag ())
        status = forced_status ();
      if (s.ops->endless)
        {
          /* What live profiling cost includes unwinding the last samples. */
          if (status != EXIT_RUNTIME)
            st_session_finish (out.session);
          print_overhead (o, &before, out.session);
        }
      if (s.ops->report != NULL)
        s.ops->report (s.state);
    }
  status = output_close (o, &out, status);
  source_close (&s);
  return status;
}

/* The environment as we were given it, for the command of -- CMD, which
   starts after the debuginfod client has added its variables to ours
   (debuginfod/env.c) and may start while an unwinding thread swaps their
   values.  setenv replaces or adds pointers in the array and never
   changes a string, nor frees one: a copy of the array keeps them.  */
static int
command_env_save (struct st_options *o)
{
  if (o->command == NULL)
    return 0;
  size_t n = 0;
  while (environ[n] != NULL)
    n++;
  o->command_env = malloc ((n + 1) * sizeof *o->command_env);
  if (o->command_env == NULL)
    return -ENOMEM;
  memcpy (o->command_env, environ, (n + 1) * sizeof *o->command_env);
  return 0;
}

/* debuginfod is on when --debuginfod or DEBUGINFOD_URLS names servers,
   and --no-debuginfod is not given.  Before any thread starts: the client
   prepares the environment that libdebuginfod reads.  */
static int
debuginfod_start (struct st_options *o)
{
  const char *urls = o->debuginfod_urls ? o->debuginfod_urls : getenv ("DEBUGINFOD_URLS");
  if (o->no_debuginfod || urls == NULL || urls[strspn (urls, " \t")] == '\0')
    return EXIT_OK;
  struct st_debuginfod_options dopts = {
    .urls = urls,
    .timeout = o->debuginfod_timeout,
    .budget = o->debuginfod_budget,
    .symbols = o->debuginfod_symbols,
    .progress = isatty (STDERR_FILENO),
    .stop_now = st_signals_force_flag (),
  };
  if (st_debuginfod_new (&dopts, &o->debuginfod) < 0)
    {
      st_error ("cannot start the debuginfod client");
      return EXIT_RUNTIME;
    }
  st_info ("debuginfod: %s (timeout %u s, budget %u s)", urls, o->debuginfod_timeout,
           o->debuginfod_budget);
  return EXIT_OK;
}

int
main (int argc, char **argv)
{
  /* Before anything that takes time: a signal that finds the default
     action loses what is buffered and leaves a cut file.  */
  if (st_signals_install () < 0)
    {
      st_error ("cannot install the signal handlers: %m");
      return EXIT_RUNTIME;
    }
  /* Descriptors for every file the profiled processes map (fd-limit.h).  */
  st_fd_limit_raise ();
  /* A file libelf maps that someone cuts short must not end the run:
     its missing pages read as zeros (basic/sigbus-guard.h).  */
  if (st_sigbus_guard () < 0)
    {
      st_error ("cannot install the SIGBUS handler: %m");
      return EXIT_RUNTIME;
    }
  struct st_options o;
  int status = st_options_parse (&o, argc, argv);
  if (status != 0)
    return status;

  st_log_set_level (o.verbose >= 2 ? ST_LOG_DEBUG : o.verbose == 1 ? ST_LOG_INFO : ST_LOG_WARNING);
  elf_version (EV_CURRENT);
  if (command_env_save (&o) < 0)
    {
      st_error ("out of memory");
      st_options_free (&o);
      return EXIT_RUNTIME;
    }
  status = debuginfod_start (&o);
  /* Connected (or spawned) at the first file that needs it.  */
  int r = st_ns_client_new (o.ns_helper, &o.ns_client);
  if (r < 0 && status == EXIT_OK)
    {
      st_error ("--ns-helper %s: %s", o.ns_helper, strerror (-r));
      status = EXIT_RUNTIME;
    }
  struct st_why why = { 0 };
  r = st_sysroot_new (o.sysroot, o.search_path, &o.files, &why);
  if (r < 0 && status == EXIT_OK)
    {
      st_error ("%s: %s", why.text[0] ? why.text : "--sysroot", strerror (-r));
      status = EXIT_USAGE;
    }
  if (status == EXIT_OK)
    status = run (&o);
  if (st_sigbus_zero_pages () > 0)
    st_warning ("%" PRIu64 " pages of mapped files read as zeros: a file was cut short, or could "
                "not be read, while it was used; symbols and unwinding through it may be wrong",
                st_sigbus_zero_pages ());
  st_sysroot_free (o.files);
  st_ns_client_free (o.ns_client);
  st_debuginfod_free (o.debuginfod);
  st_options_free (&o);
  return status;
}
