#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "basic/hashmap.h"
#include "core/resolve/elf-file.h"
#include "core/resolve/file-shared.h"

struct st_shared_files {
  pthread_mutex_t lock;       /* guards MAP, not the entries */
  struct st_hashmap *map;     /* identity -> struct st_file_shared */
};

static void
entry_free (void *p)
{
  struct st_file_shared *e = p;
  if (e == NULL)
    return;
  st_symtab_data_free (e->symtab);
  if (e->rows != NULL && e->free_rows != NULL)
    e->free_rows (e->rows);
  pthread_mutex_destroy (&e->lock);
  free (e);
}

int
st_shared_files_new (struct st_shared_files **out)
{
  struct st_shared_files *files = calloc (1, sizeof *files);
  if (files == NULL)
    return -ENOMEM;
  files->map = st_hashmap_new (entry_free);
  if (files->map == NULL)
    {
      free (files);
      return -ENOMEM;
    }
  pthread_mutex_init (&files->lock, NULL);
  *out = files;
  return 0;
}

void
st_shared_files_free (struct st_shared_files *files)
{
  if (files == NULL)
    return;
  st_hashmap_free (files->map);
  pthread_mutex_destroy (&files->lock);
  free (files);
}

/* A file's identity: "f", the device, inode, size and modification time
   of the descriptor the resolver opened, and its build-id if it has one;
   "b" and the build-id alone when there is no descriptor to ask.  Not the
   build-id alone whenever the file itself can be told: a stripped copy
   and the full file share a build-id but not a symbol table, and which of
   them a thread met first would decide the names of both, differently
   from one run (or -j) to the next.  */
struct inode_identity {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_sec, mtime_nsec;
  /* A file rewritten in place keeps its inode, and cp -p or touch can set
     its size and mtime back; its ctime moves on every write (resolver.c's
     rewritten_since): without it, a file opened again after a rewrite got
     the old bytes' tables while another thread still held them.  */
  int64_t ctime_sec, ctime_nsec;
};
struct identity {
  char kind;
  struct inode_identity file;
  uint8_t build_id[ST_BUILD_ID_MAX];
};

/* F's identity in KEY; its length, or 0 when F has none.  */
static size_t
identity_of (const struct st_elf_file *f, struct identity *key)
{
  /* Hashed as bytes: no padding left unset.  */
  memset (key, 0, sizeof *key);
  struct stat st;
  if (f->fd >= 0 && fstat (f->fd, &st) == 0)
    {
      key->kind = 'f';
      key->file = (struct inode_identity) {
        .dev = st.st_dev,
        .ino = st.st_ino,
        .size = st.st_size,
        .mtime_sec = st.st_mtim.tv_sec,
        .mtime_nsec = st.st_mtim.tv_nsec,
        .ctime_sec = st.st_ctim.tv_sec,
        .ctime_nsec = st.st_ctim.tv_nsec,
      };
    }
  else if (f->build_id_size > 0)
    key->kind = 'b';
  else
    return 0;
  memcpy (key->build_id, f->build_id, f->build_id_size);
  return offsetof (struct identity, build_id) + f->build_id_size;
}

struct st_file_shared *
st_shared_files_get (struct st_shared_files *files, const struct st_elf_file *f)
{
  struct identity key;
  size_t len = identity_of (f, &key);
  if (len == 0)
    return NULL;
  pthread_mutex_lock (&files->lock);
  struct st_file_shared *e = st_hashmap_get (files->map, &key, len);
  if (e == NULL && (e = calloc (1, sizeof *e + len)) != NULL)
    {
      pthread_mutex_init (&e->lock, NULL);
      e->files = files;
      e->key_len = len;
      memcpy (e->key, &key, len);
      if (st_hashmap_put (files->map, &key, len, e) < 0)
        {
          entry_free (e);
          e = NULL;
        }
    }
  if (e != NULL)
    e->users++;
  pthread_mutex_unlock (&files->lock);
  return e;
}

void
st_file_shared_put (struct st_file_shared *e)
{
  if (e == NULL)
    return;
  struct st_shared_files *files = e->files;
  pthread_mutex_lock (&files->lock);
  if (--e->users == 0)
    st_hashmap_remove (files->map, e->key, e->key_len);   /* frees it */
  pthread_mutex_unlock (&files->lock);
}

const struct st_symtab_data *
st_file_shared_symtab (struct st_file_shared *e, struct st_symtab_data *(*build) (void *arg),
                       void *arg)
{
  pthread_mutex_lock (&e->lock);
  if (e->symtab == NULL)
    e->symtab = build (arg);
  const struct st_symtab_data *t = e->symtab;
  pthread_mutex_unlock (&e->lock);
  return t;
}
