/* The checks every descriptor passes before the helper hands it out: a
 * regular file, opened read-only, that starts with the ELF magic and has
 * the build-id the request asked for.  This is all the helper looks at in
 * a file (elf-build-id.c reads the header, program headers and notes): it
 * never parses more of what a container wrote.  */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ns-helper/protocol.h"

struct st_checked {
  int fd;                       /* O_RDONLY, close-on-exec */
  uint8_t build_id[ST_NSH_BUILD_ID_MAX];
  size_t build_id_size;
};

/* Takes PATH_FD, an O_PATH descriptor of what a way found, and reopens it
   read-only when it is a regular ELF file with build-id WANT (when
   WANT_SIZE > 0).  PATH_FD is closed either way.  Returns 0, or -EINVAL
   (not a regular file), -ENOEXEC (not ELF), -ESTALE (another build-id) or
   another -errno, with WHY saying which.  */
int st_check_file (int path_fd, const uint8_t *want, size_t want_size, struct st_checked *out,
                   char *why, size_t why_size);
