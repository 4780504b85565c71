#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "core/unwind/epilogue.h"
#include "core/unwind/module-symbols.h"
#include "core/unwind/unwind-cache.h"
#include "core/unwind/unwind-rows.h"

/* rbp, by which libdw's x86_64 backend guesses a frame without CFI.  */
#define FP_REG 6

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
    st_rows_module_release (&c->mods[i]);
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
  st_rows_module_init (m, mod);
  return m;
}

/* The rules at LOOKUP in MOD.  NULL on allocation failure.  */
static const struct row *
find_row (struct st_unwind_cache *c, Dwfl_Module *mod, uint64_t lookup)
{
  struct module_rows *m = module_rows (c, mod);
  return m != NULL ? st_rows_find (m, lookup) : NULL;
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
  /* The first frame since whose rbx is known by the ABI alone, where
     libdwfl has lost it (rbx_by_abi); 0: none.  */
  size_t rbx_by_abi_from;
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

/* The row at LOOKUP, a frame that is not Go's outermost: NULL when
   there is none (no module, Go's outermost frame, no memory); a row that
   is not usable when libdwfl steps there.  *M: the rows of its module, or
   NULL when the row was memoized (a usable one).  */
static const struct row *
frame_row (struct st_unwind_cache *c, Dwfl *dwfl, uint64_t lookup, struct module_rows **m)
{
  *m = NULL;
  const struct row *row = memo_row (c, lookup);
  if (row != NULL)
    return row;
  Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
  if (mod == NULL || st_module_is_go_outermost (mod, lookup) || (*m = module_rows (c, mod)) == NULL)
    return NULL;
  row = st_rows_find (*m, lookup);
  if (row != NULL && row->usable)
    *memo_of (c, lookup) = (struct memo) { lookup, c->gen, row };
  return row;
}

/* The usable row of the frame whose rules are looked up at LOOKUP, or
   NULL: libdwfl steps there.  */
static const struct row *
usable_row (struct st_unwind_cache *c, Dwfl *dwfl, uint64_t lookup)
{
  const struct row *row = memo_row (c, lookup);
  if (row == NULL)
    {
      Dwfl_Module *mod = dwfl_addrmodule (dwfl, lookup);
      if (mod == NULL)
        return NULL;
      row = find_row (c, mod, lookup);
    }
  return row != NULL && row->usable ? row : NULL;
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
  /* libdwfl, unwinding the whole sample, would not have rbx here: a rule
     of its own that reads rbx (the return address kept in it) must fail
     as there, and an rbx-based CFA go on as there.  */
  h->rbx_lost_at = 0;
  if (s->rbx_by_abi_from != 0 && h->regs.present[RBX_REG])
    {
      h->rbx_lost_at = s->rbx_by_abi_from;
      h->rbx = s->val[RBX_REG];
      h->regs.present[RBX_REG] = false;
      h->regs.value[RBX_REG] = 0;
    }
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
  handoff->rbx_lost_at = 0;
  struct state state, *s = &state;
  s->set = 0;
  s->rbx_by_abi_from = 0;
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
  const char *detail = NULL;
  for (;;)
    {
      uint64_t lookup = initial ? pc : pc - 1;
      if (n >= max_frames)
        {
          /* libdwfl's look past the limit (is the next frame a signal
             frame's?) fails where it lost rbx and reads nothing; the cache
             knows rbx and would read the return address, which libdwfl's
             stack_needed never counted: an rbx-based CFA goes to libdwfl
             (dwfl-unwind.c's note_rbx).  */
          uint64_t ignored;
          const struct row *ahead = usable_row (c, dwfl, lookup);
          if (ahead == NULL || ahead->cfa_reg == RBX_REG
              || step (ahead, s, &k, &ignored) == STEP_LIBDWFL)
            return false;
          stop = ST_STOP_FRAME_LIMIT;
          break;
        }
      frames[n++] = (struct st_raw_frame) { pc, initial };
      struct module_rows *m;
      const struct row *row = frame_row (c, dwfl, lookup, &m);
      int no_cfi_stop;
      bool plt0;
      if (row != NULL && row->no_cfi_stops && (s->set & (1u << FP_REG)) && s->val[FP_REG] == 0
          && (!initial || !st_code_in_plt (dwfl, pc, &plt0))
          && m != NULL && st_rows_no_cfi_stop (m, row, lookup, &no_cfi_stop))
        {
          /* libdwfl, handed this frame, would find no CFI and no frame to
             step to by the frame pointer, and stop with the .eh_frame
             lookup's error (unwind-rows.h), unless it is the last frame
             room is left for.  */
          stop = n >= max_frames ? ST_STOP_FRAME_LIMIT : (enum st_stop_reason) no_cfi_stop;
          detail = stop == ST_STOP_FRAME_LIMIT ? NULL : row->no_cfi_error;
          break;
        }
      if (row == NULL || !row->usable)
        {
          /* A caller's frame without simple rules (a module without CFI,
             ld.so's _start with a frame pointer): its registers are known,
             libdwfl steps on from it.  Not a sigreturn trampoline's:
             libdwfl would take it for the sampled frame, and the frame's pc
             is exact there (it names __restore_rt), not a return address as
             the hand-off mends it; the whole sample goes to libdwfl then.  */
          if (!initial && (row == NULL || !row->signal_frame))
            hand_off (s, pc, n - 1, &k, regs, handoff);
          return false;
        }
      enum step r = step (row, s, &k, &pc);
      if (r == STEP_LIBDWFL)
        return false;
      if (row->ruled & (1u << RBX_REG))
        s->rbx_by_abi_from = 0;
      else if (row->rbx_by_abi && s->rbx_by_abi_from == 0)
        s->rbx_by_abi_from = n;   /* the caller's frame, next in FRAMES */
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
  result->detail = detail;
  result->stack_needed = k.read_end - regs->sp;
  return true;
}
