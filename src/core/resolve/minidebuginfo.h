/* A file's MiniDebugInfo (.gnu_debugdata: an xz-compressed ELF image with
 * the symbols .dynsym lacks, as Fedora ships its binaries), bounded before
 * libdwfl inflates it.
 *
 * libdwfl inflates the section whole into memory when it reads the
 * module's symbols and finds no .symtab (find_aux_sym), with no bound of
 * its own: a 156 KB section that inflates to 1 GiB of zeros, in a stripped
 * library a user's process ran, took root's `-p` profiler to 1,028 MB and
 * lost 93% of its samples.  So before the symbols of a file are read its
 * section is inflated here once, into a small buffer, only to count; past
 * st_minidebuginfo_max the file is handed to libdwfl with the section
 * unnamed (st_minidebuginfo_hidden), and its symbols come from .dynsym.  */
#pragma once

#include <libelf.h>
#include <stdint.h>

#include "basic/why.h"

/* What MiniDebugInfo may inflate to: 64 times its compressed size (xz
   makes symbol tables 4 to 8 times smaller; only a bomb makes them a
   thousand times), at least 16 MiB and at most 256 MiB.  */
uint64_t st_minidebuginfo_max (uint64_t compressed);
/* The decoder's memory: xz -9 needs 65 MiB.  */
#define ST_MINIDEBUGINFO_MEMLIMIT (96u << 20)

/* Inflates ELF's .gnu_debugdata, counting: 1 when it has none; 0 when it
   inflates to at most st_minidebuginfo_max (a damaged stream too, which
   libdwfl stops at as this does); -E2BIG past it, or when its decoder
   would need more than ST_MINIDEBUGINFO_MEMLIMIT, with WHY saying so.  */
int st_minidebuginfo_check (Elf *elf, struct st_why *why);

/* An Elf of FD (mapped privately) whose .gnu_debugdata has no name, for
   libdwfl, which looks for it by name; NULL when it cannot be made.  */
Elf *st_minidebuginfo_hidden (int fd);
