/* What -f sysprof must remember of each process so that Sysprof 3.46
 * names and symbolizes it as it does its own captures.
 *
 * Sysprof's call graph (libsysprof-4) names a pid by the first PROCESS
 * frame of that pid anywhere in the file, and symbolizes a pid's addresses
 * only with that pid's own MAP frames, whatever their times: a forked child
 * inherits nothing.  So the sink holds back a name until it is the one the
 * process keeps (its exec'd command), and copies a parent's code mappings
 * to a child that is sampled before it execs.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_sysprof_procs;

struct st_sysprof_proc_map {
  uint64_t start, end, pgoff;
  int64_t time;
  bool written;              /* a MAP frame of this pid has it */
  char *filename;
};

struct st_sysprof_proc {
  pid_t pid;
  char *name;                /* the name its PROCESS frame will carry */
  int64_t name_time;
  bool named;                /* a PROCESS frame of this pid is written */
  bool forked;               /* a child known from its fork: no exec yet */
  struct st_sysprof_proc_map *maps;
  size_t n_maps, cap_maps;
};

int st_sysprof_procs_new (struct st_sysprof_procs **out);
void st_sysprof_procs_free (struct st_sysprof_procs *procs);

/* The process PID, or NULL when unknown (CREATE false) or out of memory
   (*ERR = -ENOMEM).  */
struct st_sysprof_proc *st_sysprof_procs_get (struct st_sysprof_procs *procs, pid_t pid,
                                              bool create, int *err);
/* Forgets PID (it exited; a later process may reuse the number).  */
void st_sysprof_procs_remove (struct st_sysprof_procs *procs, pid_t pid);

/* CHILD starts as a copy of PARENT: its name and its mappings, none of
   them written for the child yet.  0 or -ENOMEM.  */
int st_sysprof_procs_fork (struct st_sysprof_procs *procs, pid_t parent, pid_t child,
                           int64_t time);

/* NAME from TIME on.  0 or -ENOMEM.  */
int st_sysprof_proc_set_name (struct st_sysprof_proc *p, const char *name, int64_t time);
/* A code mapping; one the process already holds is marked written when
   WRITTEN.  0 or -ENOMEM.  */
int st_sysprof_proc_add_map (struct st_sysprof_proc *p, uint64_t start, uint64_t end,
                             uint64_t pgoff, const char *filename, int64_t time, bool written);
/* The image is replaced: every mapping is gone.  */
void st_sysprof_proc_clear_maps (struct st_sysprof_proc *p);
/* Drops the mappings not written yet (a child that exec'd before any of
   its samples needed its parent's).  */
void st_sysprof_proc_drop_unwritten (struct st_sysprof_proc *p);

/* Calls FN for every process; stops at the first non-zero return.  */
int st_sysprof_procs_foreach (struct st_sysprof_procs *procs,
                              int (*fn) (struct st_sysprof_proc *p, void *arg), void *arg);
