/* A mapped input's guard against SIGBUS (see input-sigbus.c).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Installs the handler (again, if another replaced it): from then on a
   SIGBUS for a page past the end of any mapped file (BUS_ADRERR: a file
   cut short under us, or an I/O error) maps a page of zeros over it and
   is counted, rather than ending the process.  Returns 0 or -errno.  */
int st_sigbus_guard (void);
/* How many such pages outside watched inputs read as zeros.  */
uint64_t st_sigbus_elsewhere (void);

/* Watches [ADDR, ADDR + LEN): a SIGBUS in it (the file cut short, or a
   page that could not be read) maps a page of zeros over the fault and is
   noted, rather than ending the process.  Returns 0, or -ENOSPC when
   every slot is taken (then do not map), or -errno from sigaction.  */
int st_sigbus_watch (void *addr, size_t len);
/* Stops watching the range that starts at ADDR.  */
void st_sigbus_unwatch (void *addr);
/* True once a SIGBUS was caught in the range that starts at ADDR: its
   bytes can no longer be trusted.  */
bool st_sigbus_caught (void *addr);
