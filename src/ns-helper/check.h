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

/* Takes PATH_FD, an O_PATH descriptor of what a way found, and reopens
   it read-only, with the credentials of the calling process, when it is a
   regular file: the reopen is where the kernel checks read permission on
   the file itself.  FD_DIR is a descriptor of the caller's own
   /proc/self/fd (opened before it entered another mount namespace, whose
   /proc may be another or none), or -1 for /proc/self/fd.  PATH_FD is
   closed either way.  Returns the new descriptor, or -EINVAL (not a
   regular file) or another -errno, with WHY.  */
int st_check_reopen (int path_fd, int fd_dir, char *why, size_t why_size);

/* Takes FD, a read-only descriptor of a regular file, and keeps it in OUT
   when it is an ELF file with build-id WANT (when WANT_SIZE > 0); closes
   it otherwise.  Returns 0, or -EINVAL, -ENOEXEC (not ELF), -ESTALE
   (another build-id) or another -errno, with WHY.  */
int st_check_elf (int fd, const uint8_t *want, size_t want_size, struct st_checked *out,
                  char *why, size_t why_size);

/* Both, for map_files's O_PATH descriptors: st_check_reopen (FD_DIR: the
   opener's own /proc/self/fd), then st_check_elf's ELF and build-id
   checks (not its fstat and flags: the reopen made it read-only and
   regular).  Takes PATH_FD, an O_PATH descriptor of what a way found, and
   reopens it read-only when it is a regular ELF file with build-id WANT
   (when WANT_SIZE > 0).  PATH_FD is closed either way.  Returns 0, or -EINVAL
   (not a regular file), -ENOEXEC (not ELF), -ESTALE (another build-id) or
   another -errno, with WHY saying which.  */
int st_check_file (int path_fd, int fd_dir, const uint8_t *want, size_t want_size,
                   struct st_checked *out, char *why, size_t why_size);
