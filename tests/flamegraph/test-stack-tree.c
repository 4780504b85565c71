/* The stack tree that -f folded and -f svg share: paths, counts, order,
   reversed stacks, and the kinds of frames the flame graph colors.  */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/output/stack-tree.h"

#define PROG "/usr/bin/prog"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LD "/usr/lib64/ld-linux-x86-64.so.2"
#define LIBFOO "/usr/lib/libfoo.so.1"

/* A frame: NAME in MODULE (either may be NULL).  */
static struct st_frame
fr (const char *name, const char *module)
{
  return (struct st_frame) { .symbol = name, .module = module, .pc = 0x1000 };
}

/* Adds a sample of COMM whose frames are given outermost first.  */
static void
add (struct st_stack_tree *t, const char *comm, enum st_stop_reason stop, size_t n, ...)
{
  struct st_frame frames[16];
  va_list ap;
  va_start (ap, n);
  for (size_t i = 0; i < n; i++)
    frames[n - 1 - i] = va_arg (ap, struct st_frame);
  va_end (ap);
  struct st_callchain c = { .comm = comm, .frames = frames, .n_frames = n, .stop = stop };
  assert_int_equal (st_stack_tree_add (t, &c, 1), 0);
}

/* The first node at PATH ("comm;f1;f2", "" for the root) below node I,
   among the nodes of the same name at each level (one per file), or NULL.  */
static const struct st_stack_node *
find_below (const struct st_stack_tree *t, uint32_t i, const char *path)
{
  if (*path == '\0')
    return st_stack_tree_node (t, i);
  size_t len = strcspn (path, ";");
  const char *rest = path[len] == ';' ? path + len + 1 : path + len;
  for (uint32_t c = st_stack_tree_node (t, i)->first_child; c != ST_STACK_NONE;
       c = st_stack_tree_node (t, c)->next_sibling)
    {
      const char *name = st_stack_tree_node (t, c)->name;
      if (strlen (name) == len && strncmp (name, path, len) == 0)
        {
          const struct st_stack_node *found = find_below (t, c, rest);
          if (found != NULL)
            return found;
        }
    }
  return NULL;
}

static const struct st_stack_node *
find (const struct st_stack_tree *t, const char *path)
{
  const struct st_stack_node *n = find_below (t, 0, path);
  if (n == NULL)
    fail_msg ("no node %s", path);
  return n;
}

static void
test_counts_follow_paths (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (false);
  for (int i = 0; i < 3; i++)
    add (t, "prog", ST_STOP_END, 3, fr ("_start", PROG), fr ("main", PROG), fr ("work", PROG));
  add (t, "prog", ST_STOP_END, 2, fr ("_start", PROG), fr ("main", PROG));
  add (t, "other", ST_STOP_NO_USER_STACK, 0);
  assert_int_equal (st_stack_tree_finish (t), 0);
  assert_int_equal (find (t, "")->total, 5);
  assert_int_equal (find (t, "prog")->total, 4);
  assert_int_equal (find (t, "prog;_start;main")->total, 4);
  assert_int_equal (find (t, "prog;_start;main")->self, 1);
  assert_int_equal (find (t, "prog;_start;main;work")->self, 3);
  assert_int_equal (find (t, "other")->self, 1);
  assert_int_equal (find (t, "prog;_start;main;work")->depth, 4);
  assert_int_equal (st_stack_tree_max_depth (t), 4);
  /* Sorted: "other" before "prog".  */
  assert_string_equal (st_stack_tree_node (t, find (t, "")->first_child)->name, "other");
  /* A walk visits every node once, parents first.  */
  size_t n = 1;
  for (uint32_t i = st_stack_tree_next (t, 0); i != ST_STACK_NONE; i = st_stack_tree_next (t, i))
    {
      assert_true (st_stack_tree_node (t, i)->parent < i);
      n++;
    }
  assert_int_equal (n, st_stack_tree_size (t));
  st_stack_tree_free (t);
}

static void
test_reverse_puts_callees_first (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (true);
  add (t, "prog", ST_STOP_END, 3, fr ("_start", PROG), fr ("a", PROG), fr ("leaf", PROG));
  add (t, "prog", ST_STOP_END, 3, fr ("_start", PROG), fr ("b", PROG), fr ("leaf", PROG));
  assert_int_equal (st_stack_tree_finish (t), 0);
  assert_int_equal (find (t, "prog;leaf")->total, 2);
  assert_int_equal (find (t, "prog;leaf;a;_start")->self, 1);
  assert_int_equal (find (t, "prog;leaf;b;_start")->self, 1);
  st_stack_tree_free (t);
}

