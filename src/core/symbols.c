#include "config.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/symbols.h"

struct symbol {
  uint64_t start, end;   /* [start, end) in ELF addresses */
  uint32_t name;         /* offset into the string pool */
  uint8_t binding;
  bool sized;
};

struct st_symtab {
  struct symbol *syms;
  size_t n;
  char *names;
};

static size_t
leading_underscores (const char *s)
{
  size_t n = 0;
  while (s[n] == '_')
    n++;
  return n;
}

/* Of two symbols at one address, the one perf would show (perf's
   choose_best_symbol), so that our names agree with perf's.  */
static bool
better_symbol (const struct st_symtab *t, const struct symbol *a, const struct symbol *b)
{
  if (a->sized != b->sized)
    return a->sized;
  if ((a->binding == STB_WEAK) != (b->binding == STB_WEAK))
    return b->binding == STB_WEAK;
  if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
    return a->binding == STB_GLOBAL;
  const char *na = t->names + a->name, *nb = t->names + b->name;
  size_t ua = leading_underscores (na), ub = leading_underscores (nb);
  if (ua != ub)
    return ua < ub;
  return strlen (na) >= strlen (nb);
}

static bool
in_code_section (Elf *elf, GElf_Word shndx)
{
  GElf_Shdr shdr;
  Elf_Scn *scn = elf ? elf_getscn (elf, shndx) : NULL;
  return scn != NULL && gelf_getshdr (scn, &shdr) != NULL && (shdr.sh_flags & SHF_EXECINSTR);
}

/* Functions, and the assembler labels perf also counts as functions
   (untyped, default visibility, in a code section: _start, for one).  */
static bool
is_function (const GElf_Sym *sym, GElf_Word shndx, Elf *elf)
{
  int type = GELF_ST_TYPE (sym->st_info);
  if (type == STT_FUNC || type == STT_GNU_IFUNC)
    return true;
  return type == STT_NOTYPE && shndx != SHN_ABS
         && GELF_ST_VISIBILITY (sym->st_other) == STV_DEFAULT && in_code_section (elf, shndx);
}

static int
compare_start (const void *pa, const void *pb)
{
  const struct symbol *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return 0;
}

struct st_symtab *
st_symtab_build (Dwfl_Module *mod, Dwarf_Addr bias)
{
  struct st_symtab *t = calloc (1, sizeof *t);
  if (t == NULL)
    return NULL;
  int nsyms = dwfl_module_getsymtab (mod);
  if (nsyms <= 0)
    return t;
  t->syms = malloc (nsyms * sizeof *t->syms);
  size_t pool_cap = 4096, pool_len = 0;
  t->names = malloc (pool_cap);
  if (t->syms == NULL || t->names == NULL)
    goto oom;

  for (int i = 1; i < nsyms; i++)
    {
      GElf_Sym sym;
      GElf_Addr addr;
      GElf_Word shndx;
      Elf *elf;
      const char *name = dwfl_module_getsym_info (mod, i, &sym, &addr, &shndx, &elf, NULL);
      if (name == NULL || name[0] == '\0' || shndx == SHN_UNDEF)
        continue;
      if (!is_function (&sym, shndx, elf))
        continue;
      size_t len = strlen (name) + 1;
      if (pool_len + len > pool_cap)
        {
          while (pool_len + len > pool_cap)
            pool_cap *= 2;
          char *p = realloc (t->names, pool_cap);
          if (p == NULL)
            goto oom;
          t->names = p;
        }
      memcpy (t->names + pool_len, name, len);
      struct symbol *s = &t->syms[t->n++];
      s->start = addr - bias;
      s->end = s->start + sym.st_size;
      s->sized = sym.st_size != 0;
      s->name = pool_len;
      s->binding = GELF_ST_BIND (sym.st_info);
      pool_len += len;
    }
  qsort (t->syms, t->n, sizeof *t->syms, compare_start);

  /* One symbol per address (the best), and unsized symbols reach up to the
     next one, as perf's symbols__fixup_end does.  */
  size_t out = 0;
  for (size_t i = 0; i < t->n; i++)
    {
      if (out > 0 && t->syms[out - 1].start == t->syms[i].start)
        {
          if (better_symbol (t, &t->syms[i], &t->syms[out - 1]))
            t->syms[out - 1] = t->syms[i];
          continue;
        }
      t->syms[out++] = t->syms[i];
    }
  t->n = out;
  for (size_t i = 0; i < t->n; i++)
    if (!t->syms[i].sized)
      t->syms[i].end = i + 1 < t->n ? t->syms[i + 1].start : t->syms[i].start + 1;
  return t;

oom:
  st_symtab_free (t);
  return NULL;
}

void
st_symtab_free (struct st_symtab *t)
{
  if (t == NULL)
    return;
  free (t->syms);
  free (t->names);
  free (t);
}

size_t
st_symtab_size (const struct st_symtab *t)
{
  return t->n;
}

const char *
st_symtab_lookup (const struct st_symtab *t, uint64_t addr, uint64_t *offset)
{
  /* The last symbol starting at or below ADDR.  */
  size_t lo = 0, hi = t->n;
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (t->syms[mid].start <= addr)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo == 0)
    return NULL;
  const struct symbol *s = &t->syms[lo - 1];
  if (addr >= s->end)
    return NULL;
  *offset = addr - s->start;
  return t->names + s->name;
}
