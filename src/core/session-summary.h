/* The end-of-run summary and the counts only it needs, for session.c
   only.  */
#pragma once

#include <stdio.h>

#include "core/session.h"
#include "core/unwind/unwinder.h"

/* Prints ST, then the answers of the N_UNWINDERS unwinders' resolvers
   (a file counted once, whichever thread found it), then the counts of
   the services in OPTS (debuginfod, the namespace helper).  */
void st_session_summary_print (FILE *out, const struct st_stats *st,
                               struct st_unwinder *const *unwinders, unsigned n_unwinders,
                               struct st_jit_budget *jit_budget,
                               const struct st_session_options *opts);

/* Counts, for --stats, which stack copy sizes would have unwound SAMPLE as
   far as U goes.  */
void st_session_count_stack_needed (struct st_stats *st, const struct st_sample *sample,
                                    const struct st_unwound *u);
