#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "basic/io.h"
#include "basic/log.h"
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

/* The uid of the user of PASSWD named NAME (LEN bytes), or with NAME NULL
   whose uid is WANT, in *UID; false when there is none.  */
static bool
passwd_lookup (const char *passwd, const char *name, size_t len, uid_t want, uid_t *uid)
{
  for (const char *line = passwd; line != NULL && *line != '\0';)
    {
      const char *nl = strchr (line, '\n');
      const char *end = nl != NULL ? nl : line + strlen (line);
      const char *s, *user;
      size_t n, user_len;
      uint64_t v;
      if (*line != '#' && field (line, end, 2, &s, &n) && number (s, n, UINT32_MAX - 1, &v)
          && (name == NULL ? v == (uint64_t) want
                           : field (line, end, 0, &user, &user_len) && user_len == len
                               && memcmp (user, name, len) == 0))
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
  /* A user's own uid is theirs, whatever range (a mistaken
     "alice:0:4294967295") holds it.  */
  uid_t user;
  if (passwd_lookup (passwd, NULL, 0, uid, &user))
    return ST_SUBID_NONE;
  for (const char *line = subuid; line != NULL && *line != '\0';)
    {
      const char *nl = strchr (line, '\n');
      const char *end = nl != NULL ? nl : line + strlen (line);
      const char *name, *s;
      size_t name_len, n;
      uint64_t first, count, id;
      bool in_range = *line != '#' && field (line, end, 0, &name, &name_len) && name_len > 0
                      && field (line, end, 1, &s, &n) && number (s, n, UINT32_MAX, &first)
                      && field (line, end, 2, &s, &n) && number (s, n, UINT32_MAX, &count)
                      && (uint64_t) uid >= first && (uint64_t) uid - first < count;
      if (in_range)
        {
          /* useradd writes names; shadow's tools take uids too.  */
          if (number (name, name_len, UINT32_MAX - 1, &id))
            *owner = (uid_t) id;
          else if (!passwd_lookup (passwd, name, name_len, 0, owner))
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

/* A file's text, read again only when it changed (its inode, size or
   times): a copy of a file is made for each new debug file.  */
struct cached_text {
  const char *path;
  struct stat st;
  char *text;
};
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached_text subuid_file = { .path = "/etc/subuid" };
static struct cached_text passwd_file = { .path = "/etc/passwd" };

static bool
same_stat (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size
         && a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec
         && a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Under cache_lock: C's text as it is now ("" when the file is missing,
   not a regular file, unreadable or larger than SUBID_FILE_MAX: said
   once), or NULL without memory.  */
static const char *
text_of (struct cached_text *c)
{
  struct stat st;
  int fd = open (c->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 || fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      if (fd >= 0)
        close (fd);
      free (c->text);
      c->text = strdup ("");
      memset (&c->st, 0, sizeof c->st);
      return c->text;
    }
  if (c->text != NULL && same_stat (&st, &c->st))
    {
      close (fd);
      return c->text;
    }
  free (c->text);
  c->text = NULL;
  if ((uint64_t) st.st_size > SUBID_FILE_MAX)
    {
      static bool said;
      if (!said)
        st_warning ("%s: %llu bytes, past the %u read: its ranges are not known",
                    c->path, (unsigned long long) st.st_size, SUBID_FILE_MAX);
      said = true;
    }
  else if ((c->text = malloc ((size_t) st.st_size + 1)) != NULL)
    {
      ssize_t n = st_pread_full (fd, c->text, (size_t) st.st_size, 0);
      c->text[n > 0 ? (size_t) n : 0] = '\0';
      c->st = st;
    }
  close (fd);
  if (c->text == NULL)
    c->text = strdup ("");
  return c->text;
}

enum st_subid_kind
st_subid_owner (uid_t uid, uid_t *owner)
{
  *owner = uid;
  pthread_mutex_lock (&cache_lock);
  const char *subuid = text_of (&subuid_file);
  const char *passwd = subuid != NULL && *subuid != '\0' ? text_of (&passwd_file) : NULL;
  enum st_subid_kind k = subuid != NULL && passwd != NULL
                           ? st_subid_owner_in (subuid, passwd, uid, owner) : ST_SUBID_NONE;
  pthread_mutex_unlock (&cache_lock);
  return k;
}
