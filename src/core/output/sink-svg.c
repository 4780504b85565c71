/* -f svg: an interactive flame graph in one self-contained SVG file.
 *
 * Stacks are aggregated in a tree as samples arrive (stack-tree.c, shared
 * with -f folded, so both name frames alike); at the end the tree is
 * written frame by frame, with no copy of it in memory.  Each frame is an
 * SVG group whose rect and label are drawn by the program, so the picture
 * shows in viewers without scripts too (an <img>, a code review's preview);
 * the embedded script adds zooming, search and a tooltip.  Frames narrower
 * than --minwidth pixels are merged into one "[N small frames]" frame per
 * parent, or left out when that is still too narrow: the file's size follows
 * what can be seen, not the number of distinct stacks.
 *
 * Each frame's group carries its position in samples (data-x: the samples
 * left of it under the same root; data-s: its samples; data-d: its depth),
 * which the script zooms with and which tests read; its <title> is
 * "NAME\nMODULE\nN samples, P%" (no module line for labels; inlined
 * functions' module line ends with " (inlined)").  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/output/sink-svg.h"
#include "core/output/sink-tree.h"

#define DEFAULT_WIDTH 1200
#define XPAD 10
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
/* Average glyph width of the label font, in ems: labels are cut to what
   fits without measuring text (thousands of frames).  */
#define FONT_WIDTH 0.59
/* A picture whose frames would take more than this many bytes merges more
   (doubling --minwidth, unless it is 0): however many samples and distinct
   stacks, the file stays small enough to open and to mail.  */
#define SIZE_BUDGET 1900000
/* The bytes of a frame's group, besides its name (twice: the title and the
   label) and its file.  */
#define FRAME_BYTES 150
#define TOP_PAD 60      /* title, buttons and legend */
#define BOTTOM_PAD 34   /* details line and search result */

struct st_sink {
  struct st_tree_sink tree;
  const char *title;
  unsigned width;
  double min_width;      /* in force: --minwidth, or more (SIZE_BUDGET) */
  double asked_min_width; /* --minwidth */
  bool reverse;
  /* Set for the walk that writes.  */
  double scale;         /* pixels per sample */
  unsigned height;
  uint32_t max_depth;   /* of the frames drawn */
  size_t bytes;         /* the frames' estimated size */
  char hint[200];       /* the details line when no frame is pointed at */
};

static struct st_sink *
svg_new (FILE *out, const struct st_sink_options *opts)
{
  struct st_sink *s = st_tree_sink_new (sizeof *s, out, opts->reverse);
  if (s == NULL)
    return NULL;
  s->title = opts->title;
  s->width = opts->width > 0 ? opts->width : DEFAULT_WIDTH;
  s->min_width = opts->min_width > 0 ? opts->min_width : 0;
  s->reverse = opts->reverse;
  return s;
}

/* The length of the valid UTF-8 sequence at P (which ends with a NUL), or 0.
   Symbol names come from files anyone can write: an invalid byte must not
   make the whole SVG unreadable.  */
static size_t
utf8_sequence (const unsigned char *p)
{
  unsigned char c = p[0];
  if (c < 0x80)
    return 1;
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0)
    return 0;
  /* The second byte's range: no overlong forms (after 0xe0, 0xf0), no
     surrogates (0xed), nothing past U+10FFFF (0xf4).  */
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf)
      return 0;
  /* U+FFFE and U+FFFF are not XML characters.  */
  if (n == 3 && c == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
    return 0;
  return n;
}

/* Writes STR as XML character data, at most MAX characters of it (then
   ".." in place of the last two); control characters and invalid UTF-8
   become '?'.  */
