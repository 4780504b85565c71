#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/array.h"
#include "basic/bsearch.h"
#include "core/resolve/demangle.h"
#include "core/resolve/gopclntab.h"
#include "core/resolve/symbol-table.h"

struct symbol {
  uint64_t start, end;   /* [start, end) in ELF addresses */
  uint64_t limit;        /* end of its section */
  uint32_t raw;          /* offset into the string pool of the name in the
                            file; also the symbol's order there, as the pool
                            only grows */
  uint8_t binding;
  bool sized;
  bool plt;              /* a PLT entry: the name is the callee's + "@plt" */
};

/* What a table is: sorted symbols and their names, built once per file
   and read, never written, afterwards (shared by every unwinding thread
   that meets the file: resolve/file-shared.h).  */
struct st_symtab_data {
  struct symbol *syms;
  size_t n;
  char *names;
  bool go;               /* the file has a .gopclntab: a Go program */
  enum st_demangle_style style;
};

/* One thread's view of a table: what its lookups write.  Names are
   demangled on a symbol's first lookup, not when the table is built: a
   C++ library's tens of thousands of names would cost a large fraction of
   a second, and a profile hits few of them.  The view is its thread's
   alone, so a lookup fills SHOWN and the memo without a lock.  */
struct st_symtab {
  const struct st_symtab_data *d;
  struct st_symtab_data *owned;   /* D, when the view owns it */
  char **shown;          /* per symbol: its shown name once looked up (a
                            string of NAMES when demangling changes
                            nothing, else its own allocation), or NULL */
  /* The answers of recent lookups, by address: a profile's samples land
     on a few thousand pcs again and again, and one probe here costs less
     than a binary search over thousands of symbols (cache misses).  */
  struct memo {
    uint64_t addr_plus_1;  /* 0: empty */
    uint32_t index;        /* the symbol, or MEMO_NONE */
  } memo[1024];
};

#define MEMO_NONE UINT32_MAX

/* The name S is shown with, in a new allocation, or NULL when it is the
   name in the file (or without memory).  perf demangles a PLT entry's
   callee and then adds "@plt".  */
static char *
demangled_name (const struct st_symtab_data *t, const struct symbol *s)
{
  const char *raw = t->names + s->raw;
  if (!s->plt)
    return st_demangle (raw, t->style);
  size_t len = strlen (raw) - strlen ("@plt");
  char *callee = strndup (raw, len);
  char *d = callee ? st_demangle (callee, t->style) : NULL;
  free (callee);
  if (d == NULL)
    return NULL;
  char *out = malloc (strlen (d) + sizeof "@plt");
  if (out != NULL)
    {
      strcpy (out, d);
      strcat (out, "@plt");
    }
  free (d);
  return out;
}

static size_t
leading_underscores (const char *s)
{
  size_t n = 0;
  while (s[n] == '_')
    n++;
  return n;
}

/* Of two symbols at one address, whether LATER (after EARLIER in the
   file) is the one perf would show instead (perf's choose_best_symbol), so
   that our names agree with perf's.  perf compares the names it shows
   (demangled), and of two equal ones keeps the first in the file: libc's
   debug file has __libc_start_main@@GLIBC_2.34 before
   __libc_start_main@GLIBC_2.2.5, and perf shows the first.  */
