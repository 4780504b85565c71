/* The program of the golden recordings (tests/golden/README): it maps
 * nothing but itself and the vdso, so that its recording unwinds the same on
 * every machine.  No libc: its own _start (whose CFI marks the outermost
 * frame), a chain of distinct functions, a recursion 6 to 13 deep, and three
 * leaves that burn CPU, then exit_group.
 *
 * Built once, by hand, and committed with the recording (the recording holds
 * its build-id):
 *   gcc -O2 -static -nostdlib -fno-pie -no-pie -fno-stack-protector \
 *       -fasynchronous-unwind-tables -Wl,--build-id -o golden-prog golden-prog.c
 * x86_64 only. */

#define NOINLINE __attribute__ ((noinline, noclone, used))
#define BARRIER(x) __asm__ volatile ("" : "+r" (x) : : "memory")

typedef unsigned long u64;

__asm__ (".text\n"
         ".globl _start\n"
         ".type _start, @function\n"
         "_start:\n"
         ".cfi_startproc\n"
         ".cfi_undefined rip\n"
         "  xor %ebp, %ebp\n"
         "  and $-16, %rsp\n"
         "  call golden_main\n"
         "  mov %eax, %edi\n"
         "  mov $231, %eax\n"           /* exit_group */
         "  syscall\n"
         "  hlt\n"
         ".cfi_endproc\n"
         ".size _start, .-_start\n");

static NOINLINE u64
leaf_hash (u64 seed)
{
  u64 h = seed ^ 0xcbf29ce484222325UL;
  for (int i = 0; i < 200000; i++)
    {
      h ^= (u64) i;
      h *= 0x100000001b3UL;
      BARRIER (h);
    }
  return h;
}

static NOINLINE u64
leaf_divide (u64 seed)
{
  u64 acc = seed | 1;
  for (int i = 1; i < 40000; i++)
    {
      acc += (acc * 7 + (u64) i) % (u64) (i + 3);
      BARRIER (acc);
    }
  return acc;
}

static NOINLINE u64
leaf_mix (u64 seed)
{
  u64 x = seed;
  for (int i = 0; i < 150000; i++)
    {
      x = (x << 7) ^ (x >> 3) ^ (u64) i;
      BARRIER (x);
    }
  return x;
}

static NOINLINE u64
leaf_work (u64 seed)
{
  u64 r;
  switch (seed % 3)
    {
    case 0:
      r = leaf_hash (seed);
      break;
    case 1:
      r = leaf_divide (seed);
      break;
    default:
      r = leaf_mix (seed);
      break;
    }
  BARRIER (r);
  return r + 1;
}

static NOINLINE u64
recurse (u64 seed, int depth)
{
  u64 r;
  if (depth == 0)
    r = leaf_work (seed);
  else
    r = recurse (seed * 31 + (u64) depth, depth - 1);
  BARRIER (r);
  return r ^ (u64) depth;
}

#define CHAIN(n, next)                                  \
  static NOINLINE u64                                   \
  chain_##n (u64 seed)                                  \
  {                                                     \
    u64 r = next;                                       \
    BARRIER (r);                                        \
    return r + n;                                       \
  }

CHAIN (3, recurse (seed, (int) (6 + seed % 8)))
CHAIN (2, chain_3 (seed + 2))
CHAIN (1, chain_2 (seed + 1))
CHAIN (0, chain_1 (seed))

int NOINLINE
golden_main (void)
{
  u64 acc = 0;
  for (u64 round = 0; round < 1500; round++)
    {
      acc += chain_0 (round);
      BARRIER (acc);
    }
  return (int) (acc & 0);
}
