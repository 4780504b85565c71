/* Inside -f pprof (sink-pprof.c says what it writes): the aggregated
 * profile that sink-pprof.c builds sample by sample, and that
 * sink-pprof-write.c encodes at the end.  Nothing else includes it.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "basic/hashmap.h"

struct mapping {
  uint32_t filename, build_id;  /* string indices */
  uint64_t bias;                /* load bias: address - file address */
  uint64_t lo, hi;              /* the lowest and highest address seen */
  bool may_be_program;          /* st_module_may_be_program */
  uint64_t program_samples;     /* whole stacks whose program it is */
};

struct location {
  uint32_t mapping;             /* id, or 0 */
  uint64_t address;
  uint32_t first_line, n_lines; /* in lines[]: function ids, innermost first */
  bool activation;
};

/* A sample's key starts with pid, tid, comm and container (string ids, 0
   for none), then its location ids; each has up to one label per fixed
   field but the pid and tid, which are always there.  */
#define KEY_FIXED 4
#define N_LABELS 4

/* A distinct sample: its key (pid, tid, comm, container, location ids) in keys[] and
   its two values.  len 0: an empty slot.  */
struct sample_slot {
  uint64_t hash;
  uint32_t key, len;            /* in keys[], in uint32_t */
  uint64_t count, period;
};

/* A growable array of N elements of SIZE bytes.  */
struct array {
  void *v;
  size_t n, cap;
};

/* A function is its shown name and its name in the file (string indices):
   overloads that demangle to one name without parameter lists stay apart,
   as pprof keeps them.  */
struct function_key {
  uint32_t name, system_name;
};

struct st_sink {
  FILE *out;
  struct st_hashmap *string_ids;   /* string -> index + 1 */
  struct array strings;            /* char *; [0] is "" */
  struct st_hashmap *mapping_ids;  /* (filename, build_id, bias) -> id */
  struct array mappings;           /* struct mapping; id = index + 1 */
  /* The frames' module and build-id pointers are stable while a file is
     mapped: most frames find their mapping here without hashing two
     strings.  A pointer may be reused for another file later, so an entry
     is checked with strcmp, once per sample (during one sample every
     pointer is alive: the same pointer is the same string).  */
  struct {
    const char *module, *build_id;
    uint64_t bias;
    uint32_t id;
    uint64_t checked;              /* the sample it was last checked in */
  } mapping_cache[64];
  uint64_t n_samples;
  struct st_hashmap *function_ids; /* struct function_key -> id */
  struct array functions;          /* struct function_key; id = index + 1 */
  struct st_hashmap *location_ids; /* (mapping, activation, address) -> id */
  struct array locations;          /* struct location; id = index + 1 */
  uint32_t location_cache[1024];   /* by address: ids, checked against the key */
  struct array lines;              /* uint32_t function ids */
  /* The distinct samples, in an open-addressing table hashed a word at a
     time: one lookup per sample, a quarter of the work of st_hashmap's
     byte-wise hash on these keys.  */
  struct sample_slot *slots;
  size_t slots_cap, n_distinct;
  struct array keys;               /* uint32_t */
  const char *last_comm;           /* checked with strcmp, as mapping_cache */
  uint32_t last_comm_id;
  uint32_t *key;
  size_t key_cap;                  /* in uint32_t */
  uint64_t first_time, last_time, period;
  bool have_time;
  uint32_t s_samples, s_count, s_cpu, s_nanoseconds, s_pid, s_tid, s_comm, s_container;
};

/* Writes the profile S aggregated, gzip-compressed, to its output, and
   flushes it: 0 or -errno.  */
int st_pprof_write (struct st_sink *s);
