/* eu-stacktrace: turns user-space stack samples into call chains.  */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/container.h"
#include "basic/why.h"
#include "core/resolve/sysroot.h"
#include "core/input/input.h"
#include "basic/log.h"
#include "core/resolve/ns-client.h"
#include "core/output/output-file.h"
#include "core/session.h"
#include "core/signals.h"
#include "core/output/sink.h"
#include "core/input/source-live.h"
#include "core/input/source.h"
#include "debuginfod/debuginfod.h"
#include "ns-helper/protocol.h"

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
  enum st_unwind_mode mode;     /* -m */
  const char *container;       /* --container */
  const char *ns_helper;       /* --ns-helper */
  struct st_ns_client *ns_client;  /* its client, unless none */
  bool stats;
  int verbose;
  struct st_sink_options sink;  /* --title, --width, --minwidth, --reverse */
  /* live sampling */
  char *const *command;
  pid_t *pids;
  size_t n_pids;
  bool all_cpus;
  enum st_live_event event;
  uint64_t freq, period;
  uint32_t stack_size;
  bool kernel;
  unsigned mmap_pages;
  const char *record;
  /* debuginfod */
  const char *debuginfod_urls;  /* --debuginfod, else $DEBUGINFOD_URLS */
  bool no_debuginfod;
  unsigned debuginfod_timeout, debuginfod_budget;
  bool debuginfod_symbols;
  struct st_debuginfod *debuginfod;  /* the client, when on */
  /* files of another machine */
  const char *sysroot, *search_path;  /* --sysroot (--symfs), --search-path */
  struct st_sysroot *files;           /* both, opened */
};

enum {
  OPT_INLINE = 0x100,
  OPT_MAX_FRAMES,
  OPT_DEBUG,
  OPT_TITLE,
  OPT_WIDTH,
  OPT_MINWIDTH,
  OPT_REVERSE,
  OPT_STACK_SIZE,
  OPT_KERNEL,
  OPT_RECORD,
  OPT_MMAP_PAGES,
  OPT_DEBUGINFOD,
  OPT_NO_DEBUGINFOD,
  OPT_DEBUGINFOD_TIMEOUT,
  OPT_DEBUGINFOD_BUDGET,
  OPT_DEBUGINFOD_SYMBOLS,
  OPT_CONTAINER,
  OPT_NS_HELPER,
  OPT_SYSROOT,
  OPT_SEARCH_PATH,
};

