#pragma once

/* A stand-in for the dwz file of a module's DWARF, so that libdw never
 * looks for one itself.
 *
 * A Dwarf whose file has a .gnu_debugaltlink section refers to strings and
 * DIEs of another file (dwz's "multifile"): DW_FORM_GNU_strp_alt and
 * DW_FORM_GNU_ref_alt.  libdwfl asks its find_debuginfo callback for that
 * file as soon as the Dwarf opens (find-debuginfo.c searches the host and
 * debuginfod, each candidate opened as untrusted and checked).  When the
 * callback finds nothing, or libdw cannot open what it found, libdw 0.188's
 * dwarf_getalt looks on its own, at the first alt form it reads (a name
 * under --inline): it open()s the link's name, absolute or beside the
 * file, without O_NONBLOCK and retrying on EINTR.  A FIFO that the file's
 * owner puts there stops root's profiler for good, and no signal ends the
 * wait; a regular file there gets none of basic/elf-begin.h's bounds.
 *
 * So the callback gives the module's Dwarf this stand-in first (an empty
 * Dwarf: no strings, no units; libdw takes it as found and looks no
 * further), and libdwfl replaces it with the file the callback found when
 * it opens as a Dwarf.  An alt form read through the stand-in finds
 * nothing: the name is missing, as it was when no file was found.
 *
 * One per unwinder (libdw is not thread-safe); it must outlive every Dwarf
 * it was given to.  Split DWARF's .dwo files, which libdw also opens by
 * itself, are reached only through calls this program does not make
 * (dwarf_cu_info, dwarf_get_units with a subdie, dwarf_getsrclines):
 * tests/e2e/libdw-opens.sh holds that.  */

#include <elfutils/libdw.h>

struct st_dwarf_alt_stand_in;

/* 0, or -ENOMEM (or -EIO: libdw refused the image).  */
int st_dwarf_alt_stand_in_new (struct st_dwarf_alt_stand_in **out);
void st_dwarf_alt_stand_in_free (struct st_dwarf_alt_stand_in *s);

/* Makes S the dwz file of MAIN until a better one is set.  */
void st_dwarf_alt_stand_in_give (struct st_dwarf_alt_stand_in *s, Dwarf *main);
/* Before MAIN's DIEs are first read: unless GIVEN (MAIN got S from the
 * find_debuginfo callback, asked for MAIN's dwz file, and libdwfl set the
 * file found in its place, if any), MAIN's dwz file becomes S; and the dwz
 * file MAIN has then gets S as its own.  After this libdw looks for no
 * file, whatever MAIN and its dwz file name:
 *  - a request the callback could not tell from one for the module's own
 *    debug file (its .gnu_debuglink with the same name and CRC 0) got
 *    that file or none, not S;
 *  - the callback is not asked when the section is not there, but the
 *    section names live in the file, which its owner may rewrite after;
 *  - a dwz file's DIEs may use alt forms too, and libdwfl sets no dwz
 *    file of a dwz file: libdw would look for it by its own
 *    .gnu_debugaltlink.  */
void st_dwarf_alt_settle (struct st_dwarf_alt_stand_in *s, Dwarf *main, bool given);
