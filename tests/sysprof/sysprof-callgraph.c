/* sysprof-callgraph: the call tree the Sysprof 3.46 GUI shows for a
 * capture, built with Debian's libsysprof-4 as the GUI builds it
 * (SysprofCaptureReader + SysprofCallgraphProfile: process names from the
 * first PROCESS frame of each pid, user addresses symbolized per pid from
 * its MAP frames by Sysprof's own ELF resolver), printed as folded stacks.
 *
 * Usage: sysprof-callgraph CAPTURE
 *        sysprof-callgraph --details CAPTURE
 *
 * One line per distinct stack with its sample count, root first:
 *
 *   [NAME];outermost;...;innermost COUNT
 *
 * NAME is the row Sysprof shows for the pid ("[deep]", "[Process 42]").
 * Kernel frames (after Sysprof's "- - kernel - -" row) are left out: the
 * comparison is with -f folded, which has user frames only.
 *
 * --details prints what Sysprof 3.46's Details page shows of the capture
 * instead, read as that page reads it (sysprof-details-page.c):
 *
 *   capture_time ISO8601     the header's capture_time ("Recorded At")
 *   cpu_model MODEL          the first "model name" line of the
 *                            /proc/cpuinfo file chunks ("CPU Model"), its
 *                            key and colon left out
 *
 * and how many of those chunks there are ("cpuinfo_chunks N").  */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sysprof.h>

/* libsysprof-4 exports no accessor for the stash the profile builds; the
   GUI (libsysprof-ui) walks these structures directly.  Their layout, from
   Sysprof 3.46's src/stackstash.[ch] (GPL-3.0-or-later).  */
typedef struct StackNode StackNode;
struct StackNode
{
  uint64_t data;
  guint total : 32;
  guint size : 31;
  guint toplevel : 1;
  StackNode *parent;
  StackNode *siblings;
  StackNode *children;
  StackNode *next;
};

struct StackStash
{
  int ref_count;
  StackNode *root;
};

#define MAX_DEPTH 1024

static const char *path[MAX_DEPTH];
static GMainLoop *loop;
static GError *gen_error;
static gboolean gen_ok;
static unsigned chunks;

static void
print_path (int depth, guint count)
{
  for (int i = 0; i < depth; i++)
    printf ("%s%s", i ? ";" : "", path[i]);
  printf (" %u\n", count);
}

/* DEPTH names are in PATH already (the first is the process row).  */
static void
walk (const StackNode *node, int depth)
{
  for (; node != NULL; node = node->siblings)
    {
      const char *name = (const char *) (uintptr_t) node->data;
      if (name != NULL && strcmp (name, "- - kernel - -") == 0)
        {
          /* The kernel part below belongs to this user stack.  */
          print_path (depth, node->total);
          continue;
        }
      if (depth >= MAX_DEPTH)
        continue;
      path[depth] = name != NULL ? name : "(null)";
      if (node->size > 0)
        print_path (depth + 1, node->size);
      walk (node->children, depth + 1);
    }
}

/* A /proc/cpuinfo chunk, as the Details page's cpu_info_cb reads it: the
   first chunk with a "model name" line whose end is in the chunk gives the
   model.  */
static bool
cpuinfo_chunk (const SysprofCaptureFrame *frame, gpointer data)
{
  const SysprofCaptureFileChunk *fc = (const SysprofCaptureFileChunk *) frame;
  char **model = data;
  const char *end = (const char *) fc->data + fc->len;
  const char *line = memmem (fc->data, fc->len, "model name", 10);
  chunks++;
  if (line == NULL)
    return false;
  const char *nl = memchr (line, '\n', end - line);
  if (nl == NULL)
    return true;
  const char *colon = memchr (line, ':', nl - line);
  *model = g_strstrip (g_strndup (colon ? colon + 1 : nl, nl - (colon ? colon + 1 : nl)));
  return false;
}

static int
details (SysprofCaptureReader *reader)
{
  const char *time = sysprof_capture_reader_get_time (reader);
  printf ("capture_time %s\n", time != NULL ? time : "");
  SysprofCaptureCursor *cursor = sysprof_capture_cursor_new (reader);
  sysprof_capture_cursor_add_condition (cursor,
                                        sysprof_capture_condition_new_where_file ("/proc/cpuinfo"));
  char *model = NULL;
  sysprof_capture_cursor_foreach (cursor, cpuinfo_chunk, &model);
  printf ("cpuinfo_chunks %u\ncpu_model %s\n", chunks, model != NULL ? model : "");
  g_free (model);
  sysprof_capture_cursor_unref (cursor);
  return 0;
}

static void
generated (GObject *object, GAsyncResult *result, gpointer data)
{
  gen_ok = sysprof_profile_generate_finish (SYSPROF_PROFILE (object), result, &gen_error);
  g_main_loop_quit (loop);
}

int
main (int argc, char **argv)
{
  bool want_details = argc == 3 && strcmp (argv[1], "--details") == 0;
  if (argc != 2 && !want_details)
    {
      fprintf (stderr, "usage: sysprof-callgraph [--details] CAPTURE\n");
      return 2;
    }
  const char *capture = argv[argc - 1];
  SysprofCaptureReader *reader = sysprof_capture_reader_new (capture);
  if (reader == NULL)
    {
      fprintf (stderr, "sysprof-callgraph: %s: libsysprof-capture cannot read it\n", capture);
      return 1;
    }
  if (want_details)
    {
      int r = details (reader);
      sysprof_capture_reader_unref (reader);
      return r;
    }
  SysprofProfile *profile = sysprof_callgraph_profile_new ();
  sysprof_profile_set_reader (profile, reader);
  loop = g_main_loop_new (NULL, FALSE);
  sysprof_profile_generate (profile, NULL, generated, NULL);
  g_main_loop_run (loop);
  if (!gen_ok)
    {
      fprintf (stderr, "sysprof-callgraph: %s: %s\n", capture,
               gen_error ? gen_error->message : "no call graph");
      return 1;
    }
  struct StackStash *stash
    = sysprof_callgraph_profile_get_stash (SYSPROF_CALLGRAPH_PROFILE (profile));
  if (stash == NULL)
    {
      fprintf (stderr, "sysprof-callgraph: %s: an empty call graph\n", capture);
      return 1;
    }
  /* The roots are "[Everything]"; below it, one row per process.  */
  for (const StackNode *root = stash->root; root != NULL; root = root->siblings)
    walk (root->children, 0);
  g_object_unref (profile);
  sysprof_capture_reader_unref (reader);
  g_main_loop_unref (loop);
  return 0;
}
