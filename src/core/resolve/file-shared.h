/* Tables of a file that every unwinding thread reads, built once per run.
 *
 * libdw 0.188 is not thread-safe: each unwinding thread keeps its own
 * Dwfls, files and Elf handles (unwind/unwinder.h).  What threads share is
 * only our own tables, derived from a file's bytes: its symbol table
 * (symbol-table.h) and its unwind rows (unwind/unwind-cache.c).  Without
 * this, each thread built them again for the same files, and inflated the
 * compressed sections of their debug files again: 30-40 ms of CPU per
 * thread, a third more CPU at -j 2 than at -j 1 (issue 15).
 *
 * A file is known by the device, inode, size and modification time of the
 * descriptor the resolver opened, with its build-id; by its build-id alone
 * only without a descriptor (a stripped copy and the full file share a
 * build-id, not a symbol table: the first met would name both).  A
 * table is built by the first thread that needs it, with its own libdw
 * handles, under the entry's lock, and never written again: a thread takes
 * the pointer once under the lock (whose release published the table) and
 * reads the table without locks afterwards.  What lookups write (memos,
 * demangled names) stays in each thread's view.  */
#pragma once

#include <pthread.h>
#include <stdbool.h>

#include "core/resolve/symbol-table.h"

struct st_elf_file;
struct st_shared_files;

struct st_file_shared {
  pthread_mutex_t lock;
  struct st_symtab_data *symtab;    /* under LOCK until set, then immutable */
  /* The unwind-rule cache's rows of the file, laid out by unwind/ (this
     layer only frees them), under LOCK: the table grows as samples land
     on new pcs, but each row is immutable once in it.  */
  void *rows;
  void (*free_rows) (void *rows);
  /* The files of every thread that point here, under the map's lock: the
     entry and its tables go with the last one (st_file_shared_put), so
     that a run holds the tables of the files it still has open only.  */
  unsigned users;
  struct st_shared_files *files;
  size_t key_len;
  unsigned char key[];        /* the entry's identity in the map */
};

/* 0 or -ENOMEM.  */
int st_shared_files_new (struct st_shared_files **out);
void st_shared_files_free (struct st_shared_files *files);

/* F's entry, made if new, with one more user; NULL when F has no identity
   to be shared by (no build-id and no descriptor) or memory ran out: F's
   tables then stay its thread's.  Any thread may call it.  */
struct st_file_shared *st_shared_files_get (struct st_shared_files *files,
                                            const struct st_elf_file *f);
/* One user fewer for E (NULL: none); the last frees it and its tables.
   Any thread may call it, once its own views of the tables are gone.  */
void st_file_shared_put (struct st_file_shared *e);

/* E's symbol table: built by BUILD (ARG) in the first thread that asks,
   while the others asking wait for it.  NULL when BUILD returned NULL (out
   of memory): the next call tries again.  */
const struct st_symtab_data *st_file_shared_symtab (struct st_file_shared *e,
                                                    struct st_symtab_data *(*build) (void *arg),
                                                    void *arg);
