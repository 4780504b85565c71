/* The shared library of the cross-architecture workload: called through
   the PLT, calls back into the executable.  */
typedef int (*archwork_cb) (int);

__attribute__ ((noinline)) int
lib_inner (int n, archwork_cb cb)
{
  int r = cb (n);
  __asm__ volatile ("" ::: "memory");
  return r + 1;
}

__attribute__ ((noinline)) int
lib_outer (int n, archwork_cb cb)
{
  int r = lib_inner (n + 1, cb);
  __asm__ volatile ("" ::: "memory");
  return r * 3;
}
