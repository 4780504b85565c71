/* The unprivileged side of the helper: the only process that reads what
 * the client sends.
 *
 * It holds no capability, runs as nobody (or as the user who spawned the
 * helper), may open no file at all (seccomp allows no open, openat or
 * openat2) and write none (Landlock).  It decodes each request
 * (protocol.h), answers malformed ones itself and turns the others into
 * one fixed operation for the opener (opener.h), which replies to the
 * client itself.  A client that sends nothing for IDLE_TIMEOUT seconds is
 * hung up on, so that idle connections do not hold the service's slots
 * (slots.h); the client reconnects when it needs to.  */
#pragma once

/* Before the sandbox: the idle timeout (0: none) on CLIENT_SOCK, as
   SO_RCVTIMEO.  Returns 0 or -errno.  */
int st_parser_set_idle_timeout (int client_sock, unsigned idle_timeout);

/* Serves the client on CLIENT_SOCK through the opener on OPENER_SOCK until
   the client hangs up or stays idle (st_parser_set_idle_timeout); then
   exits.  */
void st_parser_run (int client_sock, int opener_sock) __attribute__ ((noreturn));
