#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "basic/bsearch.h"
#include "core/resolve/elf-file.h"
#include "core/resolve/file-shared.h"
#include "core/resolve/mapping.h"
#include "core/unwind/epilogue.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/unwind-cache.h"

/* x86_64: DWARF registers 0..16, the return address in 16 (rip), as
   libdwfl's x86_64 backend has them (ebl_frame_nregs).  */
#define NREGS 17
#define RA_REG 16

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
  uint32_t same;            /* bit i: register i keeps its value */
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
  struct row_table t;
};

/* The row of a lookup address that was stepped from before, so that a
   frame seen again costs neither dwfl_addrmodule nor a search.  Entries
   of an older GEN are stale (the rows were freed).  */
#define MEMO_SIZE 1024
struct memo {
  uint64_t lookup;
  uint64_t gen;
  const struct row *row;
};

struct st_unwind_cache {
  struct module_rows *mods;
  size_t n_mods, cap_mods;
  size_t last;              /* the module entry of the last lookup */
  uint64_t gen;             /* starts at 1: a zeroed memo entry is stale */
  struct memo memo[MEMO_SIZE];
};

int
st_unwind_cache_new (struct st_unwind_cache **out)
{
  *out = calloc (1, sizeof **out);
  if (*out == NULL)
    return -ENOMEM;
  (*out)->gen = 1;
  return 0;
}

void
st_unwind_cache_clear (struct st_unwind_cache *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n_mods; i++)
    {
      if (c->mods[i].shared == NULL)
        for (size_t j = 0; j < c->mods[i].t.n; j++)
          free (c->mods[i].t.rows[j].row);
      free (c->mods[i].t.rows);
    }
  c->n_mods = 0;
  c->last = 0;
  c->gen++;
}

void
st_unwind_cache_free (struct st_unwind_cache *c)
{
  if (c == NULL)
    return;
  st_unwind_cache_clear (c);
  free (c->mods);
  free (c);
}

bool
st_unwind_cache_applies (const struct st_dwarf_regs *regs)
{
  return regs->is_x86_64 && regs->n == NREGS && !regs->big_endian;
}

