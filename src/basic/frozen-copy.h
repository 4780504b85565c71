/* A copy of a file that its owner cannot change under us.
 *
 * An fd handed to libdwfl (a debug file, a dwz file) is read by libelf
 * with its own elf_begin, live: the header counts, the section sizes and
 * the compressed sections' declared sizes that the profiler checked can be
 * rewritten by whoever may write the file between the check and libelf's
 * read, and undo the check (basic/elf-begin.h: 6.4 GB for a header that
 * counts 20 million sections).  Such a file is copied first into a sealed
 * memfd, which is then checked and served: nobody can write the copy.
 * Files only the profiler's own user can write are served as they are:
 * copying costs their size in memory.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "basic/why.h"

/* Debug files of most programs are tens of MiB; a user's file larger than
   this is not copied, and so not read (a copy costs its size in memory
   in each unwinding thread).  */
#define ST_FROZEN_COPY_MAX ((uint64_t) 256 << 20)

/* Whether someone other than this process's effective user may write the
   file ST describes: another owner, or write permission for its group or
   for others (an ACL that grants a user write shows in the group bits).  */
bool st_others_may_write (const struct stat *st);

/* A sealed memfd (F_SEAL_WRITE, SHRINK, GROW, SEAL) holding the SIZE
   first bytes of FD, or -errno: -EFBIG (WHY says so) past MAX, -EIO when
   the file ended before SIZE bytes (cut short while copied).  FD stays
   open.  */
int st_frozen_copy (int fd, uint64_t size, uint64_t max, struct st_why *why);

/* Copies SIZE bytes of FROM, from its start, to TO at its offset: false
   when FROM ends first or a write fails.  */
bool st_copy_fd (int from, int to, off_t size);