static bool
better_symbol (const struct st_symtab_data *t, const struct symbol *later, const struct symbol *earlier)
{
  const struct symbol *a = later, *b = earlier;
  if (a->sized != b->sized)
    return a->sized;
  if ((a->binding == STB_WEAK) != (b->binding == STB_WEAK))
    return b->binding == STB_WEAK;
  if ((a->binding == STB_GLOBAL) != (b->binding == STB_GLOBAL))
    return a->binding == STB_GLOBAL;
  /* Aliases are few: their names are demangled here, and again on a
     lookup of the one that stays.  */
  char *da = demangled_name (t, a), *db = demangled_name (t, b);
  const char *na = da ? da : t->names + a->raw, *nb = db ? db : t->names + b->raw;
  size_t ua = leading_underscores (na), ub = leading_underscores (nb);
  bool better = ua != ub ? ua < ub : strlen (na) > strlen (nb);
  free (da);
  free (db);
  return better;
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

/* The table's order: by start, and the file's order (RAW grows with it)
   among symbols that start together, so that the sort needs no stability
   and every sort gives the same table.  */
static inline bool
symbol_before (const struct symbol *a, const struct symbol *b)
{
  return a->start != b->start ? a->start < b->start : a->raw < b->raw;
}

static inline void
swap_symbols (struct symbol *a, struct symbol *b)
{
  struct symbol t = *a;
  *a = *b;
  *b = t;
}

/* Moves S[ROOT] down the heap S[0..N) to where it belongs.  */
static void
sift_down (struct symbol *s, size_t root, size_t n)
{
  for (size_t child; (child = 2 * root + 1) < n; root = child)
    {
      if (child + 1 < n && symbol_before (&s[child], &s[child + 1]))
        child++;
      if (!symbol_before (&s[root], &s[child]))
        break;
      swap_symbols (&s[root], &s[child]);
    }
}

/* Heapsort of S[0..N), for sort_symbols' worst cases.  */
static void
heap_sort_symbols (struct symbol *s, size_t n)
{
  for (size_t i = n / 2; i-- > 0;)
    sift_down (s, i, n);
  for (size_t end = n; end-- > 1;)
    {
      swap_symbols (&s[0], &s[end]);
      sift_down (s, 0, end);
    }
}

/* Sorts S[0..N) in place (introsort).  glibc 2.36's qsort is a merge sort
   into a buffer as large as the array, through a comparison function: on
   this project's VMs, where a first touch of a page costs 10-40 us, it took
   a tenth of a short run's time for libc's 7,000 functions, its buffer's
   page faults the most of it.  */
static void
sort_symbols (struct symbol *s, size_t n, unsigned depth)
{
  while (n > 16)
    {
      if (depth-- == 0)
        {
          heap_sort_symbols (s, n);
          return;
        }
      /* The median of the first, middle and last as pivot, moved to the
         front; Hoare's partition of the rest around it.  */
      struct symbol *a = &s[0], *m = &s[n / 2], *z = &s[n - 1];
      if (symbol_before (m, a))
        swap_symbols (m, a);
      if (symbol_before (z, m))
        {
          swap_symbols (z, m);
          if (symbol_before (m, a))
            swap_symbols (m, a);
        }
      swap_symbols (&s[0], m);
      size_t i = 0, j = n;
      for (;;)
        {
          while (symbol_before (&s[++i], &s[0]))
            ;
          while (symbol_before (&s[0], &s[--j]))
            ;
          if (i >= j)
            break;
          swap_symbols (&s[i], &s[j]);
        }
      swap_symbols (&s[0], &s[j]);
      /* Recurse into the smaller side, loop on the larger: the stack stays
         logarithmic.  */
      if (j < n - j - 1)
        {
          sort_symbols (s, j, depth);
          s += j + 1;
          n -= j + 1;
        }
      else
        {
          sort_symbols (s + j + 1, n - j - 1, depth);
          n = j;
        }
    }
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0 && symbol_before (&s[k], &s[k - 1]); k--)
      swap_symbols (&s[k], &s[k - 1]);
}

/* The most symbols a table is first allocated for, whatever the file
   says it has: libc's 10,000, a large C++ library's hundreds of thousands
   after a few doublings.  */
#define FIRST_CAP_MAX ((size_t) 1 << 16)

/* Collects symbols and their names while a table is built.  */
struct builder {
  struct st_symtab_data *t;
  size_t cap, pool_len, pool_cap;
  size_t first_cap;      /* the symbols' first allocation: the file's count */
};

/* Copies NAME SUFFIX into the pool; its offset, or UINT32_MAX without
   memory (or past 4 GiB of names).  */
static uint32_t
pool_add (struct builder *b, const char *name, const char *suffix)
{
  struct st_symtab_data *t = b->t;
  size_t len = strlen (name) + strlen (suffix) + 1;
  if (b->pool_len + len > UINT32_MAX)
    return UINT32_MAX;
  if (b->pool_len + len > b->pool_cap)
    {
      size_t cap = b->pool_cap ? b->pool_cap : 24 * b->first_cap;
      while (b->pool_len + len > cap)
        cap *= 2;
      char *p = realloc (t->names, cap);
      if (p == NULL)
        return UINT32_MAX;
      t->names = p;
      b->pool_cap = cap;
    }
  memcpy (t->names + b->pool_len, name, strlen (name));
  memcpy (t->names + b->pool_len + strlen (name), suffix, strlen (suffix) + 1);
  uint32_t at = b->pool_len;
  b->pool_len += len;
  return at;
}

