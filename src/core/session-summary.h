/* The end-of-run summary, for session.c only.  */
#pragma once

#include <stdio.h>

#include "core/session.h"
#include "core/unwind/unwinder.h"

/* Prints ST, then the answers of the N_UNWINDERS unwinders' resolvers
   (a file counted once, whichever thread found it), then the counts of
   the services in OPTS (debuginfod, the namespace helper).  */
void st_session_summary_print (FILE *out, const struct st_stats *st,
                               struct st_unwinder *const *unwinders, unsigned n_unwinders,
                               const struct st_session_options *opts);
