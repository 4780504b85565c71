/* The files of another machine: --sysroot=DIR (perf's --symfs) holds the
 * recording machine's tree, --search-path=DIR[:DIR...] holds loose copies
 * of its files, found by their names (perfparser's --extra and --app).
 *
 * Inodes and devices of another machine say nothing about the files here:
 * a file found this way is checked by build-id when the recording has one,
 * and otherwise accepted by its name (counted, so that --stats says so).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct st_why;
struct st_sysroot;

/* ROOT (NULL: none) and SEARCH_PATH (colon-separated, NULL: none) must be
   directories.  *OUT is NULL when both are NULL.  Returns 0 or -errno with
   WHY naming the directory.  */
int st_sysroot_new (const char *root, const char *search_path, struct st_sysroot **out,
                    struct st_why *why);
void st_sysroot_free (struct st_sysroot *s);

const char *st_sysroot_root (const struct st_sysroot *s);

/* Opens PATH (as the recording names it) under the sysroot: the path is
   resolved inside it, so that its absolute symlinks stay in it.  Returns
   the fd, 1 when there is no sysroot, or -errno.  ST gets the file's
   stat.  */
int st_sysroot_open (const struct st_sysroot *s, const char *path, struct stat *st);

/* Opens PATH's file name in the first search-path directory that has it.
   Returns the fd with *DIR the directory, 1 when there is no search path,
   or -errno (-ENOENT: in none).  */
int st_sysroot_search (const struct st_sysroot *s, const char *path, struct stat *st,
                       const char **dir);