/* Adds a symbol named NAME SUFFIX (a PLT entry's "@plt").  */
static bool
add_symbol (struct builder *b, const char *name, const char *suffix, uint64_t start,
            uint64_t size, uint8_t binding, uint64_t limit)
{
  struct st_symtab_data *t = b->t;
  if (ST_GROW (t->syms, b->cap, t->n, b->first_cap) < 0)
    return false;
  uint32_t raw = pool_add (b, name, suffix);
  if (raw == UINT32_MAX)
    return false;
  struct symbol *sym = &t->syms[t->n++];
  sym->start = start;
  sym->end = start + size;
  sym->limit = limit;
  sym->sized = size != 0;
  sym->raw = raw;
  sym->binding = binding;
  sym->plt = suffix[0] != '\0';
  return true;
}

/* The end of the section holding a symbol, in the symbol's own file
   addresses: an unsized symbol never reaches past it.  */
static uint64_t
section_end (Elf *elf, GElf_Word shndx, uint64_t fallback)
{
  GElf_Shdr shdr;
  Elf_Scn *scn = elf ? elf_getscn (elf, shndx) : NULL;
  if (scn == NULL || gelf_getshdr (scn, &shdr) == NULL)
    return fallback;
  return shdr.sh_addr + shdr.sh_size;
}

static Elf_Scn *
find_section (Elf *elf, const char *name, GElf_Shdr *shdr)
{
  size_t shstrndx;
  if (elf_getshdrstrndx (elf, &shstrndx) != 0)
    return NULL;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      const char *n;
      if (gelf_getshdr (scn, shdr) != NULL
          && (n = elf_strptr (elf, shstrndx, shdr->sh_name)) != NULL && strcmp (n, name) == 0)
        return scn;
    }
  return NULL;
}

/* PLT entries have no symbols: name them NAME@plt from the PLT
   relocations, as perf does, so that a sample in a PLT stub says which
   function it was about to call.  */
static bool
add_plt_symbols (struct builder *b, Elf *elf)
{
  GElf_Ehdr ehdr;
  if (gelf_getehdr (elf, &ehdr) == NULL)
    return true;
  uint64_t header, entry = 16;
  if (ehdr.e_machine == EM_X86_64 || ehdr.e_machine == EM_386)
    header = 16;
  else if (ehdr.e_machine == EM_AARCH64 || ehdr.e_machine == EM_RISCV)
    header = 32;
  else if (ehdr.e_machine == EM_ARM)
    header = 20, entry = 12;   /* binutils' elf32_arm_plt0_entry, plt_entry */
  else if (ehdr.e_machine == EM_S390)
    header = 32, entry = 32;
  else
    return true;
  GElf_Shdr plt, plt_sec, rela;
  if (find_section (elf, ".plt", &plt) == NULL)
    return true;
  Elf_Scn *rela_scn = find_section (elf, ".rela.plt", &rela);
  if (rela_scn == NULL)
    rela_scn = find_section (elf, ".rel.plt", &rela);
  if (rela_scn == NULL)
    return true;
  /* With IBT, the stubs that are called live in .plt.sec, without a
     header.  */
  uint64_t first = plt.sh_addr + header, first_offset = plt.sh_offset + header;
  if (find_section (elf, ".plt.sec", &plt_sec) != NULL)
    {
      first = plt_sec.sh_addr;
      first_offset = plt_sec.sh_offset;
      plt.sh_size = plt_sec.sh_size + header;
    }
  Elf_Scn *dynsym_scn = elf_getscn (elf, rela.sh_link);
  GElf_Shdr dynsym;
  Elf_Data *relocs = elf_getdata (rela_scn, NULL);
  Elf_Data *syms = dynsym_scn ? elf_getdata (dynsym_scn, NULL) : NULL;
  if (relocs == NULL || syms == NULL || gelf_getshdr (dynsym_scn, &dynsym) == NULL)
    return true;
  size_t n = rela.sh_entsize ? rela.sh_size / rela.sh_entsize : 0;
  for (size_t i = 0; i < n && (i + 1) * entry + header <= plt.sh_size; i++)
    {
      GElf_Rela r;
      GElf_Rel rel;
      uint64_t info;
      if (rela.sh_type == SHT_RELA)
        {
          if (gelf_getrela (relocs, i, &r) == NULL)
            break;
          info = r.r_info;
        }
      else
        {
          if (gelf_getrel (relocs, i, &rel) == NULL)
            break;
          info = rel.r_info;
        }
      /* gelf_getrel(a) gives r_info in the 64-bit layout whatever the class.  */
      size_t symndx = GELF_R_SYM (info);
      GElf_Sym sym;
      const char *name = "";
      if (symndx != 0 && gelf_getsym (syms, symndx, &sym) != NULL)
        {
          name = elf_strptr (elf, dynsym.sh_link, sym.st_name);
          if (name == NULL)
            name = "";
        }
      uint64_t start = first + i * entry;
      /* An IRELATIVE relocation (a static-pie's ifuncs) names no symbol:
         perf 6.1 calls the entry by its file offset, not a bare "@plt".  */
      char by_offset[32];
      if (name[0] == '\0')
        {
          snprintf (by_offset, sizeof by_offset, "offset_%#" PRIx64, first_offset + i * entry);
          name = by_offset;
        }
      if (!add_symbol (b, name, "@plt", start, entry, STB_GLOBAL, start + entry))
        return false;
    }
  return true;
}

