/* The build-id of an ELF file, read from its program headers and notes by
 * hand.  The namespace helper runs with privileges and must not link libelf
 * or libdw (DESIGN.md: it parses nothing beyond the header and the build-id),
 * so this is the whole of its ELF knowledge: it checks the magic, walks the
 * PT_NOTE segments with every offset bounds-checked, and returns the
 * NT_GNU_BUILD_ID descriptor.  */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define ST_ELF_BUILD_ID_MAX 64

/* Reads the build-id of the ELF file open on FD.  Returns its size (>0),
   0 when the file is ELF but has no build-id, -ENOEXEC when it is not an ELF
   file, or another -errno.  */
int st_elf_fd_build_id (int fd, uint8_t out[ST_ELF_BUILD_ID_MAX]);
