/* The unprivileged side of the helper: the only process that reads what
 * the client sends.
 *
 * It holds no capability, runs as nobody (or as the user who spawned the
 * helper), may open no file at all (seccomp allows no open, openat or
 * openat2) and write none (Landlock).  It decodes each request
 * (protocol.h), answers malformed ones itself, turns the others into one
 * fixed operation for the opener (opener.h), and encodes the opener's
 * result as the reply.  A client that sends nothing for IDLE_TIMEOUT
 * seconds is hung up on, so that idle connections do not hold the
 * service's slots (slots.h); the client reconnects when it needs to.  */
#pragma once

/* Serves the client on CLIENT_SOCK through the opener on OPENER_SOCK until
   the client hangs up or stays idle for IDLE_TIMEOUT seconds (0: never);
   then exits.  */
void st_parser_run (int client_sock, int opener_sock, unsigned idle_timeout)
  __attribute__ ((noreturn));