static void
put_xml (FILE *out, const char *str, size_t max)
{
  size_t chars = 0;
  for (const unsigned char *p = (const unsigned char *) str; *p; chars++)
    p += utf8_sequence (p) ? utf8_sequence (p) : 1;
  size_t keep = chars <= max ? chars : (max >= 2 ? max - 2 : 0);
  const unsigned char *p = (const unsigned char *) str;
  for (size_t i = 0; i < keep; i++)
    {
      size_t n = utf8_sequence (p);
      switch (n == 1 ? *p : 0)
        {
        case '&': fputs ("&amp;", out); break;
        case '<': fputs ("&lt;", out); break;
        case '>': fputs ("&gt;", out); break;
        case '"': fputs ("&quot;", out); break;
        case 0:
          if (n == 0)
            fputc ('?', out);
          else
            fwrite (p, 1, n, out);
          break;
        default:
          fputc (*p < 0x20 || *p == 0x7f ? '?' : *p, out);
        }
      p += n ? n : 1;
    }
  if (keep < chars)
    fputs ("..", out);
}

static size_t
label_chars (double width)
{
  double n = (width - 6) / (FONT_SIZE * FONT_WIDTH);
  return n < 3 ? 0 : (size_t) n;
}

/* A color of KIND's palette, varied by NAME so that neighbours differ and
   the same function has the same color everywhere.  */
static unsigned
color (enum st_frame_kind kind, const char *name)
{
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *) name; *p; p++)
    h = (h ^ *p) * 16777619u;
  /* Each channel (red, green, blue) of each palette: a base, a span, and
     which byte of the name's hash picks the value in the span.  */
  static const struct channel { uint8_t base, span, byte; } palettes[ST_KIND_N][3] = {
    [ST_KIND_LABEL] = { { 185, 25, 0 }, { 170, 25, 0 }, { 225, 25, 1 } },     /* lilac */
    [ST_KIND_PROGRAM] = { { 205, 50, 2 }, { 60, 100, 0 }, { 20, 40, 1 } },    /* warm */
    [ST_KIND_LIBRARY] = { { 200, 40, 0 }, { 185, 40, 0 }, { 50, 50, 1 } },    /* yellow */
    [ST_KIND_LIBC] = { { 70, 60, 0 }, { 150, 50, 0 }, { 215, 35, 1 } },       /* blue */
    [ST_KIND_KERNEL] = { { 70, 60, 0 }, { 180, 50, 1 }, { 70, 50, 0 } },      /* green */
    [ST_KIND_UNRESOLVED] = { { 170, 30, 0 }, { 170, 30, 0 }, { 170, 30, 0 } },  /* grey */
  };
  const unsigned hash_bytes[3] = { h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff };
  unsigned rgb = 0;
  for (int i = 0; i < 3; i++)
    {
      const struct channel *ch = &palettes[kind < ST_KIND_N ? kind : ST_KIND_LABEL][i];
      rgb = rgb << 8 | (ch->base + ch->span * hash_bytes[ch->byte] / 255);
    }
  return rgb;
}

#define MERGED_COLOR 0xd8d8d8

static double
frame_y (const struct st_sink *s, uint32_t depth)
{
  if (s->reverse)
    return TOP_PAD + (double) depth * FRAME_HEIGHT;
  return s->height - BOTTOM_PAD - (double) (depth + 1) * FRAME_HEIGHT;
}

/* One frame.  NAME and MODULE are raw; the title is the tooltip of viewers
   without scripts, and what the script reads the frame's name from.  */
static void
put_frame (struct st_sink *s, const char *cls, const char *name, const char *module,
           bool inlined, uint64_t x, uint64_t samples, uint32_t depth, unsigned fill)
{
  FILE *out = s->tree.out;
  uint64_t total = st_stack_tree_node (s->tree.stacks, 0)->total;
  double px = XPAD + x * s->scale, width = samples * s->scale, y = frame_y (s, depth);
  fprintf (out, "<g class=\"%s\" data-x=\"%" PRIu64 "\" data-s=\"%" PRIu64 "\" data-d=\"%" PRIu32
           "\"><title>", cls, x, samples, depth);
  put_xml (out, name, SIZE_MAX);
  if (module != NULL)
    {
      fputc ('\n', out);
      put_xml (out, module, SIZE_MAX);
      if (inlined)
        fputs (" (inlined)", out);
    }
  fprintf (out, "\n%" PRIu64 " sample%s, %.2f%%</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
           "height=\"%d\" fill=\"#%06x\"/>", samples, samples == 1 ? "" : "s",
           100.0 * samples / total, px, y, width, FRAME_HEIGHT - 1, fill);
  size_t chars = label_chars (width);
  if (chars > 0)
    {
      fprintf (out, "<text x=\"%.2f\" y=\"%.1f\">", px + 3, y + FRAME_HEIGHT - 4.5);
      put_xml (out, name, chars);
      fputs ("</text>", out);
    }
  fputs ("</g>\n", out);
}

