/* The rows of the unwind-rule cache (unwind-cache.h): the CFA and
 * register rules of a pc range, as libdw's CFI gives them, parsed once.
 *
 * Rows are kept in the file's addresses (the process's less the module's
 * bias), so that every process that maps a file, on every thread, uses
 * the same rows: a file's table lives in its resolve/file-shared.h entry,
 * grows under the entry's lock as samples land on new pcs, and each row in
 * it is immutable once added.  Each process's module keeps the rows it used
 * in a table of its own, read without the lock.  libdw itself is asked by
 * the thread that needs a row, with its own Dwfl (libdw 0.188 is not
 * thread-safe).  */
#pragma once

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct st_elf_file;
struct st_file_shared;

/* x86_64: DWARF registers 0..16, the return address in 16 (rip), as
   libdwfl's x86_64 backend has them (ebl_frame_nregs).  */
#define NREGS 17
#define RA_REG 16
#define RBX_REG 3

/* The listed rules; undefined and same-value registers are not listed.  */
enum rule {
  RULE_OFFSET,      /* saved at CFA + off */
  RULE_VAL_OFFSET,  /* is CFA + off */
};

/* The rule of one register that is not undefined.  */
struct reg_rule {
  uint8_t reg;
  uint8_t rule;
  int32_t off;
};

/* The rules of one pc range, in the file's addresses (the process's less
   the module's bias), so that every process that maps the file, on any
   thread, can use it (resolve/file-shared.h).  A row that is
   not USABLE stands for "libdwfl steps here" (no CFI, an expression, a
   signal frame), so that the answer is not asked of libdw again.  The
   registers of the same value are a mask; only those at or from the CFA
   are listed: a step visits those alone.  */
struct row {
  uint64_t start, end;
  int64_t cfa_off;
  uint8_t cfa_reg;
  bool usable;
  bool signal_frame;        /* a sigreturn trampoline's: never usable */
  bool ra_undefined;
  /* From .debug_frame, which the module's own debug file may lack: usable
     only where it has one (st_rows_find).  */
  bool from_debug_frame;
  /* No CFI here (not USABLE): .eh_frame has no row ("no matching address
     range", NO_CFI_ERROR, libdw's), and the Dwarf of the module that
     asked opened without .debug_frame.  libdwfl then stops at a frame
     here when the frame pointer is known to be 0 (st_rows_no_cfi_stop).  */
  bool no_cfi_stops;
  const char *no_cfi_error;
  uint32_t same;            /* bit i: register i keeps its value */
  /* rbx is in SAME by the ABI only: libdw's rules leave it undefined
     (unwind-rows.c's parse_register; libdwfl lost it there) */
  bool rbx_by_abi;
  uint32_t ruled;           /* bit i: a rule below sets register i */
  uint8_t n_rules;
  uint8_t n_reads;          /* the first N_READS rules are RULE_OFFSET */
  struct reg_rule rules[NREGS];
};

/* Each row is allocated alone, so that it stays where it is while rows
   are inserted around it: the memo points at it.  */
struct row_ref {
  uint64_t start;           /* row->start, searched without a load of the row */
  struct row *row;
};

/* Rows sorted by start, not overlapping.  */
struct row_table {
  struct row_ref *rows;
  size_t n, cap;
};

/* The rows of one module of the process's Dwfl.  With its file's shared
   entry, they are the rows of the file's table (SHARED->rows, a struct
   row_table that the entry's lock guards and that owns them) this process
   has used, found there without asking libdw when another process, on
   any thread, asked before; each row is immutable once in that table, so
   this process reads it without the lock.  Without one, the rows are
   this table's own.  */
struct module_rows {
  Dwfl_Module *mod;
  uint64_t bias;            /* process address - file address */
  struct st_file_shared *shared;
  struct st_elf_file *file; /* the mapping's, this thread's; or NULL */
  struct row_table t;
};

/* M for MOD, with no rows yet.  */
void st_rows_module_init (struct module_rows *m, Dwfl_Module *mod);
/* Frees what M holds (its own rows, when they are not its file's).  */
void st_rows_module_release (struct module_rows *m);
/* The row at LOOKUP (a process address) in M's module, from M's table, the
   file's, or libdw; one that is not usable where a row from .debug_frame
   is not M's to use.  NULL on allocation failure.  */
const struct row *st_rows_find (struct module_rows *m, uint64_t lookup);
/* Whether libdwfl stops at a frame at LOOKUP in M's module, whose row is
   ROW (NO_CFI_STOPS), when the frame pointer is known to be 0; *STOP says
   how (an enum st_stop_reason).  False when M's Dwarf would not open as
   the Dwarf of the module that asked for ROW did: libdwfl steps there.  */
bool st_rows_no_cfi_stop (struct module_rows *m, const struct row *row, uint64_t lookup,
                          int *stop);
