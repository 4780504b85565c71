/* libnoeh.so of tests/e2e/unwinder-debug-frame.sh: a library built
 * without .eh_frame and with its .debug_frame removed (its Dwarf opens,
 * with no CFI), whose function calls back with rbp 0: libdwfl's step out of
 * it finds no CFI, and its frame-pointer guess finds nothing.  */
void
call_with_rbp0 (void (*fn) (long), long ns)
{
  __asm__ volatile ("xor %%ebp, %%ebp" : : : "rbp", "memory");
  fn (ns);
  __asm__ volatile ("" : : : "memory");
}
