/* How much of each user's JIT files (perf-PID.map, jit-PID.dump) a process
 * table reads.
 *
 * Those files are the user's to write, and `eu-stacktrace -a` reads them as
 * root for every process that runs code outside its files.  With a bound
 * per file only, one user's process naming a 64 MiB perf map grew root's
 * profiler of the whole machine by 230 MB and kept it parsing for a second
 * and a half (18% of the samples lost), and each further process, and each
 * jitdump a process mapped, could add 256 MiB more.  So each user has two
 * budgets, in bytes read, counted once for the run (the unwinding threads
 * share them: a busy process moves between threads, and a budget each
 * would multiply the user's):
 *  - held: bytes read from the user's files into the JIT maps that are
 *    still there (their processes alive), at most ST_JIT_USER_HELD_BYTES.
 *    This bounds memory: what is held is charged as the text parsed plus
 *    the entries it made; a map's arrays may take twice that while they
 *    grow (measured: 55 MB peak for 32 MiB of 50-byte lines).
 *  - rate: bytes read at most ST_JIT_USER_BURST_BYTES at once, and
 *    ST_JIT_USER_RATE_BYTES a second over time.  This bounds the time
 *    spent parsing, since a user can end processes (giving their held
 *    bytes back) and start new ones, each naming a new map.
 * What is over either is not read for now: a later miss reads it when the
 * budget allows.  A real JIT writes a few MB at start and little after.
 *
 * The user is whoever owns the process's user namespace when that is not
 * ours (the user of a rootless container, whose processes run as up to
 * 65,536 subordinate uids), else the process's uid: st_proc_charged_uid.
 * Pure accounting: the caller says what time it is.  Thread-safe: every
 * call takes the budget's lock.
 *
 * A third bound is on descriptors: a map keeps its files open between two
 * loads, to read what a JIT appends as soon as a miss finds it grown
 * (jit-map.h), and each kept file is a descriptor of root's profiler for
 * as long as its process lives (each unwinding thread's map of a process
 * keeps its own: one file kept by two threads counts twice).  A user's
 * processes keep at most ST_JIT_USER_KEPT_FILES open, and all at most
 * ST_JIT_KEPT_FILES (an eighth of the kernel's default hard limit of
 * 4,096 descriptors); past those, a file is read only when it is opened
 * again at a load, as before files were kept.
 *
 * It also says once that a process mapped more jitdump files than the
 * ST_JIT_MAP_MAX_DUMPS a map reads (jit-map.h).  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define ST_JIT_USER_HELD_BYTES (32u << 20)
#define ST_JIT_USER_BURST_BYTES (32u << 20)
#define ST_JIT_USER_RATE_BYTES (2u << 20)
#define ST_JIT_USER_KEPT_FILES 64u
#define ST_JIT_KEPT_FILES 512u

struct st_jit_budget;

/* UNBUDGETED (-1: none) is a user whose files are read without a budget:
   the user running a profiler that is not root's (its own files can only
   slow its own profiler).  Root's own are budgeted too: a rootful
   container's processes run as root.  */
struct st_jit_budget *st_jit_budget_new (uid_t unbudgeted);
void st_jit_budget_free (struct st_jit_budget *b);

/* How many bytes of UID's files may be read at NOW_NS (0: none now,
   UINT64_MAX: no bound).  */
uint64_t st_jit_budget_available (struct st_jit_budget *b, uid_t uid, uint64_t now_ns);
/* Takes up to WANT bytes of what UID may read at NOW_NS, held and read
   until st_jit_budget_charge settles them, and returns how many: two
   threads reading the same user's files at once share what is left
   rather than each reading all of it.  */
uint64_t st_jit_budget_reserve (struct st_jit_budget *b, uid_t uid, uint64_t want,
                                uint64_t now_ns);
/* READ bytes of UID's files were read and HELD bytes are held for them
   (text parsed and entries), of the RESERVED that st_jit_budget_reserve
   gave (0: none; what was reserved and not read is given back).  */
void st_jit_budget_charge (struct st_jit_budget *b, uid_t uid, uint64_t reserved, uint64_t held,
                           uint64_t read);
/* A map that held BYTES of UID's files went.  */
void st_jit_budget_give_back (struct st_jit_budget *b, uid_t uid, uint64_t bytes);
/* BYTES held for FROM are now held for TO: a file's process is another
   user's now (it changed its uid, or its pid is another process's).  */
void st_jit_budget_move (struct st_jit_budget *b, uid_t from, uid_t to, uint64_t bytes,
                         uint64_t now_ns);
/* Whether a file of UID's may stay open: true (counted) while UID's
   processes keep fewer than ST_JIT_USER_KEPT_FILES, and all fewer than
   ST_JIT_KEPT_FILES.  The unbudgeted user's count too.  */
bool st_jit_budget_keep_file (struct st_jit_budget *b, uid_t uid);
/* A file st_jit_budget_keep_file let UID keep is closed.  */
void st_jit_budget_let_go_file (struct st_jit_budget *b, uid_t uid);
/* How many files UID's processes keep open now (tests).  */
unsigned st_jit_budget_kept (struct st_jit_budget *b, uid_t uid);

/* A read of UID's file stopped at the budget, some of it left unread for
   now.  True the first time in the budget's life (one warning).  */
bool st_jit_budget_refused (struct st_jit_budget *b, uid_t uid);

/* A process mapped a jitdump file past the ST_JIT_MAP_MAX_DUMPS its map
   reads.  True the first time in the budget's life (one warning).  */
bool st_jit_budget_dump_refused (struct st_jit_budget *b);

/* For --stats: how many reads stopped at a budget (a file asked for again
   and refused again counts again), and how many users had one stop.  */
uint64_t st_jit_budget_reads_refused (struct st_jit_budget *b);
unsigned st_jit_budget_users_refused (struct st_jit_budget *b);
/* The bytes of UID's files held now (tests).  */
uint64_t st_jit_budget_held (struct st_jit_budget *b, uid_t uid);