struct pending {
  uint32_t node;
  uint64_t x;
};

/* Walks the frames that are drawn, parents first, children left to right;
   writes them when WRITE, else finds the deepest.  Narrow siblings become
   one merged frame after the wide ones.  */
static int
walk (struct st_sink *s, bool write)
{
  const struct st_stack_tree *t = s->tree.stacks;
  size_t n = st_stack_tree_size (t);
  struct pending *stack = malloc (n * sizeof *stack);
  struct pending *kids = malloc (n * sizeof *kids);
  if (stack == NULL || kids == NULL)
    {
      free (stack);
      free (kids);
      return -ENOMEM;
    }
  size_t top = 0;
  stack[top++] = (struct pending) { 0, 0 };
  s->max_depth = 0;
  while (top > 0)
    {
      struct pending p = stack[--top];
      const struct st_stack_node *node = st_stack_tree_node (t, p.node);
      if (node->depth > s->max_depth)
        s->max_depth = node->depth;
      if (write)
        put_frame (s, "f", p.node == 0 ? "all" : node->name, node->module, node->inlined, p.x,
                   node->total, node->depth, color (node->kind, node->name));
      else
        s->bytes += FRAME_BYTES + 2 * strlen (node->name)
                    + (node->module != NULL ? strlen (node->module) : 0);

      size_t n_kids = 0, n_narrow = 0;
      uint64_t cursor = p.x, narrow = 0;
      for (uint32_t c = node->first_child; c != ST_STACK_NONE;
           c = st_stack_tree_node (t, c)->next_sibling)
        {
          uint64_t total = st_stack_tree_node (t, c)->total;
          if (total * s->scale < s->min_width)
            {
              n_narrow++;
              narrow += total;
              continue;
            }
          kids[n_kids++] = (struct pending) { c, cursor };
          cursor += total;
        }
      while (n_kids > 0)
        stack[top++] = kids[--n_kids];
      if (n_narrow > 0 && narrow * s->scale >= s->min_width)
        {
          if (node->depth + 1 > s->max_depth)
            s->max_depth = node->depth + 1;
          s->bytes += FRAME_BYTES + 40;
          if (write)
            {
              char name[64];
              snprintf (name, sizeof name, "[%zu small frames]", n_narrow);
              put_frame (s, "m", name, NULL, false, cursor, narrow, node->depth + 1, MERGED_COLOR);
            }
        }
    }
  free (stack);
  free (kids);
  return 0;
}

static const struct {
  enum st_frame_kind kind;
  const char *name;
} legend[] = {
  { ST_KIND_PROGRAM, "program" },
  { ST_KIND_LIBRARY, "libraries" },
  { ST_KIND_LIBC, "C library" },
  { ST_KIND_KERNEL, "kernel" },
  { ST_KIND_UNRESOLVED, "unresolved" },
  { ST_KIND_LABEL, "process, label" },
};