static const struct argp_option option_table[] = {
  { NULL, 0, NULL, 0, "Input and output:", 1 },
  { "input", 'i', "FILE", 0,
    "Read samples from FILE: a perf.data file, a Sysprof capture, or `-' for a pipe "
    "(perf record -o -) or FIFO. "
    "The format is recognized by its magic. Default: standard input when it is not a "
    "terminal, else ./perf.data", 0 },
  { "output", 'o', "FILE", 0,
    "Write to FILE (truncated) instead of standard output; folded, svg, pprof and "
    "sysprof output replaces FILE only when the run succeeds", 0 },
  { "format", 'f', "FORMAT", 0,
    "Output format: text (the default, but sysprof for a Sysprof input; one block per "
    "sample, like perf script), folded "
    "(collapsed stacks for flame graphs), json (JSON Lines, one object per sample), "
    "svg (an interactive flame graph), pprof (a gzip-compressed profile.proto for "
    "go tool pprof and other pprof readers), sysprof (a Sysprof capture)", 0 },
  { NULL, 0, NULL, 0, "Live sampling (instead of -i):", 2 },
  { "pid", 'p', "PID[,PID...]", 0, "Sample these running processes, all their threads", 0 },
  { "all-cpus", 'a', NULL, 0,
    "Sample the whole machine (with a COMMAND: while it runs)", 0 },
  { "freq", 'F', "HZ", 0, "Samples per second of CPU time (default 999)", 0 },
  { "period", 'c', "N", 0, "One sample every N events (instead of -F)", 0 },
  { "event", 'e', "EVENT", 0,
    "What to sample on: cpu-clock (default; a software timer that works everywhere) or "
    "cycles (hardware cycles, where the machine has them)", 0 },
  { "stack-size", OPT_STACK_SIZE, "BYTES", 0,
    "Bytes of user stack copied per sample (default 8192, at most 65528): raise it when "
    "unwinds stop with `stack copy exhausted'", 0 },
  { "mmap-pages", OPT_MMAP_PAGES, "PAGES", 0,
    "Pages of sample buffer per CPU, a power of two (default 512, 2 MiB): raise it when "
    "the kernel loses samples while the unwinder is busy (as perf record -m)", 0 },
  { "kernel", OPT_KERNEL, NULL, 0,
    "Also take samples while the CPU runs kernel code (their user-space call chain is "
    "shown; kernel frames are not symbolized)", 0 },
  { "record", OPT_RECORD, "FILE", 0,
    "Also keep the raw samples in FILE, a perf.data (pipe format) that perf script and "
    "perf report open, and that eu-stacktrace -i FILE unwinds again", 0 },
  { NULL, 0, NULL, 0, "Unwinding:", 3 },
  { "inline", OPT_INLINE, NULL, 0,
    "Also show inlined functions as frames (needs DWARF debug information)", 0 },
  { "max-frames", OPT_MAX_FRAMES, "N", 0, "Stop each unwind after N frames (default 256)", 0 },
  { "mode", 'm', "MODE", 0,
    "naive (default): unwind every sample; passthru: write the samples without unwinding "
    "them (with -f sysprof, as the stack-user frames that `eu-stacktrace -m naive' "
    "reads); none: read the input, write only the output's header", 0 },
  { "container", OPT_CONTAINER, "KIND", 0,
    "Where the sampled processes' files are: auto (default), none, podman, flatpak", 0 },
  { "ns-helper", OPT_NS_HELPER, "MODE", 0,
    "How to open the files of processes in other mount namespaces (containers, flatpak) "
    "when the host's path is wrong or missing: auto (default: the system service's "
    "socket " ST_NSH_SYSTEM_SOCKET " when it exists, else spawn), spawn "
    "(start eu-stacktrace-ns-helper with this program's privileges), the path of a "
    "helper's socket, or none", 0 },
  { "sysroot", OPT_SYSROOT, "DIR", 0,
    "The recording machine's files are under DIR (a recording from another machine or "
    "architecture): a mapped /lib/libc.so.6 is read from DIR/lib/libc.so.6, its symbolic "
    "links resolved inside DIR. Build-ids are still checked; a file the recording has no "
    "build-id for is accepted by its name (--stats counts them)", 0 },
  { "symfs", OPT_SYSROOT, "DIR", OPTION_ALIAS, NULL, 0 },
  { "search-path", OPT_SEARCH_PATH, "DIR[:DIR...]", 0,
    "Look for mapped files by their name (not their directory) in these directories, "
    "after the sysroot and before the recorded path: binaries copied from the recording "
    "machine. The same checks as --sysroot", 0 },
  { "jobs", 'j', "N", 0,
    "Unwind with N threads (default: for a recording, the CPUs available, at most 4; "
    "live, 1). The output is the "
    "same, in the same order, whatever N", 0 },
  { NULL, 0, NULL, 0, "Diagnostics:", 4 },
  { "stats", 's', NULL, 0,
    "Print a summary on standard error: samples read and unwound, frames, why unwinds "
    "stopped early, and how each file was found", 0 },
  { "verbose", 'v', NULL, 0,
    "Say more (repeat for debug messages); also ELFUTILS_STACKTRACE_VERBOSE=1", 0 },
  { "debug", OPT_DEBUG, NULL, 0, "Print debug messages", 0 },
  { NULL, 0, NULL, 0, "Flame graphs (-f svg):", 5 },
  { "title", OPT_TITLE, "TEXT", 0, "The title (default: Flame Graph)", 0 },
  { "width", OPT_WIDTH, "PIXELS", 0, "The width of the picture (default 1200)", 0 },
  { "minwidth", OPT_MINWIDTH, "PIXELS", 0,
    "Merge the frames narrower than this under each parent into one frame "
    "(default 0.1; 0: keep all)", 0 },
  { "reverse", OPT_REVERSE, NULL, 0,
    "Reverse each stack (the innermost frames under each process) and draw it as an "
    "icicle, from the top down: the callees on top, their callers below", 0 },
  { NULL, 0, NULL, 0, "Files by build-id from debuginfod servers:", 6 },
  { "debuginfod", OPT_DEBUGINFOD, "URLS", 0,
    "Ask these servers (separated by spaces; default: $DEBUGINFOD_URLS, and none when it "
    "is unset) for what is missing, by build-id: the executable of a mapping whose file "
    "is gone, and the separate debuginfo of a module without CFI (its .debug_frame and "
    "its symbols)", 0 },
  { "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0,
    "Never ask a debuginfod server, even with DEBUGINFOD_URLS set", 0 },
  { "debuginfod-timeout", OPT_DEBUGINFOD_TIMEOUT, "SECONDS", 0,
    "Give up a request that gets no answer for SECONDS (default 5); servers that did not "
    "answer are not asked again in the run", 0 },
  { "debuginfod-budget", OPT_DEBUGINFOD_BUDGET, "SECONDS", 0,
    "Spend at most SECONDS on debuginfod requests in the whole run (default 30); later "
    "requests are skipped, and --stats says so", 0 },
  { "debuginfod-symbols", OPT_DEBUGINFOD_SYMBOLS, NULL, 0,
    "Also fetch the debuginfo of stripped modules that have CFI, for their symbol tables "
    "(most distributions' libraries: more names, more downloads)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char doc[] =
  "Unwind user-space stack samples into call chains: sample a COMMAND, running "
  "processes (-p) or the whole machine (-a) live, or read a perf recording (-i)."
  "\v"
  "Sample live, unwinding as the run goes:\n"
  "  eu-stacktrace -- ./prog args                # a command and its children\n"
  "  eu-stacktrace -p 1234 -f folded -o app.folded   # until it exits or Ctrl-C\n"
  "  eu-stacktrace -a -F 99 -- sleep 10           # the whole machine for 10 s\n"
  "  eu-stacktrace --record run.data -- ./prog    # and keep the raw samples\n"
  "\n"
  "Or record with perf, then unwind:\n"
  "  perf record -e cpu-clock --call-graph dwarf -o perf.data -- ./prog\n"
  "  eu-stacktrace -i perf.data                  # perf script-like text\n"
  "  eu-stacktrace -i perf.data -f folded | flamegraph.pl > flame.svg\n"
  "  eu-stacktrace -i perf.data -f svg -o flame.svg    # open it in a browser\n"
  "  eu-stacktrace -i perf.data -f pprof -o cpu.pb.gz  # go tool pprof -top cpu.pb.gz\n"
  "  eu-stacktrace -i perf.data -f sysprof -o prog.syscap   # sysprof prog.syscap\n"
  "  eu-stacktrace -i stream.fifo -o out.syscap  # in Sysprof's pipeline\n"
  "  perf record -o - --call-graph dwarf -- ./prog | eu-stacktrace -i - -f json\n"
  "\n"
  "Frames show the raw pc (a return address for callers), the function and offset "
  "(callers are looked up at pc-1, the call instruction) and the file. An unwind that "
  "ends before the outermost frame says why: `stack copy exhausted' (record with a "
  "bigger --call-graph dwarf,SIZE), `no module' (code outside any file: JIT, or a file "
  "that could not be found), `no unwind info' (no .eh_frame or .debug_frame).\n"
  "\n"
  "Signals: the first SIGINT or SIGTERM ends the input (and is passed to the "
  "COMMAND); what was read is unwound and written.  A second is absorbed; a third "
  "stops at once, with what was unwound.\n"
  "\n"
  "Exit status: 0 success (also after a first signal), 1 cannot open/read/write "
  "(the output's path or `standard output' and why: No space left on device, "
  "Broken pipe), 2 malformed input (the message names the byte offset; every sample "
  "before it has been written), 64 usage error, 128+N stopped at once by signal N.";

static int
parse_pids (const char *arg, struct options *o)
{
  for (const char *p = arg; *p;)
    {
      char *end;
      errno = 0;
      long pid = strtol (p, &end, 10);
      if (errno != 0 || end == p || pid <= 0 || pid > INT32_MAX || (*end != ',' && *end != '\0'))
        return -EINVAL;
      pid_t *pids = realloc (o->pids, (o->n_pids + 1) * sizeof *pids);
      if (pids == NULL)
        return -ENOMEM;
      o->pids = pids;
      o->pids[o->n_pids++] = pid;
      p = *end == ',' ? end + 1 : end;
    }
  return o->n_pids > 0 ? 0 : -EINVAL;
}

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
    case 'm':
      if (strcmp (arg, "naive") == 0)
        o->mode = ST_MODE_NAIVE;
      else if (strcmp (arg, "passthru") == 0)
        o->mode = ST_MODE_PASSTHRU;
      else if (strcmp (arg, "none") == 0)
        o->mode = ST_MODE_NONE;
      else
        argp_error (state, "unknown mode `%s' (known: none, passthru, naive)", arg);
      break;
    case OPT_SYSROOT:
      o->sysroot = arg;
      break;
    case OPT_SEARCH_PATH:
      o->search_path = arg;
      break;
    case OPT_NS_HELPER:
      if (!st_ns_client_mode_valid (arg))
        argp_error (state, "--ns-helper wants auto, spawn, none or the path of a socket, "
                    "not `%s'", arg);
      o->ns_helper = arg;
      break;
    case OPT_CONTAINER:
      if (strcmp (arg, "auto") != 0 && strcmp (arg, "none") != 0
          && strcmp (arg, "podman") != 0 && strcmp (arg, "flatpak") != 0)
        argp_error (state, "unknown container kind `%s' (known: auto, none, podman, "
                    "flatpak)", arg);
      o->container = arg;
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
    case OPT_TITLE:
      o->sink.title = arg;
      break;
    case OPT_WIDTH:
      {
        errno = 0;
        unsigned long width = strtoul (arg, &end, 10);
        if (errno != 0 || *end != '\0' || width < 200 || width > 100000)
          argp_error (state, "--width wants a number of pixels from 200 to 100000, not `%s'", arg);
        o->sink.width = width;
      }
      break;
    case OPT_MINWIDTH:
      {
        errno = 0;
        double min_width = strtod (arg, &end);
        if (errno != 0 || end == arg || *end != '\0' || !(min_width >= 0 && min_width <= 1000))
          argp_error (state, "--minwidth wants a number of pixels from 0 to 1000, not `%s'", arg);
        o->sink.min_width = min_width;
      }
      break;
    case OPT_REVERSE:
      o->sink.reverse = true;
      break;
    case 'p':
      if (parse_pids (arg, o) < 0)
        argp_error (state, "--pid wants process ids separated by commas, not `%s'", arg);
      break;
    case 'a':
      o->all_cpus = true;
      break;
    case 'F':
      errno = 0;
      o->freq = strtoull (arg, &end, 10);
      if (errno != 0 || *end != '\0' || o->freq == 0 || o->freq > 100000)
        argp_error (state, "--freq wants a rate from 1 to 100000 Hz, not `%s'", arg);
      o->period = 0;
      break;
    case 'c':
      errno = 0;
      o->period = strtoull (arg, &end, 10);
      if (errno != 0 || *end != '\0' || o->period == 0)
        argp_error (state, "--period wants a positive number, not `%s'", arg);
      break;
    case 'e':
      if (strcmp (arg, "cpu-clock") == 0)
        o->event = ST_LIVE_CPU_CLOCK;
      else if (strcmp (arg, "cycles") == 0 || strcmp (arg, "cpu-cycles") == 0)
        o->event = ST_LIVE_CYCLES;
      else
        argp_error (state, "unknown event `%s' (known: cpu-clock, cycles)", arg);
      break;
    case OPT_STACK_SIZE:
      errno = 0;
      unsigned long size = strtoul (arg, &end, 10);
      if (errno != 0 || *end != '\0' || size < 8 || size > 65528)
        argp_error (state, "--stack-size wants 8 to 65528 bytes, not `%s'", arg);
      o->stack_size = size & ~7ul;
      break;
    case OPT_KERNEL:
      o->kernel = true;
      break;
    case OPT_MMAP_PAGES:
      {
        errno = 0;
        unsigned long pages = strtoul (arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || pages == 0 || pages > (1ul << 20)
            || (pages & (pages - 1)) != 0)
          argp_error (state, "--mmap-pages wants a power of two from 1 to 1048576, not `%s'",
                      arg);
        o->mmap_pages = pages;
      }
      break;
    case OPT_RECORD:
      o->record = arg;
      break;
    case OPT_DEBUGINFOD:
      o->debuginfod_urls = arg;
      break;
    case OPT_NO_DEBUGINFOD:
      o->no_debuginfod = true;
      break;
    case OPT_DEBUGINFOD_TIMEOUT:
      {
        errno = 0;
        unsigned long seconds = strtoul (arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || seconds == 0 || seconds > 3600)
          argp_error (state, "--debuginfod-timeout wants 1 to 3600 seconds, not `%s'", arg);
        o->debuginfod_timeout = seconds;
      }
      break;
    case OPT_DEBUGINFOD_BUDGET:
      {
        errno = 0;
        unsigned long seconds = strtoul (arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || seconds > 86400)
          argp_error (state, "--debuginfod-budget wants 0 to 86400 seconds, not `%s'", arg);
        o->debuginfod_budget = seconds;
      }
      break;
    case OPT_DEBUGINFOD_SYMBOLS:
      o->debuginfod_symbols = true;
      break;
    case ARGP_KEY_ARG:
      /* The command to profile: it and everything after it are its own.  */
      o->command = &state->argv[state->next - 1];
      state->next = state->argc;
      break;
    case ARGP_KEY_END:
      if (o->record != NULL && o->command == NULL && o->n_pids == 0 && !o->all_cpus)
        argp_error (state, "--record keeps the samples of live sampling: give a COMMAND, "
                    "-p or -a");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
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
output_open (const struct options *o, const struct st_regs_arch *arch, unsigned jobs,
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
    .arch = arch,
    .jobs = jobs,
    .debuginfod = o->debuginfod,
    .ns_client = o->ns_client,
    .sysroot = o->files,
    .containers = (unsigned) st_containers_parse_kinds (o->container),
    .mode = o->mode,
    .force_stop = st_signals_force_flag (),
  };
  out->session = out->sink ? st_session_new (&sopts, out->sink, out->sink_ops) : NULL;
  if (out->session == NULL)
    {
      st_error ("out of memory");
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
output_close (const struct options *o, struct output *out, int status)
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
          if (o->command != NULL || o->n_pids > 0 || o->all_cpus)
            st_warning ("lost %" PRIu64 " samples (%.1f%% of %" PRIu64 "): the kernel's "
                        "sample ring was full, the unwinder could not keep up; sample less "
                        "often (-F, now %" PRIu64 " Hz), copy less stack (--stack-size, now "
                        "%" PRIu32 "), or give the ring more room (--mmap-pages, now %u)",
                        st->lost, 100.0 * st->lost / all, all, o->freq, o->stack_size,
                        o->mmap_pages ? o->mmap_pages : ST_LIVE_DEFAULT_MMAP_PAGES);
          else
            st_warning ("lost %" PRIu64 " samples (%.1f%% of %" PRIu64 "): the recording "
                        "says the kernel could not store them (perf record could not keep "
                        "up)", st->lost, 100.0 * st->lost / all, all);
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

/* A recording: a file, a pipe or a stream, whichever format it is.  */
static int
run_input (const struct options *o)
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
  volatile sig_atomic_t *stop = st_signals_stop_flag ();
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
  struct output out = { 0 };
  int status;
  if (arch == NULL)
    {
      st_error ("%s: recorded on %s, which this build cannot unwind: %s", name,
                arch_name ? arch_name : "an unknown architecture",
                arch_name ? st_regs_arch_unsupported_reason (arch_name)
                          : "this machine has no register table");
      status = EXIT_BAD_INPUT;
    }
  else
    /* As elfutils' eu-stacktrace: a Sysprof stream gives a Sysprof capture. */
    status = output_open (o, arch, o->jobs ? o->jobs : st_session_default_jobs (),
                          source == &st_source_sysprof ? "sysprof" : "text", &out);
  if (status == EXIT_OK)
    {
      /* From here on, a stop ends a read that waits on a pipe (a source
         opening its input reads what it must, whatever comes).  */
      st_input_set_interrupt (in, stop);
      r = source->run (src, st_session_handle_event, out.session, stop, &err);
      if (output_failed (&out))
        status = EXIT_RUNTIME;   /* the output's error, not the input's */
      else if (r == -ECANCELED)
        {
          st_warning ("interrupted again: the stream was not read to its end");
          status = forced_status ();
        }
      else if (r == -EINTR || (r == 0 && *stop))
        st_warning ("interrupted: the input was not read to its end");
      else if (r < 0)
        status = report_source_error (name, r, &err);
      if (status == EXIT_OK && *st_signals_force_flag ())
        status = forced_status ();
      if (source->report != NULL)
        source->report (src);
    }
  status = output_close (o, &out, status);
  source->free (src);
  st_input_free (in);
  return status;
}

/* Live sampling: a command, processes, or the whole machine.  */
static int
run_live (const struct options *o)
{
  const struct st_regs_arch *arch = st_regs_arch_lookup (NULL);
  if (arch == NULL)
    {
      st_error ("live sampling is not supported on this architecture");
      return EXIT_RUNTIME;
    }
  struct st_live_options lopts = {
    .command = o->command,
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
    .arch = arch,
    .force_stop = st_signals_force_flag (),
  };
  /* A whole-machine run keeps memory for each process it unwinds (its
     Dwfl, the debug sections libdw decompresses for it) and frees it when
     the process goes.  glibc's adaptive threshold would serve those big
     blocks from the heap after the first free, where they fragment it and
     stay: a fixed threshold gives them back to the system.  */
  mallopt (M_MMAP_THRESHOLD, 256 * 1024);
  /* One unwinding thread keeps up with sampling at any sane rate and costs
     the least CPU: the point of live profiling is to disturb little.  */
  struct output out;
  int status = output_open (o, arch, o->jobs ? o->jobs : 1, "text", &out);
  struct st_live_stats lstats = { 0 };
  struct st_source_error err = { 0 };
  if (status == EXIT_OK)
    {
      struct rusage before;
      getrusage (RUSAGE_SELF, &before);
      int r = st_live_run (&lopts, st_session_handle_event, out.session,
                           st_signals_stop_flag (), &lstats, &err);
      if (output_failed (&out))
        status = EXIT_RUNTIME;   /* output_close says why */
      else if (r == -EBADMSG)
        status = report_source_error ("the sample buffer", r, &err);
      else if (r < 0)
        status = EXIT_RUNTIME;   /* st_live_run said why */
      else if (*st_signals_force_flag ())
        status = forced_status ();
      /* The cost of profiling, against what was profiled (cpu-clock
         periods are nanoseconds of sampled CPU time).  */
      if (status != EXIT_RUNTIME)
        st_session_finish (out.session);
      struct rusage after;
      getrusage (RUSAGE_SELF, &after);
      double self = (after.ru_utime.tv_sec - before.ru_utime.tv_sec)
                    + (after.ru_stime.tv_sec - before.ru_stime.tv_sec)
                    + ((after.ru_utime.tv_usec - before.ru_utime.tv_usec)
                       + (after.ru_stime.tv_usec - before.ru_stime.tv_usec)) / 1e6;
      const struct st_stats *st = st_session_stats (out.session);
      if ((o->stats || o->verbose > 0) && o->event == ST_LIVE_CPU_CLOCK && st->period_sum > 0)
        fprintf (stderr, "profiler CPU time: %.3f s for %.3f s of sampled CPU time "
                 "(overhead %.2f%%)\n", self, st->period_sum / 1e9,
                 100.0 * self / (st->period_sum / 1e9));
      if (lstats.sideband_lost > 0)
        st_warning ("the kernel lost %" PRIu64 " process records (maps, names, forks, exits): "
                    "their ring was full; samples of those processes may not unwind",
                    lstats.sideband_lost);
      if (o->stats || o->verbose > 0)
        fprintf (stderr, "threads gone without an exit record, evicted: %" PRIu64
                 " (%" PRIu64 " known at the end)\n", lstats.evicted, lstats.tracked);
      if (lstats.command_status > 0 && WIFEXITED (lstats.command_status))
        st_info ("%s exited with status %d", o->command[0], WEXITSTATUS (lstats.command_status));
    }
  return output_close (o, &out, status);
}

static int
run (const struct options *o)
{
  if (o->command != NULL || o->n_pids > 0 || o->all_cpus)
    {
      if (o->input != NULL)
        {
          st_error ("-i reads a recording; -p, -a and a command sample live: choose one");
          return EXIT_USAGE;
        }
      return run_live (o);
    }
  return run_input (o);
}

/* debuginfod is on when --debuginfod or DEBUGINFOD_URLS names servers,
   and --no-debuginfod is not given.  Before any thread starts: the client
   prepares the environment that libdebuginfod reads.  */
static int
debuginfod_start (struct options *o)
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
  o->debuginfod = st_debuginfod_new (&dopts);
  if (o->debuginfod == NULL)
    {
      st_error ("cannot start the debuginfod client: out of memory");
      return EXIT_RUNTIME;
    }
  st_info ("debuginfod: %s (timeout %u s, budget %u s)", urls, o->debuginfod_timeout,
           o->debuginfod_budget);
  return EXIT_OK;
}

const char *argp_program_version = PACKAGE_NAME " " PACKAGE_VERSION;

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
  struct options o = {
    .max_frames = 256,
    .mode = ST_MODE_NAIVE,
    .container = "auto",
    .ns_helper = "auto",
    .sink = { .width = 1200, .min_width = 0.1 },
    .freq = 999,
    .stack_size = 8192,
    .debuginfod_timeout = 5,
    .debuginfod_budget = 30,
  };
  /* As elfutils' eu-stacktrace read it: Sysprof cannot pass options.  */
  const char *env = getenv ("ELFUTILS_STACKTRACE_VERBOSE");
  if (env != NULL && (strcmp (env, "debug") == 0 || strcmp (env, "2") == 0))
    o.verbose = 2;
  else if (env != NULL && *env != '\0' && strcmp (env, "0") != 0 && strcmp (env, "false") != 0)
    o.verbose = 1;

  argp_err_exit_status = EXIT_USAGE;
  static const struct argp argp = { option_table, parse_opt, "[-- COMMAND [ARG...]]", doc,
                                    NULL, NULL, NULL };
  /* In order: the first non-option starts the command, whose own options
     must not be taken for ours.  */
  if (argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, &o) != 0)
    return EXIT_USAGE;

  st_log_set_level (o.verbose >= 2 ? ST_LOG_DEBUG : o.verbose == 1 ? ST_LOG_INFO : ST_LOG_WARNING);
  elf_version (EV_CURRENT);
  int status = debuginfod_start (&o);
  struct st_why why = { 0 };
  int r = st_sysroot_new (o.sysroot, o.search_path, &o.files, &why);
  if (r < 0 && status == EXIT_OK)
    {
      st_error ("%s: %s", why.text[0] ? why.text : "--sysroot", strerror (-r));
      status = EXIT_USAGE;
    }
  /* Connected (or spawned) at the first file that needs it.  */
  o.ns_client = st_ns_client_new (o.ns_helper);
  if (status == EXIT_OK)
    status = run (&o);
  st_ns_client_free (o.ns_client);
  st_debuginfod_free (o.debuginfod);
  st_sysroot_free (o.files);
  free (o.pids);
  return status;
}
