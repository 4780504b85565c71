/* The resolver's insides, shared by its three files (nothing else
 * includes this): resolver.c caches answers and checks each candidate
 * file, resolver-steps.c holds the steps that open candidates, in the
 * order they are tried, resolver-let-go.c lets go of the files no process
 * maps any more.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "basic/why.h"
#include "core/resolve/resolver.h"

/* One cached answer: a file, or why there is none.  */
struct answer {
  struct st_elf_file *file;
  char *why_not;
  char *path;
  bool by_name;            /* under the sysroot or search path, no build-id to check */
  /* For a file known by its inode only (no build-id in the mapping): its
     ctime when it was opened.  A file rewritten in place keeps its inode
     (cp over it), and a later mapping of it must not get the old bytes'
     symbols; ctime moves on every write, and cp -p cannot set it back.  */
  bool by_inode;
  struct timespec ctime;
  uint64_t used;           /* the resolver's clock when last asked for */
};

struct st_resolver {
  struct st_hashmap *answers;     /* path + identity -> struct answer */
  struct st_hashmap *by_build_id; /* build-id -> st_elf_file (one ref) */
  struct st_debuginfod *debuginfod; /* NULL: off */
  struct st_shared_files *shared_files; /* NULL: none */
  struct st_ns_client *ns_client;   /* NULL: off */
  struct st_containers *containers; /* NULL: off */
  unsigned upper_only;              /* files gone with a removed container's layer */
  const struct st_sysroot *sysroot; /* NULL: off */
  /* Files no process maps any more are let go, the ones used longest ago
     first, beyond the ST_RESOLVER_IDLE_KEPT used last (resolver-let-go.c).  */
  uint64_t clock;                   /* resolves so far: an answer's age */
  size_t files_held;                /* answers holding a file */
  size_t sweep_at;                  /* ... above which to let some go */
  uint64_t let_go;                  /* files let go so far */
  /* ... and how the paths of their answers, forgotten, had been found */
  unsigned let_go_found[ST_FOUND_N], let_go_by_name;
  /* Answers "no file": the ST_RESOLVER_MISSING_KEPT asked for last are
     kept (resolver-let-go.c).  */
  size_t missing_held;              /* answers without a file */
  size_t missing_sweep_at;          /* ... above which to forget some */
  uint64_t missing_forgotten;       /* forgotten so far */
  /* With st_resolver_park: the files whose last reference went, kept
     until the results written before STAMP no longer need their names.  */
  bool park;
  uint64_t stamp;
  struct parked_file {
    struct st_elf_file *file;
    uint64_t stamp;
  } *parked;
  size_t n_parked, cap_parked;
};

/* A step opens a candidate: 0 with its fd and Elf (or memory image), 1 when
   the step does not apply, or -1 with *WHY set.  */
struct candidate {
  const struct st_resolver *resolver;   /* for the steps that need more than REQ */
  int fd;
  void *image;
  Elf *elf;
  struct st_why why;
  /* What the container step learnt, for the caller to act on: the steps
     read the resolver, they do not change it.  */
  const struct st_container *ran_in;    /* see struct st_resolution */
  bool upper_only;          /* only in a removed container's own layer */
};

typedef int (*step_fn) (const struct st_mapping_request *req, struct candidate *c);

struct st_resolver_step {
  enum st_found_by how;
  step_fn open;
};

/* In the order they are tried.  */
extern const struct st_resolver_step st_resolver_steps[];
extern const size_t st_resolver_n_steps;

/* Whether the namespace helper may be asked for REQ's file: a file of a
   process, which its build-id or inode can check.  */
bool st_resolver_helper_applies (const struct st_mapping_request *req);

/* resolver.c: drops by_build_id's reference to F, if it holds F (the last
   reference, when nothing else holds F).  */
void st_resolver_drop_build_id_ref (struct st_resolver *r, struct st_elf_file *f);
/* resolver-let-go.c: lets go of the idle files beyond the
   ST_RESOLVER_IDLE_KEPT used last, and sets R->sweep_at.  */
void st_resolver_let_idle_files_go (struct st_resolver *r);
/* resolver-let-go.c: forgets the answers "no file" beyond the
   ST_RESOLVER_MISSING_KEPT asked for last, and sets R->missing_sweep_at.  */
void st_resolver_forget_old_missing (struct st_resolver *r);
/* F, just made, is R's: its last reference frees it, or parks it.  */
void st_resolver_own_file (struct st_resolver *r, struct st_elf_file *f);
