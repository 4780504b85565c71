/* A module's separate debug file on the host, in the places libdwfl's
 * dwfl_standard_find_debuginfo (0.188) looks, with its default path
 * ":.debug:/usr/lib/debug":
 *
 *   /usr/lib/debug/.build-id/NN/REST.debug      by build-id
 *   DIR/DEBUGLINK                               DIR: the module's directory,
 *   DIR/.debug/DEBUGLINK                        when absolute (never ours: libdwfl
 *                                               takes a relative name's from the
 *                                               current directory)
 *   /usr/lib/debug/DIR/DEBUGLINK                then DIR minus leading components
 *
 * (for a dwz file: DIR/.dwz/NAME, /usr/lib/debug/NAME, /usr/lib/debug/.dwz/NAME),
 * and again from the module path's realpath when it is a symlink.
 *
 * Why not libdwfl's own: it opens each candidate O_RDONLY with no look at
 * what it is, and DIR and DEBUGLINK come from the module, which any user
 * can load: a .gnu_debuglink naming a FIFO beside a stripped library held
 * root's profiler in open(2) for good.  Here each candidate is opened with
 * st_open_untrusted (basic/untrusted.h), and accepted only when its build-id
 * is the module's (or, for a module without one, when the debuglink's CRC
 * matches).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_debuginfo_want {
  const char *file_name;      /* the module's file (its directory is searched); may be NULL */
  const char *debuglink;      /* .gnu_debuglink (or the dwz altlink name); NULL: NAME.debug */
  uint32_t crc;               /* the debuglink's CRC; 0: none */
  const uint8_t *build_id;    /* the wanted build-id (the dwz file's for ALT) */
  size_t build_id_size;       /* 0: none, then only the CRC can tell */
  bool alt;                   /* looking for the dwz file */
  uint64_t owner;             /* whom a copy is charged to (st_freeze's OWNER) */
  bool has_main;              /* the module's own file, never taken for its debug file */
  dev_t main_dev;
  ino_t main_ino;
};

/* Returns an fd of the debug file with *PATH set (malloc'ed), or -1 with
   errno 0 when there is none that checks out.  */
int st_debuginfo_host_find (const struct st_debuginfo_want *w, char **path);
