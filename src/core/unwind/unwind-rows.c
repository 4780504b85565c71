#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "basic/bsearch.h"
#include "core/resolve/elf-file.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/mapping.h"
#include "core/unwind/callchain.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/unwind-rows.h"

void
st_rows_module_init (struct module_rows *m, Dwfl_Module *mod)
{
  *m = (struct module_rows) { .mod = mod };
  /* The file's rows are shared when it has an identity; the file's
     addresses are the main ELF's, whose bias .eh_frame's rows have too.  */
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  const struct st_mapping *map = userdata != NULL ? *userdata : NULL;
  Dwarf_Addr bias;
  m->file = map != NULL ? map->file : NULL;
  if (map != NULL && map->file != NULL && map->file->shared != NULL
      && dwfl_module_getelf (mod, &bias) != NULL)
    {
      m->shared = map->file->shared;
      m->bias = bias;
    }
}

void
st_rows_module_release (struct module_rows *m)
{
  if (m->shared == NULL)
    for (size_t j = 0; j < m->t.n; j++)
      free (m->t.rows[j].row);
  free (m->t.rows);
  m->t = (struct row_table) { 0 };
}

static void
shared_rows_free (void *p)
{
  struct row_table *t = p;
  for (size_t i = 0; i < t->n; i++)
    free (t->rows[i].row);
  free (t->rows);
  free (t);
}

/* The index of the last row starting at or before ADDR, or T->n.  */
static size_t
row_index (const struct row_table *t, uint64_t addr)
{
  size_t n = ST_BSEARCH_UPPER (t->rows, t->n, start, addr);
  return n == 0 ? t->n : n - 1;
}

/* The row of T that holds ADDR, or NULL; *AT: where a row starting at
   ADDR goes.  */
static struct row *
row_at (const struct row_table *t, uint64_t addr, size_t *at)
{
  size_t i = row_index (t, addr);
  *at = i < t->n ? i + 1 : 0;
  return i < t->n && addr < t->rows[i].row->end ? t->rows[i].row : NULL;
}

/* Inserts ROW at AT in T, which holds no row at ROW->start.  */
static int
row_insert (struct row_table *t, size_t at, struct row *row)
{
  if (ST_GROW (t->rows, t->cap, t->n, 64) < 0)
    return -ENOMEM;
  memmove (&t->rows[at + 1], &t->rows[at], (t->n - at) * sizeof *t->rows);
  t->rows[at] = (struct row_ref) { row->start, row };
  t->n++;
  return 0;
}

/* A copy of R in T at AT (T's own), its end cut before the next row of
   T: rows from an earlier lookup later in the same row of libdw's.  */
static struct row *
row_add (struct row_table *t, size_t at, const struct row *r)
{
  struct row *copy = malloc (sizeof *copy);
  if (copy == NULL)
    return NULL;
  *copy = *r;
  if (at < t->n && t->rows[at].start < copy->end)
    copy->end = t->rows[at].start;
  if (row_insert (t, at, copy) < 0)
    {
      free (copy);
      return NULL;
    }
  return copy;
}

/* The CFA rule of FRAME, when it is register + offset.  */
static bool
parse_cfa (Dwarf_Frame *frame, struct row *r)
{
  Dwarf_Op *ops;
  size_t nops;
  if (dwarf_frame_cfa (frame, &ops, &nops) != 0 || nops != 1)
    return false;
  uint64_t reg;
  if (ops[0].atom == DW_OP_bregx)
    {
      reg = ops[0].number;
      r->cfa_off = (int64_t) ops[0].number2;
    }
  else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
    {
      reg = ops[0].atom - DW_OP_breg0;
      r->cfa_off = (int64_t) ops[0].number;
    }
  else
    return false;
  if (reg >= NREGS)
    return false;
  r->cfa_reg = reg;
  return true;
}

/* The rule of REGNO in FRAME, as libdwfl's handle_cfi reads it: libdw
   writes an offset(N) rule as DW_OP_call_frame_cfa [DW_OP_plus_uconst N],
   which libdwfl's expr_eval dereferences (the CFA makes it a location),
   and val_offset(N) the same with DW_OP_stack_value.  Any other form is
   an expression only libdwfl evaluates.  */