static int
add_go_symbol (const char *name, uint64_t start, uint64_t end, void *arg)
{
  return add_symbol (arg, name, "", start, end - start, STB_GLOBAL, end) ? 0 : -ENOMEM;
}

/* A Go program without .symtab (Debian's, or built with -ldflags=-s)
   still names its functions in .gopclntab, for its own tracebacks.  */
static bool
add_go_symbols (struct builder *b, Elf *elf)
{
  GElf_Shdr shdr;
  b->t->go = find_section (elf, ".gopclntab", &shdr) != NULL;
  if (!b->t->go || find_section (elf, ".symtab", &shdr) != NULL)
    return true;
  struct st_why why = { 0 };
  int r = st_gopclntab_read_elf (elf, add_go_symbol, b, &why);
  return r != -ENOMEM;
}

/* A table being built keeps its symbols and names in arrays that grow;
   discard_built frees them.  */
static void
discard_built (struct st_symtab_data *t)
{
  free (t->syms);
  free (t->names);
  free (t);
}

/* The built table T as every thread will read it: its arrays given back
   what they were allocated beyond their use, in place (a copy into one
   block would touch as many fresh pages again, each a page fault).  */
static void
trim (struct st_symtab_data *t, size_t pool_len)
{
  if (t->n > 0)
    {
      struct symbol *syms = realloc (t->syms, t->n * sizeof *t->syms);
      if (syms != NULL)
        t->syms = syms;
    }
  if (pool_len > 0)
    {
      char *names = realloc (t->names, pool_len);
      if (names != NULL)
        t->names = names;
    }
}

