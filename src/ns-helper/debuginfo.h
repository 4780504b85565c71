/* Where a binary's separate debuginfo is, inside the binary's own root: the
 * places the process's own tools (gdb, libdw) would look, and flatpak's
 * debug extensions, in that order:
 *
 *   /usr/lib/debug/.build-id/NN/REST.debug     NN: the build-id's first byte
 *   /app/lib/debug/.build-id/NN/REST.debug     flatpak: the app's .Debug
 *   DIR/DEBUGLINK                              the .gnu_debuglink name,
 *   DIR/.debug/DEBUGLINK                       beside the binary
 *   /usr/lib/debug/DIR/DEBUGLINK               and under the debug roots
 *   /app/lib/debug/DIR-UNDER-/app/DEBUGLINK    (flatpak: /app/bin -> bin)
 *
 * Every candidate must still have the binary's build-id (check.h).  */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ns-helper/protocol.h"

#define ST_DEBUGINFO_MAX_CANDIDATES 6

/* Fills OUT with the candidate paths for the binary at PATH with build-id
   ID (ID_SIZE > 0) and debuglink name DEBUGLINK (or "").  Returns how many.  */
size_t st_debuginfo_candidates (const char *path, const uint8_t *id, size_t id_size,
                                const char *debuglink,
                                char out[ST_DEBUGINFO_MAX_CANDIDATES][ST_NSH_PATH_MAX]);
