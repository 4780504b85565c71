/* The address ranges of one Dwfl's modules, by file: whether a mapping's
 * module would overlap another module of the same file.
 *
 * A file mapped again elsewhere (V8's built-ins in node) gets no module
 * of its own when its range would overlap one of the file's modules at
 * another bias (process.c: report_mapping).  Asking every mapping of the
 * process made reporting quadratic: a user's process with 60,000
 * executable mappings of one small file kept root's `-a` profiler busy
 * for minutes.  The ranges a file's modules have do not overlap (that is
 * the rule), so each file keeps them sorted and one binary search
 * answers.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct st_module_spans;

/* NULL without memory.  */
struct st_module_spans *st_module_spans_new (void);
void st_module_spans_free (struct st_module_spans *s);

/* Whether [LOW, HIGH) overlaps a range added for FILE other than
   [LOW, HIGH) itself (the same load: another segment of it).  */
bool st_module_spans_conflict (const struct st_module_spans *s, const void *file, uint64_t low,
                               uint64_t high);
/* The lowest address of a module of FILE, when it has one.  */
bool st_module_spans_first (const struct st_module_spans *s, const void *file, uint64_t *low);
/* FILE has a module over [LOW, HIGH), which st_module_spans_conflict said
   overlaps none of its others.  0 or -ENOMEM.  */
int st_module_spans_add (struct st_module_spans *s, const void *file, uint64_t low,
                         uint64_t high);