struct st_symtab_data *
st_symtab_data_build (Dwfl_Module *mod, Dwarf_Addr bias)
{
  struct st_symtab_data *t = calloc (1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->style = st_demangle_style ();
  int nsyms = dwfl_module_getsymtab (mod);
  /* Room for the file's symbols at once, and their names at 24 bytes
     each, rather than arrays that double: each larger copy touches fresh
     pages.  Functions are most of a file's symbols; what is left over is
     given back in place (trim).  The count is the file's word (its symbol
     table's size over an entry size it chooses): past FIRST_CAP_MAX, the
     arrays grow with the functions actually found.  */
  size_t first_cap = nsyms > 256 ? (size_t) nsyms : 256;
  struct builder b = { .t = t, .first_cap = first_cap < FIRST_CAP_MAX ? first_cap : FIRST_CAP_MAX };
  for (int i = 1; i < nsyms; i++)
    {
      GElf_Sym sym;
      GElf_Addr addr;
      GElf_Word shndx;
      Elf *elf;
      const char *name = dwfl_module_getsym_info (mod, i, &sym, &addr, &shndx, &elf, NULL);
      if (name == NULL || name[0] == '\0' || shndx == SHN_UNDEF)
        continue;
      /* ARM, AArch64 and RISC-V mapping symbols ($a, $t, $d, $x) mark
         instruction sets and data, not functions.  */
      if (name[0] == '$')
        continue;
      if (!is_function (&sym, shndx, elf))
        continue;
      uint64_t start = addr - bias;
      GElf_Ehdr ehdr;
      /* A Thumb function's symbol has bit 0 set; its code starts below.  */
      if (GELF_ST_TYPE (sym.st_info) == STT_FUNC && (start & 1)
          && gelf_getehdr (elf, &ehdr) != NULL && ehdr.e_machine == EM_ARM)
        start &= ~(uint64_t) 1;
      uint64_t limit = start + (section_end (elf, shndx, UINT64_MAX) - sym.st_value);
      if (limit <= start)
        limit = UINT64_MAX;
      if (!add_symbol (&b, name, "", start, sym.st_size, GELF_ST_BIND (sym.st_info), limit))
        goto oom;
    }
  Dwarf_Addr main_bias;
  Elf *main_elf = dwfl_module_getelf (mod, &main_bias);
  if (main_elf != NULL && (!add_plt_symbols (&b, main_elf) || !add_go_symbols (&b, main_elf)))
    goto oom;
  unsigned depth = 0;
  for (size_t n = t->n; n > 1; n >>= 1)
    depth += 2;
  sort_symbols (t->syms, t->n, depth);

  /* One symbol per address (the best), and unsized symbols reach up to the
     next one, as perf's symbols__fixup_end does, but not out of their
     section (an unsized _init must not swallow the PLT after it).  */
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
      {
        uint64_t end = i + 1 < t->n ? t->syms[i + 1].start : t->syms[i].start + 1;
        t->syms[i].end = end < t->syms[i].limit ? end : t->syms[i].limit;
      }
  trim (t, b.pool_len);
  return t;

oom:
  discard_built (t);
  return NULL;
}

void
st_symtab_data_free (struct st_symtab_data *t)
{
  if (t != NULL)
    discard_built (t);
}

struct st_symtab *
st_symtab_view (const struct st_symtab_data *d)
{
  struct st_symtab *t = calloc (1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->d = d;
  t->shown = calloc (d->n ? d->n : 1, sizeof *t->shown);
  if (t->shown == NULL)
    {
      free (t);
      return NULL;
    }
  return t;
}

struct st_symtab *
st_symtab_own (struct st_symtab_data *d)
{
  struct st_symtab *t = d != NULL ? st_symtab_view (d) : NULL;
  if (t == NULL)
    {
      st_symtab_data_free (d);
      return NULL;
    }
  t->owned = d;
  return t;
}

struct st_symtab *
st_symtab_build (Dwfl_Module *mod, Dwarf_Addr bias)
{
  return st_symtab_own (st_symtab_data_build (mod, bias));
}

void
st_symtab_free (struct st_symtab *t)
{
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->d->n; i++)
    if (t->shown[i] != t->d->names + t->d->syms[i].raw)
      free (t->shown[i]);
  free (t->shown);
  st_symtab_data_free (t->owned);
  free (t);
}

size_t
st_symtab_size (const struct st_symtab *t)
{
  return t->d->n;
}

const char *
st_symtab_lookup (const struct st_symtab *t, uint64_t addr, uint64_t *offset,
                  const char **raw)
{
  const struct st_symtab_data *d = t->d;
  /* The memo is not part of the table's value either (see below).  */
  struct memo *m = &((struct st_symtab *) t)->memo[(addr ^ (addr >> 10)) & 1023];
  size_t lo;
  if (m->addr_plus_1 == addr + 1)
    {
      if (m->index == MEMO_NONE)
        return NULL;
      lo = (size_t) m->index + 1;
    }
  else
    {
      /* The last symbol starting at or below ADDR.  */
      lo = ST_BSEARCH_UPPER (d->syms, d->n, start, addr);
      bool none = lo == 0 || addr >= d->syms[lo - 1].end || lo - 1 >= MEMO_NONE;
      m->addr_plus_1 = addr + 1;
      m->index = none ? MEMO_NONE : (uint32_t) (lo - 1);
      if (none)
        return NULL;
    }
  const struct symbol *s = &d->syms[lo - 1];
  *offset = addr - s->start;
  if (raw != NULL)
    *raw = d->names + s->raw;
  /* The memo of the shown name is not part of the table's value: a lookup
     fills it in on the table it was given as const.  */
  char **shown = &((struct st_symtab *) t)->shown[lo - 1];
  if (*shown == NULL)
    {
      char *name = demangled_name (d, s);
      *shown = name ? name : d->names + s->raw;
    }
  return *shown;
}

bool
st_symtab_is_go (const struct st_symtab *t)
{
  return t->d->go;
}
