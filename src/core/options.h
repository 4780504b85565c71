/* eu-stacktrace's command line: the options, their defaults, and their
 * parser (argp, whose --help is the manual in brief).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/input/source-live.h"
#include "core/output/sink.h"
#include "core/session.h"

/* Exit statuses, as elfutils' eu-stacktrace defined them.  */
enum {
  EXIT_OK = 0,
  EXIT_RUNTIME = 1,     /* cannot open, read or write */
  EXIT_BAD_INPUT = 2,   /* malformed or unsupported input */
  EXIT_USAGE = 64,      /* EX_USAGE */
};

struct st_options {
  const char *input;
  const char *output;
  const char *format;
  size_t max_frames;
  bool inline_frames;
  bool unwinder_libdwfl;        /* --unwinder=libdwfl */
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
  /* The environment we were given, which the command is given: the
     debuginfod client adds variables to ours (main.c).  */
  char **command_env;
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

/* Fills O with the defaults and what ELFUTILS_STACKTRACE_VERBOSE says, then
   with ARGV.  0, or EXIT_USAGE when argp has said what is wrong.  */
int st_options_parse (struct st_options *o, int argc, char **argv);
/* True when the run samples live (a COMMAND, -p or -a) rather than reads.  */
bool st_options_live (const struct st_options *o);
void st_options_free (struct st_options *o);
