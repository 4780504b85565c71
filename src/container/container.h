/* Which container a process runs in, and where its files are on the host.
 *
 * Detection uses what the host sees: podman's per-container cgroup
 * (libpod-<id>), the process's mount namespace matched against the
 * containers podman's storage knows, /run/.containerenv; flatpak's instance
 * directories (bwrapinfo.json), its app-flatpak-*.scope cgroup and
 * /.flatpak-info.  Everything a container controls is untrusted: files
 * inside its root are opened with RESOLVE_IN_ROOT, host directories named
 * by container metadata must lie inside a known storage or installation,
 * and the resolver accepts a file only when its build-id (or inode) is the
 * mapped one.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "basic/why.h"
#include "container/label.h"

enum st_container_kind {
  ST_CONTAINER_HOST = 0,
  ST_CONTAINER_PODMAN = 1,
  ST_CONTAINER_FLATPAK = 2,
};
#define ST_CONTAINER_ALL (ST_CONTAINER_PODMAN | ST_CONTAINER_FLATPAK)

#define ST_CONTAINER_MAX_DIRS 64

/* A host directory that holds part of a container's file system: the files
   the container sees under PREFIX are under DIR (an O_PATH fd).  */
struct st_container_dir {
  char *prefix;             /* "/", "/app", "/usr" */
  int fd;
  bool upper;               /* the container's own writable layer */
};

struct st_container {
  enum st_container_kind kind;
  struct st_container_label label;  /* strings below own it */
  char *name, *id, *root_frame;
  size_t n_dirs;
  struct st_container_dir dirs[ST_CONTAINER_MAX_DIRS];
  /* Flatpak, from an instance directory: the bwrap child whose descendants
     it describes (0: not from one).  Another process is given this answer
     only while it descends from the child (st_flatpak_instance_holds).  */
  pid_t instance_child;
};

struct st_containers;

/* KINDS: a mask of ST_CONTAINER_PODMAN, ST_CONTAINER_FLATPAK (0: none).
   0 or -ENOMEM.  */
int st_containers_new (unsigned kinds, struct st_containers **out);
void st_containers_free (struct st_containers *cs);
/* Parses --container: auto, none, podman, flatpak.  -1 when unknown.  */
int st_containers_parse_kinds (const char *arg);

/* The container PID runs in, or NULL for the host (or when not known).
   Detected once per process; valid until st_containers_free.  */
const struct st_container *st_containers_of (struct st_containers *cs, pid_t pid);
/* PID, detected as no container (gone before it was seen), ran a file of
   C's own layer or app deployment (found by build-id): it is labelled as C
   from now on.  C must be one st_containers_foreach_stored gave.  */
void st_containers_adopt (struct st_containers *cs, pid_t pid, const struct st_container *c);
/* As st_containers_of, but NULL for a label adopted that way: its files are
   searched for in every stored container again.  */
const struct st_container *st_containers_detected (struct st_containers *cs, pid_t pid);
/* PID has exited: a later process with its number is detected again.  */
void st_containers_forget (struct st_containers *cs, pid_t pid);
/* How many processes were detected by reading container metadata, and how
   many got the answer of an earlier process of the same mount namespace,
   cgroup, users and root (--stats, tests).  */
void st_containers_counts (const struct st_containers *cs, size_t *detected, size_t *reused);

/* Opens PATH (as the container sees it) read-only in one of C's host
   directories: the first regular file found, starting at *NEXT_DIR (set to
   the directory after the one used, for a retry when the file is not the
   right one).  Returns the fd, or -errno with WHY (may be NULL).  *UPPER
   says it came from the container's own layer.  */
int st_container_open (const struct st_container *c, const char *path, size_t *next_dir,
                       bool *upper, struct st_why *why);

/* Every container and image podman's storage on this host knows, and every
   flatpak deployment (also .removed/ ones) (for a process that is gone): each as a container with only host directories.
   Calls FN until it returns non-zero; returns that.  */
