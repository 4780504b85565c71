/* Symbol names as people read them: Itanium C++, Rust (legacy and v0) and
 * OCaml names demangled the way perf 6.1 shows them.
 *
 * perf calls libiberty's cplus_demangle with DMGL_NO_OPTS (with -v,
 * DMGL_PARAMS | DMGL_ANSI), so "work::sort_them<long>" has no parameter
 * list and a Rust legacy name loses its "::h0123..." hash; names libiberty
 * does not know go through perf's OCaml demangler.  We call the same
 * library with the same flags, so our names are perf's.  */
#pragma once

enum st_demangle_style {
  ST_DEMANGLE_NONE,     /* --no-demangle: the names in the symbol table */
  ST_DEMANGLE_SHORT,    /* the default: perf's, without parameter lists */
  ST_DEMANGLE_FULL,     /* --demangle=full: with parameter lists (perf -v) */
};

/* The style of --demangle=ARG ("short" or "full"; NULL: short).  Returns 0,
   or -EINVAL for another ARG.  */
int st_demangle_parse_style (const char *arg, enum st_demangle_style *out);

/* The style every symbol table is built with.  Symbol tables are shared by
   all processes that map a file and are built on first use wherever that
   happens, so the style is set once, from the command line, before any is
   built.  The default is ST_DEMANGLE_SHORT.  */
void st_demangle_set_style (enum st_demangle_style style);
enum st_demangle_style st_demangle_style (void);

/* NAME demangled in STYLE, in a string the caller frees; NULL when NAME is
   not a mangled name (a C name), when STYLE is ST_DEMANGLE_NONE, or
   without memory.  */
char *st_demangle (const char *name, enum st_demangle_style style);