static bool
parse_register (Dwarf_Frame *frame, int regno, struct row *r)
{
  Dwarf_Op ops_mem[3], *ops;
  size_t nops;
  if (dwarf_frame_register (frame, regno, ops_mem, &ops, &nops) != 0)
    return false;
  struct reg_rule rule = { .reg = regno };
  if (nops == 0)
    {
      if (ops == ops_mem)
        {
          if (regno == RA_REG)
            r->ra_undefined = true;
          /* rbx is callee-saved: a row that says nothing of it keeps it.
             libdw 0.188's x86_64 ABI rules name rax for it and leave it
             undefined, and dwfl-unwind.c goes on past libdwfl's end for
             the want of it (note_rbx): the same steps.  */
          else if (regno == RBX_REG)
            {
              r->same |= 1u << regno;
              r->rbx_by_abi = true;
            }
          return true;
        }
      if (ops != NULL)
        return false;
      r->same |= 1u << regno;
      return true;
    }
  size_t i = 0;
  if (ops[i++].atom != DW_OP_call_frame_cfa)
    return false;
  uint64_t off = 0;
  if (i < nops && ops[i].atom == DW_OP_plus_uconst)
    off = ops[i++].number;
  bool location = true;
  if (i < nops && ops[i].atom == DW_OP_stack_value)
    {
      location = false;
      i++;
    }
  if (i != nops || (int64_t) off != (int32_t) off)
    return false;
  rule.rule = location ? RULE_OFFSET : RULE_VAL_OFFSET;
  rule.off = (int32_t) off;
  r->rules[r->n_rules++] = rule;
  return true;
}

/* Fills R from FRAME, the row of libdw's table whose addresses plus BIAS
   are the file's.  */
static void
parse_row (Dwarf_Frame *frame, uint64_t bias, struct row *r)
{
  Dwarf_Addr start, end;
  bool signal = false;
  int ra = dwarf_frame_info (frame, &start, &end, &signal);
  r->signal_frame = signal;
  r->usable = ra == RA_REG && !signal && parse_cfa (frame, r);
  for (int i = 0; i < NREGS && r->usable; i++)
    r->usable = parse_register (frame, i, r);
  /* The reads first, so that a step runs two loops without a switch; the
     order of the rules does not matter, each sets its own register from
     the CFA alone.  */
  struct reg_rule sorted[NREGS];
  unsigned n = 0;
  for (int pass = RULE_OFFSET; pass <= RULE_VAL_OFFSET; pass++)
    for (unsigned j = 0; j < r->n_rules; j++)
      if (r->rules[j].rule == pass)
        {
          sorted[n++] = r->rules[j];
          r->ruled |= 1u << r->rules[j].reg;
          r->n_reads += pass == RULE_OFFSET;
        }
  memcpy (r->rules, sorted, n * sizeof *sorted);
  /* The row holds up to END.  Its START is not to be trusted: after a
     DW_CFA_restore_state libdw's state carries the start of the row that
     was remembered (a function's epilogue), which rows in between
     overrode.  So the row is kept from the lookup on.  */
  if (r->start < end + bias)
    r->end = end + bias;
}

/* dwfl_module_dwarf_cfi of M's module, and in *FRAME what it says of the
   module's Dwarf, kept for M's file.  Without a .debug_frame it returns
   NULL and sets no error, which leaves the error of an .eh_frame lookup
   before it as libdwfl's.  */
static Dwarf_CFI *
dwarf_cfi_of (const struct module_rows *m, Dwarf_Addr *bias, enum st_dwarf_frame *frame)
{
  (void) dwfl_errno ();
  Dwarf_CFI *cfi = dwfl_module_dwarf_cfi (m->mod, bias);
  int err = dwfl_errno ();
  *frame = cfi != NULL ? ST_DWARF_WITH_FRAME : err == 0 ? ST_DWARF_WITHOUT_FRAME : ST_DWARF_NONE;
  if (m->file != NULL)
    m->file->dwarf_frame = *frame;
  return cfi;
}

/* What libdwfl finds of the Dwarf of M's module, asked once per file and
   thread.  Rows are shared by every module of the file's identity (its
   device, inode, size and mtime), but the Dwarf is the module's own: its
   debug file is found by its path (a hard link elsewhere may have none)
   and by each thread.  */
static enum st_dwarf_frame
dwarf_frame_of (const struct module_rows *m)
{
  if (m->file == NULL)
    return ST_DWARF_NONE;
  if (m->file->dwarf_frame == ST_DWARF_NOT_ASKED)
    {
      Dwarf_Addr bias;
      enum st_dwarf_frame frame;
      dwarf_cfi_of (m, &bias, &frame);
    }
  return m->file->dwarf_frame;
}

/* The rules at ADDR (a file address) in M's module, libdwfl's way: the
   .eh_frame row if it has one, else the .debug_frame row.  A .debug_frame
   row's range may hide .eh_frame rows not asked for yet, so it is kept for
   ADDR alone, as is "no row".

   Where neither has a row, whether libdwfl's step there fails the same
   way every time is noted too (NO_CFI_STOPS, st_rows_no_cfi_stop).
   ld.so's _start and _dl_start_user have no CFI, and are at the bottom
   of every stack sampled while a program loads: knowing it here spares
   each process libdwfl's hand-off, which opens the module's Dwarf.  */