int st_containers_foreach_stored (struct st_containers *cs,
                                  int (*fn) (const struct st_container *c, void *arg),
                                  void *arg);

/* Internal: shared by podman.c and flatpak.c.  */

/* Container storage JSON, bounded (bounded-json.c): over ST_STORAGE_JSON_MAX
   bytes a file is refused unread; a user's files are read up to
   ST_STORAGE_JSON_BUDGET bytes per run.  */
#define ST_STORAGE_JSON_MAX (8u << 20)
#define ST_STORAGE_JSON_BUDGET (16u << 20)
/* FILE under DIR_FD (no symlink followed), parsed once per thread and
   file version, as a new reference (json_object_put it), or NULL when
   missing, not JSON or refused (said once, naming the file and WHO).
   OWNER: the storage's user, whose budget pays (0: root, no budget).  */
struct json_object;
struct json_object *st_storage_json_load (int dir_fd, const char *file, uid_t owner,
                                          const char *who);
/* 0 when TEXT has at most MAX_VALUES values and MAX_DEPTH nesting, else
   -E2BIG or -ELOOP; strings are skipped, nothing is allocated.  */
int st_json_prescan (const char *text, size_t len, size_t max_values, size_t max_depth);
/* TEXT parsed by json-c after st_json_prescan passed it, with json-c's
   own nesting limit at MAX_DEPTH.  NULL when refused or not JSON; *ERROR
   (when not NULL) then says which: -E2BIG, -ELOOP or -EINVAL.  */
struct json_object *st_json_parse_bounded (const char *text, size_t len, size_t max_values,
                                           size_t max_depth, int *error);
/* st_json_parse_bounded with the limits of storage metadata: what
   st_storage_json_load parses each file with.  */
struct json_object *st_storage_json_parse (const char *text, size_t len, int *error);

/* PATH under ROOT_FD, as st_open_untrusted opens it (RESOLVE_IN_ROOT in
   RESOLVE: inside it, else beneath it): the fd, or -errno with WHY.  */
int st_open_in_root (int root_fd, const char *path, int resolve, struct st_why *why);
int st_open_beneath (int dir_fd, const char *path, bool directory);
char *st_read_small_file (int fd, size_t max, size_t *len);
void st_container_init (struct st_container *c, enum st_container_kind kind, const char *name,
                        const char *id);
int st_container_add_dir (struct st_container *c, const char *prefix, int fd, bool upper);
void st_container_free (struct st_container *c);
/* What detection reads of a process, read once for both detectors (and
   the key of container.c's answers per mount namespace).  */
struct st_proc_facts {
  ino_t mnt_ino;            /* /proc/PID/ns/mnt */
  dev_t mnt_dev;
  uid_t owners[2];          /* basic/procfs.h */
  const char *cgroup;       /* /proc/PID/cgroup (NUL-terminated), or NULL */
  size_t cgroup_len;
};
/* The largest cgroup text each detector reads, as each always did:
   longer, its cgroup names nothing to it.  */
#define ST_PODMAN_CGROUP_MAX (1u << 20)
#define ST_FLATPAK_CGROUP_MAX (1u << 16)
struct st_container *st_podman_detect (pid_t pid, const struct st_proc_facts *facts);
struct st_container *st_flatpak_detect (pid_t pid, const struct st_proc_facts *facts);
/* Does the bwrap child CHILD live in mount namespace MNT, and is it PID or
   an ancestor of it?  */
bool st_flatpak_instance_holds (pid_t child, ino_t mnt, pid_t pid);
int st_podman_foreach_stored (int (*fn) (const struct st_container *c, void *arg), void *arg,
                              struct st_container ***cache, size_t *n_cache);
int st_flatpak_foreach_stored (int (*fn) (const struct st_container *c, void *arg), void *arg,
                               struct st_container ***cache, size_t *n_cache);
