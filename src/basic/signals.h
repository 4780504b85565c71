/* SIGINT and SIGTERM: how a run ends early without losing what it has.
 *
 * One handler for the whole run, installed first thing in main: a signal
 * that finds the default action kills the process with up to 64 KiB of
 * output still in stdio's buffer, which leaves a JSON file cut inside an
 * object or an unreadable profile.  Signals escalate by their count:
 *
 *   1st  stop reading the input: what was read is still unwound and written
 *        (a Sysprof stream is read to its end first, as Sysprof expects);
 *   2nd  absorbed, and said once on standard error: `timeout -s INT' signals
 *        the process and then its process group, a process-group kill reaches
 *        us twice through the profiled command, people press Ctrl-C twice;
 *        (a Sysprof stream stops being read now);
 *   3rd  stop at once: samples not unwound yet are dropped (and counted),
 *        the output is finished with what was unwound, the command killed.
 *
 * The first signal is also forwarded to the profiled command (live
 * `-- COMMAND'), unless the kernel sent it to the whole foreground process
 * group already (Ctrl-C on a terminal).  SIGPIPE is ignored: a closed
 * output pipe is a write error (EPIPE) that the run reports and ends on;
 * so is SIGXFSZ: a write past RLIMIT_FSIZE fails with EFBIG.  */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Installs the handlers; 0 or -errno.  */
int st_signals_install (void);

/* Set by every signal, to the number of signals so far: sources poll it
   and end their input.  A source may clear it to go on (a Sysprof stream,
   after the first), and tell a second request that came before it looked
   (both signals before the stream was opened) by the value 2.  */
volatile sig_atomic_t *st_signals_stop_flag (void);
/* Set from the third signal on: stop at once.  */
volatile sig_atomic_t *st_signals_force_flag (void);

/* How many signals arrived, and the last one (0: none).  */
unsigned st_signals_count (void);
int st_signals_last (void);

/* The profiled command that the first signal is forwarded to; 0: none.  */
void st_signals_set_child (pid_t pid);

/* Blocks SIGINT and SIGTERM in the calling thread (before creating threads
   that must leave them to the main thread, whose poll and reads they
   interrupt), saving the mask in OLD for st_signals_restore.  */
void st_signals_block (sigset_t *old);
void st_signals_restore (const sigset_t *old);

/* In a child between fork and exec: the dispositions a program expects
   (SIGPIPE and SIGXFSZ back to their defaults, nothing blocked).  Async-signal-safe.  */
void st_signals_reset_for_exec (void);