static struct row
libdw_row (const struct module_rows *m, uint64_t addr)
{
  struct row r = { .start = addr, .end = addr + 1 };
  /* libdw's biases against the module's: the same for .eh_frame (the
     main file's), maybe not for a separate debug file's .debug_frame.  */
  uint64_t lookup = addr + m->bias;
  Dwarf_Addr bias;
  Dwarf_Frame *frame = NULL;
  Dwarf_CFI *cfi = dwfl_module_eh_cfi (m->mod, &bias);
  if (cfi != NULL && dwarf_cfi_addrframe (cfi, lookup - bias, &frame) == 0)
    parse_row (frame, bias - m->bias, &r);
  else
    {
      frame = NULL;
      bool eh_looked = cfi != NULL;
      const char *eh_error = dwarf_errmsg (dwarf_errno ());
      enum st_dwarf_frame dwarf_frame;
      cfi = dwarf_cfi_of (m, &bias, &dwarf_frame);
      if (cfi != NULL && dwarf_cfi_addrframe (cfi, lookup - bias, &frame) == 0)
        {
          parse_row (frame, bias - m->bias, &r);
          r.start = addr;
          r.end = addr + 1;
          r.from_debug_frame = true;
        }
      else
        {
          frame = NULL;
          /* libdwfl's step here: its .eh_frame lookup fails and sets the
             error (without one, the error would be whatever came before),
             the Dwarf's CFI is NULL and leaves it, and its frame-pointer
             guess fails without one when rbp is 0.  */
          r.no_cfi_stops = eh_looked && dwarf_frame == ST_DWARF_WITHOUT_FRAME && eh_error != NULL
                           && strcmp (eh_error, "no matching address range") == 0;
          r.no_cfi_error = r.no_cfi_stops ? eh_error : NULL;
        }
    }
  free (frame);
  return r;
}

/* The row at ADDR of the file's shared table, asked of libdw when no
   process asked before; added to M's.  NULL on allocation failure.  */
static const struct row *
shared_row (struct module_rows *m, uint64_t addr, size_t at_m)
{
  struct st_file_shared *e = m->shared;
  size_t at;
  pthread_mutex_lock (&e->lock);
  struct row_table *t = e->rows;
  struct row *row = t != NULL ? row_at (t, addr, &at) : NULL;
  pthread_mutex_unlock (&e->lock);
  if (row == NULL)
    {
      /* libdw is asked outside the lock: each thread has its own, and the
         lock is only the table's.  Another thread may add the same row
         meanwhile: the first in stays.  */
      struct row r = libdw_row (m, addr);
      pthread_mutex_lock (&e->lock);
      if (e->rows == NULL && (e->rows = calloc (1, sizeof (struct row_table))) != NULL)
        e->free_rows = shared_rows_free;
      t = e->rows;
      if (t != NULL && (row = row_at (t, addr, &at)) == NULL)
        row = row_add (t, at, &r);
      pthread_mutex_unlock (&e->lock);
      if (row == NULL)
        return NULL;
    }
  /* The file's rows do not overlap, and M's are some of them: ROW, which
     holds ADDR, starts after the last of M's before ADDR.  */
  return row_insert (&m->t, at_m, row) < 0 ? NULL : row;
}


const struct row *
st_rows_find (struct module_rows *m, uint64_t lookup)
{
  uint64_t addr = lookup - m->bias;
  size_t at;
  const struct row *row = row_at (&m->t, addr, &at);
  if (row == NULL && m->shared != NULL)
    row = shared_row (m, addr, at);
  else if (row == NULL)
    {
      struct row r = libdw_row (m, addr);
      row = row_add (&m->t, at, &r);
    }
  /* Another module's .debug_frame row, where this one's Dwarf has none:
     libdwfl steps here by frame pointer.  */
  static const struct row libdwfl_steps = { .usable = false };
  if (row != NULL && row->from_debug_frame && dwarf_frame_of (m) != ST_DWARF_WITH_FRAME)
    return &libdwfl_steps;
  return row;
}

/* ROW was made by a module whose Dwarf opened without .debug_frame; M's
   must too (dwarf_frame_of).  Then libdwfl's error is the .eh_frame
   lookup's, "no matching address range", which dwfl-unwind.c's
   classify_failure takes for the end in the module's entry function, for
   a pc outside the modules elsewhere.  */
bool
st_rows_no_cfi_stop (struct module_rows *m, const struct row *row, uint64_t lookup, int *stop)
{
  if (!row->no_cfi_stops || dwarf_frame_of (m) != ST_DWARF_WITHOUT_FRAME)
    return false;
  *stop = st_module_in_entry_function (m->mod, lookup) ? ST_STOP_END : ST_STOP_NO_MODULE;
  return true;
}