/* The rows of MOD, created empty.  NULL on allocation failure.  */
static struct module_rows *
module_rows (struct st_unwind_cache *c, Dwfl_Module *mod)
{
  if (c->last < c->n_mods && c->mods[c->last].mod == mod)
    return &c->mods[c->last];
  for (size_t i = 0; i < c->n_mods; i++)
    if (c->mods[i].mod == mod)
      {
        c->last = i;
        return &c->mods[i];
      }
  if (ST_GROW (c->mods, c->cap_mods, c->n_mods, 8) < 0)
    return NULL;
  c->last = c->n_mods;
  struct module_rows *m = &c->mods[c->n_mods++];
  *m = (struct module_rows) { .mod = mod };
  /* The file's rows are shared when it has an identity; the file's
     addresses are the main ELF's, whose bias .eh_frame's rows have too.  */
  void **userdata;
  dwfl_module_info (mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
  const struct st_mapping *map = userdata != NULL ? *userdata : NULL;
  Dwarf_Addr bias;
  if (map != NULL && map->file != NULL && map->file->shared != NULL
      && dwfl_module_getelf (mod, &bias) != NULL)
    {
      m->shared = map->file->shared;
      m->bias = bias;
    }
  return m;
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

/* The rules at ADDR (a file address) in M's module, libdwfl's way: the
   .eh_frame row if it has one, else the .debug_frame row.  A .debug_frame
   row's range may hide .eh_frame rows not asked for yet, so it is kept for
   ADDR alone, as is "no row".  */
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
      cfi = dwfl_module_dwarf_cfi (m->mod, &bias);
      if (cfi != NULL && dwarf_cfi_addrframe (cfi, lookup - bias, &frame) == 0)
        {
          parse_row (frame, bias - m->bias, &r);
          r.start = addr;
          r.end = addr + 1;
        }
      else
        frame = NULL;
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

/* The rules at LOOKUP in MOD.  NULL on allocation failure.  */
static const struct row *
find_row (struct st_unwind_cache *c, Dwfl_Module *mod, uint64_t lookup)
{
  struct module_rows *m = module_rows (c, mod);
  if (m == NULL)
    return NULL;
  uint64_t addr = lookup - m->bias;
  size_t at;
  const struct row *row = row_at (&m->t, addr, &at);
  if (row != NULL)
    return row;
  if (m->shared != NULL)
    return shared_row (m, addr, at);
  struct row r = libdw_row (m, addr);
  return row_add (&m->t, at, &r);
}

/* The stack copy, read as dwfl-unwind.c's memory_read does, except that a
   read above the copy is not answered: libdwfl unwinds such a sample.  */
struct copy {
  const uint8_t *stack;
  size_t size;
  uint64_t sp;
  uint64_t read_end;
  /* Below sp: the slots an epilogue popped, found when first needed.  */
  Dwfl *dwfl;
  const struct st_dwarf_regs *regs;
  bool popped_known;
  struct st_popped popped;
};

/* A read below sp, where the copy never reaches: the CFI after an
   epilogue's pops (GCC writes no DW_CFA_restore for them) still places
   saved registers there.  As memory_read answers libdwfl: a slot the
   epilogue popped reads as the value popped from it; any other fails,
   and libdwfl's handle_cfi then leaves that register unset and steps on
   (the register "will look as unset causing an error later, if used").
   False when the register is to be unset.  */
static bool
below_sp_read (struct copy *k, uint64_t addr, uint64_t *value)
{
  if (!k->popped_known)
    {
      st_popped_slots (k->dwfl, k->regs, &k->popped);
      k->popped_known = true;
    }
  for (unsigned i = 0; i < k->popped.n; i++)
    if (k->popped.addr[i] == addr)
      {
        *value = k->popped.value[i];
        return true;
      }
  return false;
}

struct state {
  uint64_t val[NREGS];
  uint32_t set;             /* bit i: val[i] is known */
};

enum step { STEP_PC, STEP_END, STEP_LIBDWFL };

/* One step of handle_cfi by ROW from the registers of S to its caller's,
   in place (every rule computes from the CFA alone); *PC is the caller's
   pc.  On STEP_LIBDWFL S is garbage.  */
static enum step
step (const struct row *row, struct state *s, struct copy *k, uint64_t *pc)
{
  if (!(s->set & (1u << row->cfa_reg)))
    return STEP_LIBDWFL;
  uint64_t cfa = s->val[row->cfa_reg] + (uint64_t) row->cfa_off;
  unsigned j = 0;
  uint32_t unset = 0;
  /* The copy's bounds in locals: the stores to S's registers could alias
     K's fields, which the compiler would load again at every read.  */
  const uint8_t *stack = k->stack;
  uint64_t sp = k->sp, read_end = k->read_end;
  bool whole_words = k->size >= 8;
  uint64_t last_word = k->size - 8;
  for (; j < row->n_reads; j++)
    {
      uint64_t addr = cfa + (uint64_t) (int64_t) row->rules[j].off;
      uint64_t v, off = addr - sp;
      /* A whole word inside the copy, the common case, in one comparison
         (an address below sp wraps around to a large offset).  */
      if (whole_words && off <= last_word)
        {
          memcpy (&v, stack + off, sizeof v);
          if (addr + 8 > read_end)
            read_end = addr + 8;
        }
      else if (!st_stack_copy_read (stack, k->size, sp, false, addr, &read_end, &v))
        {
          if (addr >= sp)
            return STEP_LIBDWFL;
          if (!below_sp_read (k, addr, &v))
            {
              unset |= 1u << row->rules[j].reg;
              continue;
            }
        }
      s->val[row->rules[j].reg] = v;
    }
  k->read_end = read_end;
  for (; j < row->n_rules; j++)
    s->val[row->rules[j].reg] = cfa + (uint64_t) (int64_t) row->rules[j].off;
  s->set = ((s->set & row->same) | row->ruled) & ~unset;
  /* The return address undefined is the outermost frame; a return address
     of 0 ends the stack too (libdwfl: "none of the archs supported for
     unwinding have zero as a valid PC").  Known but unreadable it would
     end libdwfl's unwind with its own classification: libdwfl's.  */
  if (row->ra_undefined)
    return STEP_END;
  if (!(s->set & (1u << RA_REG)))
    return STEP_LIBDWFL;
  *pc = s->val[RA_REG];
  return *pc == 0 ? STEP_END : STEP_PC;
}

static struct memo *
memo_of (struct st_unwind_cache *c, uint64_t lookup)
{
  return &c->memo[(lookup * 0x9e3779b97f4a7c15ull) >> 54];
}

static const struct row *
memo_row (struct st_unwind_cache *c, uint64_t lookup)
{
  const struct memo *e = memo_of (c, lookup);
  return e->gen == c->gen && e->lookup == lookup ? e->row : NULL;
}

/* The usable row at LOOKUP, a frame that is not Go's outermost: NULL when
   libdwfl steps there.  */
static const struct row *
frame_row (struct st_unwind_cache *c, Dwfl *dwfl, uint64_t lookup, bool *signal_frame)
{
  *signal_frame = false;
  const struct row *row = memo_row (c, lookup);
  if (row != NULL)
    return row;
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  if (mod == NULL || st_module_is_go_outermost (mod, lookup))
    return NULL;
  row = find_row (c, mod, lookup);
  if (row != NULL && row->signal_frame)
    *signal_frame = true;
  if (row == NULL || !row->usable)
    return NULL;
  *memo_of (c, lookup) = (struct memo) { lookup, c->gen, row };
  return row;
}

/* The step from the frame at PC (its rules looked up at LOOKUP).  */
static enum step
step_frame (struct st_unwind_cache *c, Dwfl *dwfl, uint64_t lookup, struct state *s,
            struct copy *k, uint64_t *pc)
{
  const struct row *row = memo_row (c, lookup);
  if (row == NULL)
    {
      Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
      if (mod == NULL)
        return STEP_LIBDWFL;
      row = find_row (c, mod, lookup);
    }
  if (row == NULL || !row->usable)
    return STEP_LIBDWFL;
  return step (row, s, k, pc);
}

static void
hand_off (const struct state *s, uint64_t pc, size_t n_frames, const struct copy *k,
          const struct st_dwarf_regs *regs, struct st_unwind_handoff *h)
{
  h->n_frames = n_frames;
  h->read_end = k->read_end;
  h->regs = *regs;
  for (int i = 0; i < NREGS; i++)
    {
      h->regs.present[i] = (s->set & (1u << i)) != 0;
      h->regs.value[i] = h->regs.present[i] ? s->val[i] : 0;
    }
  h->regs.pc = pc;
}

/* Follows libdwfl's dwfl_thread_getframes with dwfl-unwind.c's frame
   callback: every frame passed to the callback has been stepped from (its
   dwfl_frame_pc asks whether the next frame is a signal frame), the frame
   past MAX_FRAMES included, so the reads, and with them stack_needed, are
   libdwfl's.  */
bool
st_unwind_cache_sample (struct st_unwind_cache *c, Dwfl *dwfl, const struct st_sample *sample,
                        const struct st_dwarf_regs *regs, struct st_raw_frame *frames,
                        size_t max_frames, struct st_unwind_result *result,
                        struct st_unwind_handoff *handoff)
{
  handoff->n_frames = 0;
  struct state state, *s = &state;
  s->set = 0;
  for (int i = 0; i < NREGS; i++)
    if (regs->present[i])
      {
        s->val[i] = regs->value[i];
        s->set |= 1u << i;
      }
  struct copy k = { .stack = sample->stack, .size = sample->stack_size, .sp = regs->sp,
                    .read_end = regs->sp, .dwfl = dwfl, .regs = regs };
  uint64_t pc = regs->pc;
  bool initial = true;
  size_t n = 0;
  enum st_stop_reason stop;
  for (;;)
    {
      uint64_t lookup = initial ? pc : pc - 1;
      if (n >= max_frames)
        {
          uint64_t ignored;
          if (step_frame (c, dwfl, lookup, s, &k, &ignored) == STEP_LIBDWFL)
            return false;
          stop = ST_STOP_FRAME_LIMIT;
          break;
        }
      frames[n++] = (struct st_raw_frame) { pc, initial };
      bool signal_frame;
      const struct row *row = frame_row (c, dwfl, lookup, &signal_frame);
      if (row == NULL)
        {
          /* A caller's frame without simple rules (a module without CFI,
             ld.so's _start): its registers are known, libdwfl steps on
             from it.  Not a sigreturn trampoline's: libdwfl would take it
             for the sampled frame, and the frame's pc is exact there (it
             names __restore_rt), not a return address as the hand-off
             mends it; the whole sample goes to libdwfl then.  */
          if (!initial && !signal_frame)
            hand_off (s, pc, n - 1, &k, regs, handoff);
          return false;
        }
      enum step r = step (row, s, &k, &pc);
      if (r == STEP_LIBDWFL)
        return false;
      if (r == STEP_END)
        {
          stop = ST_STOP_END;
          break;
        }
      initial = false;
    }
  result->frames = frames;
  result->n_frames = n;
  result->stop = stop;
  result->detail = NULL;
  result->stack_needed = k.read_end - regs->sp;
  return true;
}
