#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "basic/bytes.h"
#include "core/resolve/gopclntab.h"

#define GO116_MAGIC 0xfffffffau
#define GO118_MAGIC 0xfffffff0u
#define GO120_MAGIC 0xfffffff1u

/* A function's name in the name pool, or NULL when its offset or its end
   lies outside the pool.  */
static const char *
pool_name (const uint8_t *data, size_t size, uint64_t pool, int32_t off)
{
  if (off < 0 || pool >= size || (uint64_t) off >= size - pool)
    return NULL;
  const char *name = (const char *) data + pool + off;
  if (memchr (name, '\0', size - pool - off) == NULL)
    return NULL;
  return name;
}

int
st_gopclntab_parse (const uint8_t *data, size_t size, uint64_t text,
                    st_gopclntab_fn fn, void *arg, struct st_why *why)
{
  if (size < 8)
    return st_why_set (why, EBADMSG, ".gopclntab: %zu bytes, no header", size);
  uint32_t magic = st_get_u32 (data);
  if (magic != GO116_MAGIC && magic != GO118_MAGIC && magic != GO120_MAGIC)
    return st_why_set (why, EBADMSG, ".gopclntab: magic %#x is not Go 1.16 or later", magic);
  /* pad, pad, instruction quantum, pointer size.  */
  if (data[4] != 0 || data[5] != 0 || data[7] != 8)
    return st_why_set (why, EBADMSG, ".gopclntab: pointer size %u (only 64-bit programs)",
                       data[7]);
  bool go116 = magic == GO116_MAGIC;
  size_t n_words = go116 ? 7 : 8;
  if (size < 8 + n_words * 8)
    return st_why_set (why, EBADMSG, ".gopclntab: %zu bytes, a short header", size);
  uint64_t w[8];
  for (size_t i = 0; i < n_words; i++)
    w[i] = st_get_u64 (data + 8 + 8 * i);
  uint64_t nfunc = w[0];
  uint64_t text_start = go116 ? 0 : w[2];
  uint64_t names = go116 ? w[2] : w[3];
  uint64_t functab = go116 ? w[6] : w[7];
  if (text_start == 0)
    text_start = text;
  /* The function table: nfunc pairs and the end of the last function.  */
  uint64_t entry_size = go116 ? 16 : 8, word = go116 ? 8 : 4;
  if (functab >= size || nfunc >= (size - functab) / entry_size
      || (size - functab) - nfunc * entry_size < word)
    return st_why_at (why, EBADMSG, 8, ".gopclntab: %" PRIu64 " functions do not fit at %#"
                      PRIx64 " in %zu bytes", nfunc, functab, size);
  const uint8_t *tab = data + functab;
  int count = 0;
  for (uint64_t i = 0; i < nfunc; i++)
    {
      const uint8_t *e = tab + i * entry_size;
      uint64_t start, end, funcoff;
      if (go116)
        {
          start = st_get_u64 (e);
          funcoff = st_get_u64 (e + 8);
          end = st_get_u64 (e + 16);
        }
      else
        {
          start = text_start + st_get_u32 (e);
          funcoff = st_get_u32 (e + 4);
          end = text_start + st_get_u32 (e + 8);
        }
      /* The _func starts with its entry (a pointer before 1.18, a 32-bit
         offset after) and then the offset of its name.  */
      uint64_t name_at = funcoff + word;
      if (funcoff >= size - functab || size - functab - funcoff < word + 4)
        continue;
      const char *name = pool_name (data, size, names, (int32_t) st_get_u32 (tab + name_at));
      if (name == NULL || end <= start)
        continue;
      int r = fn (name, start, end, arg);
      if (r != 0)
        return r;
      if (count < INT32_MAX)
        count++;
    }
  return count;
}

int
st_gopclntab_read_elf (Elf *elf, st_gopclntab_fn fn, void *arg, struct st_why *why)
{
  GElf_Ehdr ehdr;
  size_t shstrndx;
  if (gelf_getehdr (elf, &ehdr) == NULL || elf_getshdrstrndx (elf, &shstrndx) != 0)
    return 0;
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB
      || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
    return 0;
  Elf_Scn *pcln = NULL;
  uint64_t text = 0;
  for (Elf_Scn *scn = NULL; (scn = elf_nextscn (elf, scn)) != NULL;)
    {
      GElf_Shdr shdr;
      const char *n;
      if (gelf_getshdr (scn, &shdr) == NULL
          || (n = elf_strptr (elf, shstrndx, shdr.sh_name)) == NULL)
        continue;
      if (strcmp (n, ".gopclntab") == 0 && shdr.sh_type == SHT_PROGBITS)
        pcln = scn;
      else if (strcmp (n, ".text") == 0)
        text = shdr.sh_addr;
    }
  if (pcln == NULL)
    return 0;
  Elf_Data *d = elf_getdata (pcln, NULL);
  if (d == NULL || d->d_buf == NULL)
    return st_why_set (why, EIO, ".gopclntab: %s", elf_errmsg (-1));
  return st_gopclntab_parse (d->d_buf, d->d_size, text, fn, arg, why);
}

bool
st_gopclntab_is_outermost (const char *name)
{
  static const char *const names[] = {
    "runtime.goexit", "runtime.goexit.abi0", "runtime.mstart", "runtime.mstart.abi0",
    "runtime.rt0_go", "runtime.rt0_go.abi0", "runtime.systemstack",
    "runtime.systemstack.abi0", "runtime.mcall", "runtime.mcall.abi0",
    "runtime.morestack", "runtime.morestack.abi0",
  };
  if (name == NULL || strncmp (name, "runtime.", 8) != 0)
    return false;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp (name, names[i]) == 0)
      return true;
  return false;
}
