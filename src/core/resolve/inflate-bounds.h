/* What a file's compressed contents may inflate to, checked before
 * libdwfl and libdw inflate them whole into memory.
 *
 * Neither has a bound of its own, and a few KB of zlib or xz inflate to a
 * gigabyte of zeros.  A user's process that ran a library with
 *  - a MiniDebugInfo (.gnu_debugdata: the xz-compressed symbols a stripped
 *    file carries, as Fedora ships its binaries; libdwfl inflates it when
 *    it reads the symbols of a file without .symtab) of 156 KB inflating
 *    to 1 GiB took root's `-p` profiler to 1,028 MB, 93% of its samples
 *    lost;
 *  - a compressed debug section (SHF_COMPRESSED, or a GNU .zdebug_*
 *    section; libdw inflates every one when the file's Dwarf opens, which
 *    libdwfl asks for wherever .eh_frame has no row) of 1 MB declaring
 *    1 GiB: 1,029 MB, 96% lost.
 * So a file's contents may inflate to at most 64 times what they take in
 * the file (xz and zlib make symbols and DWARF 3 to 10 times smaller; only
 * a bomb makes them a thousand times), and at least 16 MiB; MiniDebugInfo
 * at most 256 MiB.  A compressed section's declared size is a true bound
 * (libelf inflates into that much and fails past it), so the check reads
 * headers only; MiniDebugInfo says nothing reliable of its size, so it is
 * inflated once here, into a small buffer, counting.  Past the bound the
 * file is handed to libdwfl with those sections unnamed
 * (st_inflate_hidden) as empty sections: libdw skips those, and libelf
 * inflates only what is marked compressed.  */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "basic/why.h"

/* What COMPRESSED bytes may inflate to: 64 times as much, at least
   16 MiB, and, when CEILING is not 0, at most CEILING.  */
uint64_t st_inflate_max (uint64_t compressed, uint64_t ceiling);
/* MiniDebugInfo's ceiling, and its decoder's memory (xz -9 needs 65 MiB).  */
#define ST_MINIDEBUGINFO_CEILING (256u << 20)
#define ST_MINIDEBUGINFO_MEMLIMIT (96u << 20)

/* What ELF's compressed sections declare they inflate to (SHF_COMPRESSED:
   ch_size; with GNU, also .zdebug_* sections: the size after "ZLIB"), and
   in *COMPRESSED (may be NULL) the bytes they take in the file;
   UINT64_MAX when a section's header cannot be read.  */
uint64_t st_inflate_declared (Elf *elf, bool gnu, uint64_t *compressed);

/* 0 when ELF's compressed sections declare at most st_inflate_max of
   their size (or it has none); -E2BIG, WHY saying so, when more.  */
int st_inflate_check_sections (Elf *elf, struct st_why *why);

/* Inflates ELF's .gnu_debugdata, counting: 1 when it has none; 0 when it
   inflates within st_inflate_max (a damaged stream too, which libdwfl
   stops at as this does); -E2BIG past it, when its decoder would need
   more than ST_MINIDEBUGINFO_MEMLIMIT, or when the ELF image it holds
   counts more sections or program headers than st_elf_check_header
   allows (libdwfl reads it with elf_memory), WHY saying so.  ELF comes
   from st_elf_begin_untrusted, which copied the section with the header
   (so that what libdwfl inflates later is what was counted); one over
   ST_ELF_MAX_FROZEN, which it did not copy, is -E2BIG.  */
int st_inflate_check_minidebuginfo (Elf *elf, struct st_why *why);

/* An Elf of FD (mapped privately; its header checked again) in which
   .gnu_debugdata (when MINIDEBUGINFO) and, when st_inflate_check_sections
   refuses them, the compressed sections are empty sections without a
   name (SHT_NOBITS, SHF_COMPRESSED cleared); NULL when it cannot be
   made.  */
Elf *st_inflate_hidden (int fd, bool minidebuginfo);
