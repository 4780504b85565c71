/* Inside container/: what flatpak.c (detection) uses of flatpak-install.c
 * (the installations and deployments on the host).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The value of KEY= in group [GROUP] of keyfile TEXT, copied into OUT
   (SIZE bytes).  False when it has none.  */
bool st_flatpak_keyfile_get (const char *text, const char *group, const char *key, char *out,
                             size_t size);

/* PATH names a deployment's files: <installation>/WHAT/ID/ARCH/BRANCH/
   COMMIT/files, of WANT_ID when it is not NULL.  Its directory (or, once
   uninstalled while running, the copy in <installation>/.removed/),
   opened without following symlinks below the installation (an O_PATH
   fd), or -1.  */
int st_flatpak_open_deployment (const char *path, const char *what, const char *want_id);
