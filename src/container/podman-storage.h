/* podman's storage files, parsed from bytes: the part of podman.c that
 * reads what a rootless user writes (containers.json, layers.json,
 * images.json and their volatile- twins) and of a process (its cgroup,
 * the container's /run/.containerenv), without the file system around
 * it, for tests and tests/fuzz/fuzz-podman-*.c.  */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "container/container.h"

/* The files of one driver's storage, in the order podman.c reads them.  */
enum st_podman_storage_file {
  ST_PODMAN_CONTAINERS,           /* <driver>-containers/containers.json */
  ST_PODMAN_LAYERS,               /* <driver>-layers/layers.json */
  ST_PODMAN_VOLATILE_CONTAINERS,  /* <driver>-containers/volatile-containers.json */
  ST_PODMAN_VOLATILE_LAYERS,      /* <driver>-layers/volatile-layers.json */
  ST_PODMAN_IMAGES,               /* <driver>-images/images.json */
  ST_PODMAN_STORAGE_N
};

/* Parses TEXT, the contents of one of those files, and appends its entries
   to *ARR (which becomes the parsed array when NULL).  -EINVAL, *ARR
   untouched, when TEXT is not a JSON array.  */
int st_podman_storage_parse (const char *text, json_object **arr);

/* Every container and image that storage holds, as st_podman_foreach_stored
   gives them, from the files' contents (TEXTS[i] NULL: no such file) and
   with the layer directories opened beneath GRAPH_FD (an O_PATH fd of the
   graph root, kept open) for DRIVER ("overlay" or "vfs").  Appends them to
   *CACHE (*N_CACHE entries, allocated for exactly those).  -1 when there is
   no layers file, as a storage without one is skipped.  */
int st_podman_storage_collect (int graph_fd, const char *driver,
                               const char *const texts[ST_PODMAN_STORAGE_N],
                               struct st_container ***cache, size_t *n_cache);

/* The container id (64 lowercase hex digits, into ID) of the first
   libpod-<id> cgroup (not libpod-conmon-<id>, conmon's) in TEXT, the
   contents of /proc/PID/cgroup.  False when there is none.  */
bool st_podman_id_from_cgroup_text (const char *text, char id[65]);

/* The id="<id>" line of TEXT, a container's /run/.containerenv (written
   inside the container: a hint only).  False when there is none.  */
bool st_podman_id_from_containerenv_text (const char *text, char id[65]);
