/* The command line: argp's option table, --help's text, and the checks
 * of each value (a bad one is a usage error, exit status 64).  */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/options.h"
#include "core/resolve/demangle.h"
#include "core/resolve/ns-client.h"
#include "ns-helper/protocol.h"


enum {
  OPT_INLINE = 0x100,
  OPT_MAX_FRAMES,
  OPT_UNWINDER,
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
  OPT_DEMANGLE,
  OPT_NO_DEMANGLE,
  OPT_SYSROOT,
  OPT_SEARCH_PATH,
};

static const struct argp_option option_table[] = {
  { NULL, 0, NULL, 0, "Input and output:", 1 },
  { "input", 'i', "FILE", 0,
    "Read samples from FILE: a perf.data file, or the directory perf record --threads "
    "writes, a Sysprof capture, or `-' for a pipe (perf record -o -) or FIFO. "
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
    "Bytes of user stack copied per sample (default 16384, at most 65528): raise it when "
    "unwinds stop with `stack copy exhausted' (--stats says which size would have sufficed)", 0 },
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
  { "unwinder", OPT_UNWINDER, "KIND", 0,
    "cache (default): unwind samples whose every step has simple CFI rules (CFA = register "
    "+ offset, registers saved at CFA + offset) from rules taken once per pc range from "
    "libdw, and any other sample with libdwfl, with the same output; libdwfl: every sample "
    "with libdwfl (the reference). --stats says which stepped how many frames", 0 },
  { "demangle", OPT_DEMANGLE, "STYLE", OPTION_ARG_OPTIONAL,
    "Show C++, Rust and OCaml function names demangled, as perf does (the default): "
    "short (the default) without parameter lists, full with them (as perf -v)", 0 },
  { "no-demangle", OPT_NO_DEMANGLE, NULL, 0,
    "Show function names as the symbol tables spell them (mangled)", 0 },
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
  "that could not be found), `no unwind info' (no .eh_frame or .debug_frame), `frame "
  "pointer chain ended' (frames without CFI walked by frame pointer). --stats says which "
  "stack copy would have sufficed for what share of the samples.\n"
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
parse_pids (const char *arg, struct st_options *o)
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

/* ARG as a whole number from MIN to MAX, else a usage error that says WANTS
   (the option and what it takes).  */
static uint64_t
parse_number (struct argp_state *state, const char *arg, uint64_t min, uint64_t max,
              const char *wants)
{
  char *end;
  errno = 0;
  unsigned long long n = strtoull (arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || n < min || n > max)
    argp_error (state, "%s, not `%s'", wants, arg);
  return n;
}

/* The options that only store their argument, or true, in struct
   st_options: where, and for a number its range and what a usage error
   says.  */
enum store_kind { STORE_STRING, STORE_TRUE, STORE_UNSIGNED, STORE_SIZE, STORE_U64 };
#define FIELD(name) offsetof (struct st_options, name)
static const struct store {
  int key;
  enum store_kind kind;
  size_t offset;
  uint64_t min, max;
  const char *wants;
} stores[] = {
  { 'i', STORE_STRING, FIELD (input), 0, 0, NULL },
  { 'o', STORE_STRING, FIELD (output), 0, 0, NULL },
  { OPT_INLINE, STORE_TRUE, FIELD (inline_frames), 0, 0, NULL },
  { OPT_SYSROOT, STORE_STRING, FIELD (sysroot), 0, 0, NULL },
  { OPT_SEARCH_PATH, STORE_STRING, FIELD (search_path), 0, 0, NULL },
  { OPT_MAX_FRAMES, STORE_SIZE, FIELD (max_frames), 1, 65535,
    "--max-frames wants a number from 1 to 65535" },
  { 'j', STORE_UNSIGNED, FIELD (jobs), 1, 64, "--jobs wants a number from 1 to 64" },
  { 's', STORE_TRUE, FIELD (stats), 0, 0, NULL },
  { OPT_TITLE, STORE_STRING, FIELD (sink.title), 0, 0, NULL },
  { OPT_WIDTH, STORE_UNSIGNED, FIELD (sink.width), 200, 100000,
    "--width wants a number of pixels from 200 to 100000" },
  { OPT_REVERSE, STORE_TRUE, FIELD (sink.reverse), 0, 0, NULL },
  { 'a', STORE_TRUE, FIELD (all_cpus), 0, 0, NULL },
  { 'c', STORE_U64, FIELD (period), 1, UINT64_MAX, "--period wants a positive number" },
  { OPT_KERNEL, STORE_TRUE, FIELD (kernel), 0, 0, NULL },
  { OPT_RECORD, STORE_STRING, FIELD (record), 0, 0, NULL },
  { OPT_DEBUGINFOD, STORE_STRING, FIELD (debuginfod_urls), 0, 0, NULL },
  { OPT_NO_DEBUGINFOD, STORE_TRUE, FIELD (no_debuginfod), 0, 0, NULL },
  { OPT_DEBUGINFOD_TIMEOUT, STORE_UNSIGNED, FIELD (debuginfod_timeout), 1, 3600,
    "--debuginfod-timeout wants 1 to 3600 seconds" },
  { OPT_DEBUGINFOD_BUDGET, STORE_UNSIGNED, FIELD (debuginfod_budget), 0, 86400,
    "--debuginfod-budget wants 0 to 86400 seconds" },
  { OPT_DEBUGINFOD_SYMBOLS, STORE_TRUE, FIELD (debuginfod_symbols), 0, 0, NULL },
};
#undef FIELD

static void
store (const struct store *st, char *arg, struct argp_state *state, struct st_options *o)
{
  char *field = (char *) o + st->offset;
  switch (st->kind)
    {
    case STORE_STRING:
      *(const char **) field = arg;
      break;
    case STORE_TRUE:
      *(bool *) field = true;
      break;
    case STORE_UNSIGNED:
      *(unsigned *) field = parse_number (state, arg, st->min, st->max, st->wants);
      break;
    case STORE_SIZE:
      *(size_t *) field = parse_number (state, arg, st->min, st->max, st->wants);
      break;
    case STORE_U64:
      *(uint64_t *) field = parse_number (state, arg, st->min, st->max, st->wants);
      break;
    }
}

static error_t
parse_opt (int key, char *arg, struct argp_state *state)
{
  struct st_options *o = state->input;
  char *end;
  for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
    if (stores[i].key == key)
      {
        store (&stores[i], arg, state, o);
        return 0;
      }
  switch (key)
    {
    case 'f':
      if (st_sink_lookup (arg) == NULL)
        argp_error (state, "unknown output format `%s' (known: %s)", arg, st_sink_names ());
      o->format = arg;
      break;
    case OPT_DEMANGLE:
      {
        enum st_demangle_style style;
        if (st_demangle_parse_style (arg, &style) < 0)
          argp_error (state, "--demangle wants short or full, not `%s'", arg);
        st_demangle_set_style (style);
      }
      break;
    case OPT_NO_DEMANGLE:
      st_demangle_set_style (ST_DEMANGLE_NONE);
      break;
    case OPT_UNWINDER:
      if (strcmp (arg, "cache") == 0)
        o->unwinder_libdwfl = false;
      else if (strcmp (arg, "libdwfl") == 0)
        o->unwinder_libdwfl = true;
      else
        argp_error (state, "--unwinder wants cache or libdwfl, not `%s'", arg);
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
    case 'v':
      o->verbose++;
      break;
    case OPT_DEBUG:
      o->verbose = 2;
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
    case 'p':
      if (parse_pids (arg, o) < 0)
        argp_error (state, "--pid wants process ids separated by commas, not `%s'", arg);
      break;
    case 'F':
      o->freq = parse_number (state, arg, 1, 100000, "--freq wants a rate from 1 to 100000 Hz");
      o->period = 0;
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
      o->stack_size = parse_number (state, arg, 8, 65528, "--stack-size wants 8 to 65528 bytes")
                      & ~7ul;
      break;
    case OPT_MMAP_PAGES:
      {
        static const char wants[] = "--mmap-pages wants a power of two from 1 to 1048576";
        uint64_t pages = parse_number (state, arg, 1, 1ul << 20, wants);
        if ((pages & (pages - 1)) != 0)
          argp_error (state, "%s, not `%s'", wants, arg);
        o->mmap_pages = pages;
      }
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
      if (o->mmap_pages != 0 && (o->command != NULL || o->n_pids > 0 || o->all_cpus))
        {
          /* The kernel writes a sample whole or not at all, and one that
             is larger than the ring never fits: every sample would be
             dropped without a LOST record to say so.  A sample's most:
             the stack copy, registers (at most 64), a kernel call chain
             (at most 128 entries with -k) and its fixed fields.  */
          uint64_t ring = (uint64_t) o->mmap_pages * (uint64_t) getpagesize ();
          uint64_t most = (uint64_t) o->stack_size + 64 * 8 + 128 * 8 + 128;
          if (ring < most)
            {
              uint64_t pages = 1;
              while (pages * (uint64_t) getpagesize () < most)
                pages *= 2;
              argp_error (state, "--mmap-pages %u makes a ring of %" PRIu64 " KiB, which cannot "
                          "hold one sample of up to %" PRIu64 " bytes (--stack-size %u): "
                          "give at least %" PRIu64 " pages, or a smaller --stack-size",
                          o->mmap_pages, ring / 1024, most, (unsigned) o->stack_size, pages);
            }
        }
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

const char *argp_program_version = PACKAGE_NAME " " PACKAGE_VERSION;

int
st_options_parse (struct st_options *o, int argc, char **argv)
{
  *o = (struct st_options) {
    .max_frames = 256,
    .mode = ST_MODE_NAIVE,
    .container = "auto",
    .ns_helper = "auto",
    .sink = { .width = 1200, .min_width = 0.1 },
    .freq = 999,
    /* Measured (doc/eu-stacktrace.1, --stack-size): twice perf's 8192
       completes interpreters for 1.2x the per-sample cost; more fills the
       default ring and loses samples.  */
    .stack_size = 16384,
    .debuginfod_timeout = 5,
    .debuginfod_budget = 30,
  };
  /* As elfutils' eu-stacktrace read it: Sysprof cannot pass options.  */
  const char *env = getenv ("ELFUTILS_STACKTRACE_VERBOSE");
  if (env != NULL && (strcmp (env, "debug") == 0 || strcmp (env, "2") == 0))
    o->verbose = 2;
  else if (env != NULL && *env != '\0' && strcmp (env, "0") != 0 && strcmp (env, "false") != 0)
    o->verbose = 1;

  argp_err_exit_status = EXIT_USAGE;
  static const struct argp argp = { option_table, parse_opt, "[-- COMMAND [ARG...]]", doc,
                                    NULL, NULL, NULL };
  /* In order: the first non-option starts the command, whose own options
     must not be taken for ours.  */
  if (argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, o) != 0)
    return EXIT_USAGE;
  return 0;
}

bool
st_options_live (const struct st_options *o)
{
  return o->command != NULL || o->n_pids > 0 || o->all_cpus;
}

void
st_options_free (struct st_options *o)
{
  free (o->pids);
  o->pids = NULL;
  free (o->command_env);
  o->command_env = NULL;
}
