/* Function names of Go programs from their .gopclntab.
 *
 * Go binaries built by Debian (and every `go build -ldflags=-s`) carry no
 * .symtab and no CFI, but the Go runtime needs its own function table to
 * walk goroutine stacks, so it is always there: .gopclntab, a header, a
 * sorted table of (entry, _func offset) pairs and a pool of names.  This
 * reads the formats of Go 1.16 and 1.17 (magic 0xfffffffa), 1.18 and 1.19
 * (0xfffffff0) and 1.20+ (0xfffffff1), of 64-bit little-endian programs.
 * The section is part of a file the user chose: every offset is checked.  */
#pragma once

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "basic/why.h"

/* Called for each function, in table order: [START, END) in ELF addresses.
   NAME is valid only during the call.  A non-zero return stops the walk
   and is returned.  */
typedef int (*st_gopclntab_fn) (const char *name, uint64_t start, uint64_t end, void *arg);

/* Walks the table in DATA (SIZE bytes, the section's contents).  TEXT is
   the address of .text, used when the header's text start is 0 (a PIE
   relocates it at load time).  Returns the number of functions, or
   -EBADMSG (WHY says where) for a table that is not one.  */
int st_gopclntab_parse (const uint8_t *data, size_t size, uint64_t text,
                        st_gopclntab_fn fn, void *arg, struct st_why *why);

/* The same for ELF's .gopclntab section.  Returns the number of functions,
   0 when ELF has none, or -errno.  */
int st_gopclntab_read_elf (Elf *elf, st_gopclntab_fn fn, void *arg, struct st_why *why);

/* True for the functions where Go's own traceback stops: the outermost
   frames of every stack (runtime.goexit, runtime.mstart, runtime.rt0_go,
   the TOPFRAME functions) and the stack switches (runtime.systemstack,
   runtime.mcall, runtime.morestack: SPWRITE functions, past which the
   return address belongs to another stack).  */
bool st_gopclntab_is_outermost (const char *name);
