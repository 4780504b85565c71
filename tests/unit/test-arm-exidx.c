/* The .ARM.exidx reader and interpreter (src/core/unwind/arm-exidx.c) on
 * Debian's real armhf libc, whose only unwind tables these are.  The oracle
 * is binutils: `arm-linux-gnueabihf-readelf -u` decodes every entry of the
 * same file (its function address, EXIDX_CANTUNWIND, the instruction
 * bytes), independently of our code.  Both come from tools/install-deps.sh
 * (gcc-arm-linux-gnueabihf, libc6-armhf-cross).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <libelf.h>

#include "core/unwind/arm-exidx.h"

#define LIBC "/usr/arm-linux-gnueabihf/lib/libc.so.6"
#define READELF "arm-linux-gnueabihf-readelf"

struct libc {
  int fd;
  Elf *elf;
  struct st_exidx_tables t;
};

static int
open_libc (void **state)
{
  static struct libc l;
  elf_version (EV_CURRENT);
  l.fd = open (LIBC, O_RDONLY);
  if (l.fd < 0)
    {
      fprintf (stderr, "%s: %m (tools/install-deps.sh installs libc6-armhf-cross)\n", LIBC);
      return -1;
    }
  l.elf = elf_begin (l.fd, ELF_C_READ_MMAP, NULL);
  struct st_why why = { 0 };
  if (l.elf == NULL || st_exidx_tables_from_elf (l.elf, &l.t, &why) < 0)
    {
      fprintf (stderr, "%s: no exidx tables: %s\n", LIBC, why.text);
      return -1;
    }
  *state = &l;
  return 0;
}

static int
close_libc (void **state)
{
  struct libc *l = *state;
  elf_end (l->elf);
  close (l->fd);
  return 0;
}

/* One entry as readelf -u prints it.  */
struct want {
  uint32_t fn;
  bool cantunwind, generic;
  size_t n_ops;
  uint8_t ops[64];
};

/* Parses readelf -u's listing: "0xADDR: ..." starts an entry, its
   instruction lines start with the bytes ("  0x84 0x08 pop {r7, r14}").  */
static size_t
readelf_entries (struct want *w, size_t max)
{
  FILE *p = popen (READELF " -u " LIBC, "r");
  assert_non_null (p);
  char line[512];
  size_t n = 0;
  while (fgets (line, sizeof line, p) != NULL)
    {
      unsigned fn;
      char rest[64];
      if (sscanf (line, "0x%x: %63s", &fn, rest) == 2)
        {
          assert_true (n < max);
          w[n] = (struct want) { .fn = fn, .cantunwind = strstr (line, "[cantunwind]") != NULL };
          n++;
          continue;
        }
      if (n == 0)
        continue;
      if (strstr (line, "Personality routine:") != NULL)
        w[n - 1].generic = true;
      const char *s = line;
      while (*s == ' ')
        s++;
      unsigned byte;
      int used;
      while (s[0] == '0' && s[1] == 'x' && sscanf (s, "0x%2x%n", &byte, &used) == 1 && used == 4
             && (s[4] == ' ' || s[4] == '\n'))
        {
          assert_true (w[n - 1].n_ops < sizeof w[n - 1].ops);
          w[n - 1].ops[w[n - 1].n_ops++] = (uint8_t) byte;
          s += 4;
          while (*s == ' ')
            s++;
        }
    }
  assert_int_equal (pclose (p), 0);
  return n;
}

