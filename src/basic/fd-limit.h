/* The descriptor limit (RLIMIT_NOFILE): raised at start, given back to the
 * commands we start, and said once when it is reached anyway.
 *
 * eu-stacktrace keeps a descriptor for every ELF file a live process maps
 * (libdwfl reads them as the samples come), so a whole desktop (-a: every
 * flatpak with its own runtime) can need thousands, and the soft limit a
 * shell gets on systemd machines is 1024.  As systemd advises for programs
 * that need many descriptors and use no select(), the soft limit is raised
 * to the hard one at start, and put back in a command we start (it may use
 * select(), whose sets end at 1024).  Past the hard limit an open fails with
 * EMFILE (ENFILE: the whole system's table), and the file would be reported
 * like any missing one: st_fd_limit_check says once, on stderr, what ran
 * out and how to raise it.  */
#pragma once

/* Raises the soft limit to the hard one (at most the kernel's
   fs.nr_open), remembering the soft limit it had.  Call once, first thing
   in main, before any thread starts.  */
void st_fd_limit_raise (void);

/* In a child about to exec a command: the soft limit it had before
   st_fd_limit_raise.  Async-signal-safe (setrlimit only).  */
void st_fd_limit_restore (void);

/* ERR (a positive errno) from opening PATH (NULL: no name to give):
   when it says the process or the system is out of descriptors, warns the
   first time in the run.  Returns ERR.  Thread-safe.  */
int st_fd_limit_check (int err, const char *path);
