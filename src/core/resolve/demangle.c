#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "core/resolve/demangle.h"

static enum st_demangle_style current_style = ST_DEMANGLE_SHORT;

int
st_demangle_parse_style (const char *arg, enum st_demangle_style *out)
{
  if (arg == NULL || strcmp (arg, "short") == 0)
    *out = ST_DEMANGLE_SHORT;
  else if (strcmp (arg, "full") == 0)
    *out = ST_DEMANGLE_FULL;
  else
    return -EINVAL;
  return 0;
}

void
st_demangle_set_style (enum st_demangle_style style)
{
  current_style = style;
}

enum st_demangle_style
st_demangle_style (void)
{
  return current_style;
}

static int
hex_digit (char c)
{
  return isdigit ((unsigned char) c) ? c - '0' : tolower ((unsigned char) c) - 'a' + 10;
}

/* OCaml's names, as perf's demangle-ocaml.c reads them:
   "camlStdlib__List__map_281" is "Stdlib.List.map_281", "$xx" a byte in
   hex.  Only a name of "caml" and an upper-case letter is one.  */
static char *
ocaml_demangle (const char *name)
{
  if (strncmp (name, "caml", 4) != 0 || !isupper ((unsigned char) name[4]))
    return NULL;
  size_t len = strlen (name);
  char *out = malloc (len + 1);
  if (out == NULL)
    return NULL;
  size_t j = 0;
  for (size_t i = 4; i < len;)
    {
      if (name[i] == '_' && name[i + 1] == '_')
        {
          out[j++] = '.';
          i += 2;
        }
      else if (name[i] == '$' && isxdigit ((unsigned char) name[i + 1])
               && isxdigit ((unsigned char) name[i + 2]))
        {
          out[j++] = (char) (hex_digit (name[i + 1]) << 4 | hex_digit (name[i + 2]));
          i += 3;
        }
      else
        out[j++] = name[i++];
    }
  out[j] = '\0';
  return out;
}

char *
st_demangle (const char *name, enum st_demangle_style style)
{
  if (style == ST_DEMANGLE_NONE || name == NULL || name[0] == '\0')
    return NULL;
  /* cplus_demangle's automatic style tries Rust (legacy and v0) first,
     then the Itanium C++ ABI: the flags are perf's (DMGL_NO_OPTS, or
     DMGL_PARAMS | DMGL_ANSI with -v).  Without DMGL_PARAMS it also ignores
     what follows a complete name, such as an "@@VERSION" suffix, as perf's
     call does.  */
  char *s = cplus_demangle (name, style == ST_DEMANGLE_FULL ? DMGL_PARAMS | DMGL_ANSI
                                                            : DMGL_NO_OPTS);
  if (s == NULL)
    s = ocaml_demangle (name);
  /* A name that demangles to itself gains nothing but a copy.  */
  if (s != NULL && strcmp (s, name) == 0)
    {
      free (s);
      s = NULL;
    }
  return s;
}