static void
test_every_libc_entry_decodes_as_readelf_does (void **state)
{
  struct libc *l = *state;
  static struct want w[4096];
  size_t n = readelf_entries (w, 4096);
  print_message ("%s: readelf lists %zu entries, our table has %u\n", LIBC, n,
                 l->t.exidx_entries);
  assert_true (n > 500);
  assert_int_equal (n, l->t.exidx_entries);
  size_t compact = 0, generic = 0, cant = 0;
  for (uint32_t i = 0; i < n; i++)
    {
      static struct st_exidx_entry e;
      struct st_why why = { 0 };
      if (st_exidx_entry_at (&l->t, i, &e, &why) != 0)
        fail_msg ("entry %u: %s", i, why.text);
      assert_int_equal (e.fn_start, w[i].fn);
      assert_int_equal (e.cantunwind, w[i].cantunwind);
      if (e.cantunwind)
        cant++;
      else if (w[i].generic)
        {
          /* readelf does not decode a personality routine's own data.  */
          assert_int_equal (e.personality, -1);
          assert_true (e.n_ops >= 3);
          generic++;
        }
      else
        {
          assert_int_equal (e.n_ops, w[i].n_ops);
          assert_memory_equal (e.ops, w[i].ops, e.n_ops);
          compact++;
        }
      /* The lookup finds the entry from its first byte to the next's.  */
      static struct st_exidx_entry found;
      assert_int_equal (st_exidx_lookup (&l->t, w[i].fn, &found, &why), 0);
      assert_int_equal (found.index, i);
      if (i + 1 < n && w[i + 1].fn > w[i].fn + 1)
        {
          assert_int_equal (st_exidx_lookup (&l->t, w[i + 1].fn - 1, &found, &why), 0);
          assert_int_equal (found.index, i);
        }
    }
  print_message ("compact %zu, GNU personality %zu, cantunwind %zu\n", compact, generic, cant);
  assert_true (compact > 0 && generic > 0 && cant > 0);
  static struct st_exidx_entry e;
  assert_int_equal (st_exidx_lookup (&l->t, w[0].fn - 1, &e, NULL), -ENOENT);
}

/* A stack copy of words from BASE.  */
struct stack {
  uint32_t base;
  const uint32_t *words;
  size_t n;
};

static int
read_word (uint32_t addr, uint32_t *value, void *arg)
{
  const struct stack *s = arg;
  if (addr < s->base || (addr - s->base) % 4 || (addr - s->base) / 4 >= s->n)
    return -EFAULT;
  *value = s->words[(addr - s->base) / 4];
  return 0;
}

/* The syscall stub under kill(): push {r7, lr}; mov r7, ip; svc 0; pop
   {r7, pc}.  Its entry: pop {r7, r14}.  */
static void
test_syscall_stub_pops_r7_and_returns_to_lr (void **state)
{
  struct libc *l = *state;
  static struct st_exidx_entry e;
  assert_int_equal (st_exidx_lookup (&l->t, 0x1e616, &e, NULL), 0);
  assert_int_equal (e.fn_start, 0x1e610);
  static const uint32_t words[] = { 0x1111, 0x5e42d, 0x2222 };
  struct stack s = { 0x7000, words, 3 };
  struct st_arm_regs r = { .known = 0xffff };
  r.r[13] = 0x7000;
  r.r[14] = 0xdead;
  assert_int_equal (st_exidx_execute (&e, &r, read_word, &s, NULL), 0);
  assert_int_equal (r.r[7], 0x1111);
  assert_int_equal (r.r[15], 0x5e42c);   /* the Thumb bit cleared */
  assert_int_equal (r.r[13], 0x7008);
}

/* glibc's __default_sa_restorer: its entry describes the signal frame (vsp
   += 32, pop r0-r3, pop r4-r15): the interrupted pc, exact.  */
static void
test_signal_restorer_restores_the_interrupted_context (void **state)
{
  struct libc *l = *state;
  static struct st_exidx_entry e;
  assert_int_equal (st_exidx_lookup (&l->t, 0x2e1a0 - 1, &e, NULL), 0);
  uint32_t words[24];
  for (int i = 0; i < 24; i++)
    words[i] = 0x100 + i;
  words[8 + 13] = 0x9000;   /* the interrupted sp */
  words[8 + 15] = 0x1e616;  /* the interrupted pc */
  struct stack s = { 0x8000, words, 24 };
  struct st_arm_regs r = { .known = 1u << 13 };
  r.r[13] = 0x8000;
  assert_int_equal (st_exidx_execute (&e, &r, read_word, &s, NULL), 1);
  assert_int_equal (r.known, 0xffff);
  for (int n = 0; n < 13; n++)
    assert_int_equal (r.r[n], 0x100 + 8 + n);
  assert_int_equal (r.r[13], 0x9000);
  assert_int_equal (r.r[15], 0x1e616);
}

static int
run (const uint8_t *ops, size_t n, struct st_arm_regs *r, const struct stack *s)
{
  static struct st_exidx_entry e;
  memset (&e, 0, sizeof e);
  memcpy (e.ops, ops, n);
  e.n_ops = n;
  struct st_why why = { 0 };
  int ret = st_exidx_execute (&e, r, read_word, (void *) s, &why);
  if (ret < 0)
    print_message ("  %s\n", why.text);
  return ret;
}

