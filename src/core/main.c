/* eu-stacktrace: turns user-space stack samples into call chains.  */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/input.h"
#include "core/log.h"
#include "core/session.h"
#include "core/sink.h"
#include "core/source.h"

/* Exit statuses, as elfutils' eu-stacktrace defined them.  */
enum {
  EXIT_OK = 0,
  EXIT_RUNTIME = 1,     /* cannot open, read or write */
  EXIT_BAD_INPUT = 2,   /* malformed or unsupported input */
  EXIT_USAGE = 64,      /* EX_USAGE */
};

struct options {
  const char *input;
  const char *output;
  const char *format;
  size_t max_frames;
  bool inline_frames;
  unsigned jobs;
  bool stats;
  int verbose;
};

enum {
  OPT_INLINE = 0x100,
  OPT_MAX_FRAMES,
  OPT_DEBUG,
};

static const struct argp_option option_table[] = {
  { NULL, 0, NULL, 0, "Input and output:", 1 },
  { "input", 'i', "FILE", 0,
    "Read samples from FILE: a perf.data file, or `-' for a pipe (perf record -o -). "
    "The format is recognized by its magic. Default: standard input when it is not a "
    "terminal, else ./perf.data", 0 },
  { "output", 'o', "FILE", 0, "Write to FILE (truncated) instead of standard output", 0 },
  { "format", 'f', "FORMAT", 0,
    "Output format: text (default; one block per sample, like perf script), folded "
    "(collapsed stacks for flame graphs), json (JSON Lines, one object per sample)", 0 },
  { NULL, 0, NULL, 0, "Unwinding:", 2 },
  { "inline", OPT_INLINE, NULL, 0,
    "Also show inlined functions as frames (needs DWARF debug information)", 0 },
  { "max-frames", OPT_MAX_FRAMES, "N", 0, "Stop each unwind after N frames (default 256)", 0 },
  { "jobs", 'j', "N", 0,
    "Unwind with N threads (default: the CPUs available, at most 4). The output is the "
    "same, in the same order, whatever N", 0 },
  { NULL, 0, NULL, 0, "Diagnostics:", 3 },
  { "stats", 's', NULL, 0,
    "Print a summary on standard error: samples read and unwound, frames, why unwinds "
    "stopped early, and how each file was found", 0 },
  { "verbose", 'v', NULL, 0,
    "Say more (repeat for debug messages); also ELFUTILS_STACKTRACE_VERBOSE=1", 0 },
  { "debug", OPT_DEBUG, NULL, 0, "Print debug messages", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char doc[] =
  "Unwind the user-space stack samples of a perf recording into call chains."
  "\v"
  "Record with DWARF call graphs, then unwind:\n"
  "  perf record -e cpu-clock --call-graph dwarf -o perf.data -- ./prog\n"
  "  eu-stacktrace -i perf.data                  # perf script-like text\n"
  "  eu-stacktrace -i perf.data -f folded | flamegraph.pl > flame.svg\n"
  "  perf record -o - --call-graph dwarf -- ./prog | eu-stacktrace -i - -f json\n"
  "\n"
  "Frames show the raw pc (a return address for callers), the function and offset "
  "(callers are looked up at pc-1, the call instruction) and the file. An unwind that "
  "ends before the outermost frame says why: `stack copy exhausted' (record with a "
  "bigger --call-graph dwarf,SIZE), `no module' (code outside any file: JIT, or a file "
  "that could not be found), `no unwind info' (no .eh_frame or .debug_frame).\n"
  "\n"
  "Exit status: 0 success, 1 cannot open/read/write, 2 malformed input (the message "
  "names the byte offset; every sample before it has been written), 64 usage error.";

static error_t
parse_opt (int key, char *arg, struct argp_state *state)
{
  struct options *o = state->input;
  char *end;
  switch (key)
    {
    case 'i':
      o->input = arg;
      break;
    case 'o':
      o->output = arg;
      break;
    case 'f':
      if (st_sink_lookup (arg) == NULL)
        argp_error (state, "unknown output format `%s' (known: %s)", arg, st_sink_names ());
      o->format = arg;
      break;
    case OPT_INLINE:
      o->inline_frames = true;
      break;
    case OPT_MAX_FRAMES:
      errno = 0;
      unsigned long n = strtoul (arg, &end, 10);
      if (errno != 0 || *end != '\0' || n == 0 || n > 65535)
        argp_error (state, "--max-frames wants a number from 1 to 65535, not `%s'", arg);
      o->max_frames = n;
      break;
    case 'j':
      errno = 0;
      unsigned long jobs = strtoul (arg, &end, 10);
      if (errno != 0 || *end != '\0' || jobs == 0 || jobs > 64)
        argp_error (state, "--jobs wants a number from 1 to 64, not `%s'", arg);
      o->jobs = jobs;
      break;
    case 's':
      o->stats = true;
      break;
    case 'v':
      o->verbose++;
      break;
    case OPT_DEBUG:
      o->verbose = 2;
      break;
    case ARGP_KEY_ARG:
      argp_error (state, "unexpected argument `%s' (the input is given with -i)", arg);
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static volatile sig_atomic_t stop_requested;

/* The first Ctrl-C ends the input: what was read is still unwound and
   written.  The second one is not caught (SA_RESETHAND).  */
static void
on_interrupt (int sig)
{
  stop_requested = 1;
}

static void
install_signal_handlers (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
}

static int
report_source_error (const char *input, int r, const struct st_source_error *err)
{
  if (r == -EBADMSG || r == -ENOTSUP)
    {
      st_error ("%s: byte offset %" PRIu64 ": %s", input, err->offset, err->message);
      return EXIT_BAD_INPUT;
    }
  st_error ("%s: %s", input, strerror (-r));
  return EXIT_RUNTIME;
}

static int
run (const struct options *o)
{
  const char *input_path = o->input;
  if (input_path == NULL)
    input_path = isatty (STDIN_FILENO) ? "perf.data" : "-";

  struct st_input *in = NULL;
  int r = st_input_open (input_path, &in);
  if (r < 0)
    {
      st_error ("cannot open %s: %s", input_path, strerror (-r));
      return EXIT_RUNTIME;
    }
  const char *name = st_input_name (in);
  const uint8_t *magic;
  ssize_t got = st_input_peek (in, 8, &magic);
  if (got < 0)
    {
      st_error ("%s: %s", name, strerror (-got));
      st_input_free (in);
      return EXIT_RUNTIME;
    }
  const struct st_source_ops *source = st_source_detect (magic, got);
  if (source == NULL)
    {
      st_error ("%s: byte offset 0: not %s (%s)", name, st_source_names (),
                got == 0 ? "the input is empty" : "unknown magic");
      st_input_free (in);
      return EXIT_BAD_INPUT;
    }

  struct st_source_error err = { 0 };
  void *src = NULL;
  r = source->open (in, &src, &err);
  if (r < 0)
    {
      int status = report_source_error (name, r, &err);
      st_input_free (in);
      return status;
    }

  const char *arch_name = source->arch (src);
  const struct st_regs_arch *arch = st_regs_arch_lookup (arch_name);
  if (arch == NULL)
    {
      st_error ("%s: recorded on %s, which this build cannot unwind", name,
                arch_name ? arch_name : "an unknown architecture");
      source->free (src);
      st_input_free (in);
      return EXIT_BAD_INPUT;
    }

  FILE *out = stdout;
  if (o->output != NULL && strcmp (o->output, "-") != 0)
    {
      out = fopen (o->output, "we");
      if (out == NULL)
        {
          st_error ("cannot open %s for writing: %s", o->output, strerror (errno));
          source->free (src);
          st_input_free (in);
          return EXIT_RUNTIME;
        }
    }
  static char outbuf[1 << 16];
  setvbuf (out, outbuf, _IOFBF, sizeof outbuf);

  const struct st_sink_ops *sink_ops = st_sink_lookup (o->format);
  struct st_sink_options sink_opts = { .output_name = o->output };
  struct st_sink *sink = sink_ops->new (out, &sink_opts);
  struct st_session_options sopts = {
    .max_frames = o->max_frames,
    .inline_frames = o->inline_frames,
    .arch = arch,
    .jobs = o->jobs,
  };
  struct st_session *session = sink ? st_session_new (&sopts, sink, sink_ops) : NULL;
  int status = EXIT_OK;
  if (session == NULL)
    {
      st_error ("out of memory");
      status = EXIT_RUNTIME;
      goto out;
    }

  install_signal_handlers ();
  r = source->run (src, st_session_handle_event, session, &stop_requested, &err);
  int fr = st_session_finish (session);
  if (r < 0)
    status = report_source_error (name, r, &err);
  else if (fr < 0)
    {
      st_error ("writing %s: %s", o->output ? o->output : "standard output", strerror (-fr));
      status = EXIT_RUNTIME;
    }
  if (stop_requested)
    st_warning ("interrupted: the input was not read to its end");
  if (source->report != NULL)
    source->report (src);
  if (o->stats || o->verbose > 0)
    st_session_print_summary (session, stderr);

out:
  st_session_free (session);
  if (sink != NULL)
    sink_ops->free (sink);
  if (out != stdout)
    {
      if (fclose (out) != 0 && status == EXIT_OK)
        {
          st_error ("writing %s: %s", o->output, strerror (errno));
          status = EXIT_RUNTIME;
        }
    }
  else if (fflush (stdout) != 0 && status == EXIT_OK)
    status = EXIT_RUNTIME;
  source->free (src);
  st_input_free (in);
  return status;
}

const char *argp_program_version = PACKAGE_NAME " " PACKAGE_VERSION;

int
main (int argc, char **argv)
{
  struct options o = {
    .format = "text",
    .max_frames = 256,
    .jobs = st_session_default_jobs (),
  };
  const char *env = getenv ("ELFUTILS_STACKTRACE_VERBOSE");
  if (env != NULL && *env != '\0' && strcmp (env, "0") != 0)
    o.verbose = 1;

  argp_err_exit_status = EXIT_USAGE;
  static const struct argp argp = { option_table, parse_opt, NULL, doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return EXIT_USAGE;

  st_log_set_level (o.verbose >= 2 ? ST_LOG_DEBUG : o.verbose == 1 ? ST_LOG_INFO : ST_LOG_WARNING);
  elf_version (EV_CURRENT);
  return run (&o);
}
