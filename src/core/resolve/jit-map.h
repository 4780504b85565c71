/* Names of JIT-compiled code: perf's symbol maps and jitdump files.
 *
 * A JIT (V8 with --perf-basic-prof, JVM agents, LuaJIT, ...) writes what it
 * compiled where, either as text lines "START SIZE NAME" in
 * /tmp/perf-PID.map, or as binary JIT_CODE_LOAD records in a jitdump file
 * (jit-PID.dump, V8's --perf-prof) that it also maps executable so that a
 * recording sees where the file is (perf inject --jit finds it the same way).
 *
 * Both files belong to the profiled process and whoever controls it: they
 * are opened like every other file a process names (src/basic/untrusted.h),
 * inside the process's own root when it runs in a container (where /tmp is
 * its own and the file carries its pid in its own pid namespace), owned by
 * the process's user or root, and read in bounded amounts: per file, and
 * per user (jit-budget.h).  Both only grow while the process runs: a miss
 * opens them again and reads what was appended since at most every
 * ST_JIT_MAP_RETRY_NS (the name may be another file's now, after an exec
 * or a pid's reuse that no event told, or a jitdump was mapped since; an
 * exec or fork the events tell makes the process a new map), and in between reads
 * what was appended to the files it keeps open (as many as jit-budget.h
 * lets it) at most every ST_JIT_MAP_GROWN_NS: a JIT writes a function's
 * name before it runs it, and even its first samples are mostly named.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/why.h"

/* At most this many bytes of one map or dump file are read in a run.  */
#define ST_JIT_MAP_MAX_BYTES (256u << 20)
/* At most this many jitdump files of one process are read (a JIT maps one;
   each is opened again at every load, so many would cost time).  */
#define ST_JIT_MAP_MAX_DUMPS 8
/* A JIT function's name is cut at this many bytes.  */
#define ST_JIT_NAME_MAX 1024
#define ST_JIT_MAP_RETRY_NS 200000000ull
/* A look for growth costs an fstat per file kept open, and misses come
   from every frame of a file a jitdump does not name: at most this often
   per process.  */
#define ST_JIT_MAP_GROWN_NS 1000000ull

/* Receives each code range found, in file order (a later one wins).
   NAME is valid only during the call.  Non-zero stops the parse.  */
typedef int (*st_jit_fn) (uint64_t start, uint64_t size, const char *name, void *arg);

/* Parses perf-map text: complete lines only.  Returns the bytes consumed
   (up to and including the last newline), or the callback's error.
   Malformed lines are skipped, as perf skips them.  */
long st_perf_map_parse (const char *text, size_t len, st_jit_fn fn, void *arg);

/* What a jitdump's records say, in file order.  Non-zero stops the parse.  */
struct st_jitdump_fns {
  /* JIT_CODE_LOAD: NAME's code at START, SIZE bytes; CODE_INDEX is the
     writer's number for this code (unique per load).  */
  int (*load) (uint64_t start, uint64_t size, uint64_t code_index, const char *name,
               void *arg);
  /* JIT_CODE_MOVE: the code of the load CODE_INDEX moved from OLD_ADDR to
     NEW_ADDR, SIZE bytes (perf inject --jit maps that load's code at the
     new address).  NULL: moves are skipped.  */
  int (*move) (uint64_t code_index, uint64_t old_addr, uint64_t new_addr, uint64_t size,
               void *arg);
};

/* Parses jitdump bytes from file offset 0: the header, then records.
   Returns the bytes of complete records consumed (a record still being
   written is left for later), or -EBADMSG (WHY says where) for a file
   that is not a jitdump of this machine's byte order.  */
long st_jitdump_parse (const uint8_t *data, size_t size, const struct st_jitdump_fns *fns,
                       void *arg, struct st_why *why);

/* True when PATH's last component is a jitdump's name: jit-PID.dump.  */
bool st_jitdump_is_dump_path (const char *path);

/* One process's JIT names.  The names it gives are its own, kept all in
   one arena until the map goes (the process with it); then NAMES_DONE
   (NULL: they are freed) takes the arena, to free it once the results
   that point into it are written (the process table parks it).  */
struct st_string_arena;
typedef void (*st_jit_names_done_fn) (void *ctx, struct st_string_arena *names);
struct st_jit_map;
struct st_jit_budget;

/* BUDGET (NULL: none; jit-budget.h) bounds what the files of each user's
   processes may make the map read and hold; it outlives the map.  */
int st_jit_map_new (pid_t pid, st_jit_names_done_fn names_done, void *ctx,
                    struct st_jit_budget *budget, struct st_jit_map **out);
void st_jit_map_free (struct st_jit_map *m);
/* The process mapped the jitdump PATH (as the process names it).  0, 1
   when it is not read (past the first ST_JIT_MAP_MAX_DUMPS files), or
   -ENOMEM.  */
int st_jit_map_add_dump (struct st_jit_map *m, const char *path);
/* The JIT function containing ADDR and the offset into it, or NULL.
   Reads the files on first use and again after a miss.  */
const char *st_jit_map_lookup (struct st_jit_map *m, uint64_t addr, uint64_t *offset);
/* The same, but only a name a jitdump gave, and only when the process has
   one: it names code inside a file too (V8's built-ins, embedded in node's
   .text), before the file's own symbols, as perf inject --jit does.  */
const char *st_jit_map_lookup_dump (struct st_jit_map *m, uint64_t addr, uint64_t *offset);
/* True while nothing was looked up in M, nor a jitdump named: a process
   that runs another program may keep it.  */
bool st_jit_map_untouched (const struct st_jit_map *m);
/* How many names are known (tests, --stats).  */
size_t st_jit_map_size (const struct st_jit_map *m);