static void
test_same_name_in_two_files_is_two_frames (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (false);
  /* ld.so's own _start at startup, then the program's.  */
  add (t, "prog", ST_STOP_END, 2, fr ("_start", LD), fr ("_dl_start", LD));
  add (t, "prog", ST_STOP_END, 2, fr ("_start", PROG), fr ("main", PROG));
  assert_int_equal (st_stack_tree_finish (t), 0);
  /* Sorted by name, then file.  */
  const struct st_stack_node *first = find (t, "prog;_start");
  const struct st_stack_node *second = st_stack_tree_node (t, first->next_sibling);
  assert_string_equal (first->module, PROG);
  assert_int_equal (first->kind, ST_KIND_PROGRAM);
  assert_string_equal (second->name, "_start");
  assert_string_equal (second->module, LD);
  assert_int_equal (second->kind, ST_KIND_LIBC);
  assert_int_equal (find (t, "prog;_start;_dl_start")->kind, ST_KIND_LIBC);
  assert_int_equal (find (t, "prog;_start;main")->kind, ST_KIND_PROGRAM);
  st_stack_tree_free (t);
}

static void
test_kinds (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (false);
  add (t, "prog", ST_STOP_END, 7, fr ("[podman:web]", NULL), fr ("_start", PROG),
       fr ("main", PROG), fr ("foo_run", LIBFOO), fr ("memcpy", LIBC), fr (NULL, LIBFOO),
       fr ("__vdso_clock_gettime", "[vdso]"));
  add (t, "prog", ST_STOP_NO_MODULE, 2, fr ("main", PROG), fr (NULL, NULL));
  assert_int_equal (st_stack_tree_finish (t), 0);
  const char *base = "prog;[podman:web];_start;main;foo_run;memcpy";
  assert_int_equal (find (t, "prog")->kind, ST_KIND_LABEL);
  assert_string_equal (find (t, "prog")->module, PROG);
  assert_int_equal (find (t, "prog;[podman:web]")->kind, ST_KIND_LABEL);
  assert_int_equal (find (t, "prog;[podman:web];_start;main")->kind, ST_KIND_PROGRAM);
  assert_int_equal (find (t, "prog;[podman:web];_start;main;foo_run")->kind, ST_KIND_LIBRARY);
  assert_int_equal (find (t, base)->kind, ST_KIND_LIBC);
  char path[256];
  snprintf (path, sizeof path, "%s;[libfoo.so.1]", base);
  assert_int_equal (find (t, path)->kind, ST_KIND_UNRESOLVED);
  snprintf (path, sizeof path, "%s;[libfoo.so.1];__vdso_clock_gettime", base);
  assert_int_equal (find (t, path)->kind, ST_KIND_KERNEL);
  assert_int_equal (find (t, "prog;main;[unknown]")->kind, ST_KIND_UNRESOLVED);
  st_stack_tree_free (t);
}

static void
test_program_of_cut_short_stacks_is_the_process_program (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (false);
  /* A wrapper exec'd under the same comm, then the program itself; a stack
     cut short in a library (a deep recursion) shows no frame of the
     program, and the library is still a library.  */
  add (t, "python3", ST_STOP_END, 2, fr ("_start", "/usr/bin/env"), fr ("main", "/usr/bin/env"));
  add (t, "python3", ST_STOP_STACK_EXHAUSTED, 2, fr ("eval", "/usr/lib/libpython3.11.so.1.0"),
       fr ("call", "/usr/lib/libpython3.11.so.1.0"));
  for (int i = 0; i < 3; i++)
    add (t, "python3", ST_STOP_END, 3, fr ("_start", "/usr/bin/python3.11"),
         fr ("Py_BytesMain", "/usr/lib/libpython3.11.so.1.0"), fr ("eval", "/usr/lib/libpython3.11.so.1.0"));
  assert_int_equal (st_stack_tree_finish (t), 0);
  assert_string_equal (find (t, "python3")->module, "/usr/bin/python3.11");
  assert_int_equal (find (t, "python3;eval")->kind, ST_KIND_LIBRARY);
  assert_int_equal (find (t, "python3;eval;call")->kind, ST_KIND_LIBRARY);
  assert_int_equal (find (t, "python3;_start")->kind, ST_KIND_PROGRAM);
  assert_int_equal (find (t, "python3;_start;Py_BytesMain")->kind, ST_KIND_LIBRARY);
  assert_true (st_module_may_be_program ("/usr/bin/python3.11"));
  assert_false (st_module_may_be_program ("/x/_json.cpython-311-x86_64-linux-gnu.so"));
  assert_false (st_module_may_be_program (LIBFOO));
  assert_false (st_module_may_be_program (LIBC));
  assert_false (st_module_may_be_program ("[vdso]"));
  st_stack_tree_free (t);
}

static void
test_threads_program_is_above_start_thread (void **state)
{
  struct st_stack_tree *t = st_stack_tree_new (false);
  add (t, "worker", ST_STOP_END, 3, fr ("clone3", LIBC), fr ("start_thread", LIBC),
       fr ("work", PROG));
  assert_int_equal (st_stack_tree_finish (t), 0);
  assert_int_equal (find (t, "worker;clone3;start_thread;work")->kind, ST_KIND_PROGRAM);
  assert_string_equal (find (t, "worker")->module, PROG);
  st_stack_tree_free (t);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_counts_follow_paths),
    cmocka_unit_test (test_reverse_puts_callees_first),
    cmocka_unit_test (test_same_name_in_two_files_is_two_frames),
    cmocka_unit_test (test_kinds),
    cmocka_unit_test (test_program_of_cut_short_stacks_is_the_process_program),
    cmocka_unit_test (test_threads_program_is_above_start_thread),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
