/* The guard against SIGBUS from the files libelf maps (see sigbus-guard.c).  */
#pragma once

#include <stdint.h>

/* Installs the handler (again, if another replaced it): from then on a
   SIGBUS for a page past the end of any mapped file (BUS_ADRERR: a file
   cut short under us, or an I/O error) maps a page of zeros over it and
   is counted, rather than ending the process.  Returns 0 or -errno.  */
int st_sigbus_guard (void);
/* How many pages of mapped files read as zeros so far.  */
uint64_t st_sigbus_zero_pages (void);