static void
put_header (struct st_sink *s, uint64_t total)
{
  FILE *out = s->tree.out;
  const char *title = s->title ? s->title : s->reverse ? "Icicle Graph (reversed stacks)"
                                                         : "Flame Graph";
  fprintf (out,
           "<?xml version=\"1.0\" standalone=\"no\"?>\n"
           "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
           "xmlns=\"http://www.w3.org/2000/svg\">\n"
           "<!-- Written by " PACKAGE_NAME " " PACKAGE_VERSION ": click a frame to zoom, "
           "Ctrl-F to search. -->\n",
           s->width, s->height, s->width, s->height);
  fputs (st_svg_style, out);
  fputs ("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
         "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
         "</linearGradient></defs>\n", out);
  fprintf (out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n",
           s->width, s->height);
  fprintf (out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", s->width / 2.0);
  put_xml (out, title, SIZE_MAX);
  fputs ("</text>\n", out);
  fprintf (out, "<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
           XPAD);
  fprintf (out, "<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\" "
           "style=\"text-anchor: end\">Search</text>\n", s->width - XPAD);

  /* The legend, centered: a swatch and a word for each kind.  */
  double item[sizeof legend / sizeof legend[0]], sum = 0;
  for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++)
    sum += item[i] = 16 + strlen (legend[i].name) * 11 * FONT_WIDTH + 14;
  double x = (s->width - sum) / 2;
  for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++)
    {
      fprintf (out, "<rect x=\"%.1f\" y=\"38\" width=\"12\" height=\"12\" fill=\"#%06x\"/>"
               "<text class=\"legend\" x=\"%.1f\" y=\"48\">%s</text>\n",
               x, color (legend[i].kind, legend[i].name), x + 16, legend[i].name);
      x += item[i];
    }

  fprintf (out, "<script type=\"text/ecmascript\"><![CDATA[\n"
           "var FG = { total: %" PRIu64 ", width: %u, height: %u, xpad: %d, frameheight: %d, "
           "fontsize: %d, fontwidth: %g, searchcolor: \"#e600e6\", reverse: %s,\n"
           "  hint: \"%s\" };\n"
           "]]></script>\n",
           total, s->width, s->height, XPAD, FRAME_HEIGHT, FONT_SIZE, FONT_WIDTH,
           s->reverse ? "true" : "false", s->hint);
}

static void
put_footer (struct st_sink *s, uint64_t total)
{
  FILE *out = s->tree.out;
  fprintf (out, "<text id=\"details\" x=\"%d\" y=\"%u\">%s</text>\n", XPAD, s->height - 12,
           s->hint);
  fprintf (out, "<text id=\"matched\" x=\"%u\" y=\"%u\"></text>\n", s->width - XPAD,
           s->height - 12);
  fputs ("<g id=\"tip\" class=\"hide\"><rect x=\"0\" y=\"0\" width=\"10\" height=\"10\"/>"
         "<text x=\"6\" y=\"2\"><tspan x=\"6\" dy=\"1.2em\"></tspan><tspan x=\"6\" dy=\"1.2em\">"
         "</tspan><tspan x=\"6\" dy=\"1.2em\"></tspan></text></g>\n", out);
  fputs (st_svg_script, out);
  fputs ("</svg>\n", out);
}

static int
svg_finish (struct st_sink *s)
{
  int r = st_stack_tree_finish (s->tree.stacks);
  if (r < 0)
    return r;
  uint64_t total = st_stack_tree_node (s->tree.stacks, 0)->total;
  s->scale = total > 0 ? (double) (s->width - 2 * XPAD) / total : 0;
  /* First what is drawn: its size (merging more when it is too big) and
     its depth, for the height; then the frames.  */
  s->asked_min_width = s->min_width;
  for (;;)
    {
      s->bytes = 0;
      if ((r = walk (s, false)) < 0)
        return r;
      if (s->bytes <= SIZE_BUDGET || s->min_width <= 0 || s->min_width >= s->width)
        break;
      s->min_width *= 2;
    }
  char merged[80] = "";
  if (s->min_width > s->asked_min_width)
    snprintf (merged, sizeof merged, "Frames under %g px merged, to stay small (--minwidth). ",
              s->min_width);
  snprintf (s->hint, sizeof s->hint, "%" PRIu64 " samples. %sClick a frame to zoom, Ctrl-F to "
            "search, Esc to reset.", total, merged);
  s->height = TOP_PAD + (s->max_depth + 1) * FRAME_HEIGHT + BOTTOM_PAD;
  put_header (s, total);
  if (total > 0)
    {
      fputs ("<g id=\"frames\">\n", s->tree.out);
      if ((r = walk (s, true)) < 0)
        return r;
      fputs ("</g>\n", s->tree.out);
    }
  put_footer (s, total);
  return st_sink_flush (s->tree.out);
}

ST_DEFINE_TREE_SINK (st_sink_svg, "svg", "interactive flame graph", svg_new, svg_finish);
