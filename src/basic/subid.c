#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "basic/io.h"
#include "basic/subid.h"

#define SUBID_FILE_MAX (4u << 20)

/* Field N (0-based) of the ':'-separated LINE (which ends at END): its
   start and length, or false.  */
static bool
field (const char *line, const char *end, unsigned n, const char **start, size_t *len)
{
  const char *p = line;
  for (; n > 0; n--)
    {
      const char *colon = memchr (p, ':', (size_t) (end - p));
      if (colon == NULL)
        return false;
      p = colon + 1;
    }
  const char *colon = memchr (p, ':', (size_t) (end - p));
  *start = p;
  *len = (size_t) ((colon != NULL ? colon : end) - p);
  return true;
}

/* The decimal number of LEN bytes at S, at most MAX: false when it is not
   one.  */
static bool
number (const char *s, size_t len, uint64_t max, uint64_t *out)
{
  if (len == 0 || len > 20)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9' || v > (max - (uint64_t) (s[i] - '0')) / 10)
        return false;
      v = v * 10 + (uint64_t) (s[i] - '0');
    }
  *out = v;
  return true;
}

/* The uid of the user NAME (LEN bytes) in PASSWD, or false.  */
static bool
uid_of_name (const char *passwd, const char *name, size_t len, uid_t *uid)
{
  for (const char *line = passwd; line != NULL && *line != '\0';)
    {
      const char *nl = strchr (line, '\n');
      const char *end = nl != NULL ? nl : line + strlen (line);
      const char *s;
      size_t n;
      uint64_t v;
      if (field (line, end, 0, &s, &n) && n == len && memcmp (s, name, len) == 0
          && field (line, end, 2, &s, &n) && number (s, n, UINT32_MAX - 1, &v))
        {
          *uid = (uid_t) v;
          return true;
        }
      line = nl != NULL ? nl + 1 : NULL;
    }
  return false;
}

enum st_subid_kind
st_subid_owner_in (const char *subuid, const char *passwd, uid_t uid, uid_t *owner)
{
  *owner = uid;
  for (const char *line = subuid; line != NULL && *line != '\0';)
    {
      const char *nl = strchr (line, '\n');
      const char *end = nl != NULL ? nl : line + strlen (line);
      const char *name, *s;
      size_t name_len, n;
      uint64_t first, count, id;
      bool in_range = field (line, end, 0, &name, &name_len) && name_len > 0
                      && field (line, end, 1, &s, &n) && number (s, n, UINT32_MAX, &first)
                      && field (line, end, 2, &s, &n) && number (s, n, UINT32_MAX, &count)
                      && (uint64_t) uid >= first && (uint64_t) uid - first < count;
      if (in_range)
        {
          /* useradd writes names; shadow's tools take uids too.  */
          if (number (name, name_len, UINT32_MAX - 1, &id))
            *owner = (uid_t) id;
          else if (!uid_of_name (passwd, name, name_len, owner))
            {
              *owner = (uid_t) first;
              return ST_SUBID_RANGE;
            }
          return ST_SUBID_USER;
        }
      line = nl != NULL ? nl + 1 : NULL;
    }
  return ST_SUBID_NONE;
}

/* PATH read whole into a malloc'd string, or "" (a string too) when it is
   missing, unreadable or larger than SUBID_FILE_MAX.  */
static char *
read_text (const char *path)
{
  char *text = NULL;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode)
      && (uint64_t) st.st_size <= SUBID_FILE_MAX
      && (text = malloc ((size_t) st.st_size + 1)) != NULL)
    {
      ssize_t n = st_pread_full (fd, text, (size_t) st.st_size, 0);
      text[n > 0 ? (size_t) n : 0] = '\0';
    }
  if (fd >= 0)
    close (fd);
  return text != NULL ? text : strdup ("");
}

enum st_subid_kind
st_subid_owner (uid_t uid, uid_t *owner)
{
  *owner = uid;
  char *subuid = read_text ("/etc/subuid");
  if (subuid == NULL)
    return ST_SUBID_NONE;
  /* /etc/passwd is read only for a range named by its user's name.  */
  enum st_subid_kind k = st_subid_owner_in (subuid, "", uid, owner);
  if (k == ST_SUBID_RANGE)
    {
      char *passwd = read_text ("/etc/passwd");
      if (passwd != NULL)
        k = st_subid_owner_in (subuid, passwd, uid, owner);
      free (passwd);
    }
  free (subuid);
  return k;
}
