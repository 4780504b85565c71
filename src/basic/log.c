#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "basic/log.h"

static int log_level = ST_LOG_WARNING;

void
st_log_set_level (int level)
{
  log_level = level;
}

int
st_log_get_level (void)
{
  return log_level;
}

/* Writes TEXT to OUT with its control characters as \xNN: messages name
   paths, process names and symbols that whoever runs a profiled process
   chose, and root's terminal must not take an escape sequence, a carriage
   return or a newline of theirs for ours.  C1 controls (U+0080-U+009F, in
   UTF-8 0xc2 0x80-0x9f) too: some terminals act on them.  Other bytes,
   UTF-8 names among them, go as they are.  */
void
st_log_write_escaped (FILE *out, const char *text, size_t len)
{
  const unsigned char *s = (const unsigned char *) text;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < 0x20 || s[i] == 0x7f)
        fprintf (out, "\\x%02x", s[i]);
      else if (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
        {
          fprintf (out, "\\xc2\\x%02x", s[i + 1]);
          i++;
        }
      else
        fputc (s[i], out);
    }
}

void
st_log (enum st_log_level level, const char *fmt, ...)
{
  if ((int) level > log_level)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *text = NULL;
  int n = vasprintf (&text, fmt, ap);
  va_end (ap);
  fputs (PACKAGE_NAME ": ", stderr);
  if (level == ST_LOG_WARNING)
    fputs ("warning: ", stderr);
  if (n >= 0)
    st_log_write_escaped (stderr, text, (size_t) n);
  else
    fprintf (stderr, "(a message lost: out of memory; its form: %s)", fmt);
  fputc ('\n', stderr);
  free (text);
}