/* The instructions libc does not use, by the ABI's table (section 10.3).  */
static void
test_instructions_by_the_abi (void **state)
{
  uint32_t words[200];
  for (int i = 0; i < 200; i++)
    words[i] = 0x4000 + 4 * i;
  struct stack s = { 0x1000, words, 200 };
  struct st_arm_regs r = { .known = 0xffff };

  /* vsp = r11; vsp -= 8; pop r4-r6, r14 */
  r.r[11] = 0x1010;
  r.r[13] = 0x1000;
  assert_int_equal (run ((const uint8_t[]) { 0x9b, 0x41, 0xaa }, 3, &r, &s), 0);
  assert_int_equal (r.r[4], 0x4000 + 4 * 2);
  assert_int_equal (r.r[14], 0x4000 + 4 * 5);
  assert_int_equal (r.r[15], 0x4000 + 4 * 5);
  assert_int_equal (r.r[13], 0x1018);

  /* vsp += 0x204 + (1 << 2); VFP pops: d8-d9 FSTMFDX (+20), d0-d1 VPUSH
     (+16), d16-d17 VPUSH (+16), d8 VPUSH (+8); iWMMXt wCGR0,1 (+8).  */
  r.r[13] = 0x1000;
  r.r[14] = 0x77;
  assert_int_equal (run ((const uint8_t[]) { 0xb2, 0x01, 0xb9, 0xc9, 0x01, 0xc8, 0x01, 0xd0,
                                             0xc7, 0x03, 0xb0 }, 11, &r, &s), 0);
  assert_int_equal (r.r[13], 0x1000 + 0x208 + 20 + 16 + 16 + 8 + 8);
  assert_int_equal (r.r[15], 0x76);

  /* pop r0-r3 under a mask, then r13 itself: the popped sp wins.  */
  r.r[13] = 0x1000;
  assert_int_equal (run ((const uint8_t[]) { 0xb1, 0x05, 0x82, 0x10 }, 4, &r, &s), 0);
  assert_int_equal (r.r[0], 0x4000);
  assert_int_equal (r.r[2], 0x4004);
  assert_int_equal (r.r[8], 0x4008);
  assert_int_equal (r.r[13], 0x400c);

  /* Refuse to unwind; reserved and spare instructions; a read past the
     copy; a return address nobody knows.  */
  r.r[13] = 0x1000;
  assert_int_equal (run ((const uint8_t[]) { 0x80, 0x00 }, 2, &r, &s), -ENODATA);
  assert_int_equal (run ((const uint8_t[]) { 0x9d }, 1, &r, &s), -EBADMSG);
  assert_int_equal (run ((const uint8_t[]) { 0xb1, 0x10 }, 2, &r, &s), -EBADMSG);
  assert_int_equal (run ((const uint8_t[]) { 0xb4 }, 1, &r, &s), -EBADMSG);
  assert_int_equal (run ((const uint8_t[]) { 0xe0 }, 1, &r, &s), -EBADMSG);
  assert_int_equal (run ((const uint8_t[]) { 0xb2, 0xff }, 2, &r, &s), -EBADMSG);
  r.r[13] = 0x1000 + 4 * 199;
  assert_int_equal (run ((const uint8_t[]) { 0xa8 }, 1, &r, &s), -EFAULT);
  r.r[13] = 0xfffffff0;
  assert_int_equal (run ((const uint8_t[]) { 0x3f }, 1, &r, &s), -EFAULT);
  r = (struct st_arm_regs) { .known = 1u << 13, .r[13] = 0x1000 };
  assert_int_equal (run ((const uint8_t[]) { 0xb0 }, 1, &r, &s), -EINVAL);
  r = (struct st_arm_regs) { .known = 1u << 13, .r[13] = 0x1000 };
  assert_int_equal (run ((const uint8_t[]) { 0x97 }, 1, &r, &s), -EINVAL);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_every_libc_entry_decodes_as_readelf_does),
    cmocka_unit_test (test_syscall_stub_pops_r7_and_returns_to_lr),
    cmocka_unit_test (test_signal_restorer_restores_the_interrupted_context),
    cmocka_unit_test (test_instructions_by_the_abi),
  };
  return cmocka_run_group_tests (tests, open_libc, close_libc);
}
