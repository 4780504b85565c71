/* What flatpak.c reads from files a sandboxed app or its user can write,
 * parsed from bytes, for tests and tests/fuzz/fuzz-flatpak.c: the
 * /.flatpak-info keyfile (also an instance directory's "info"),
 * bwrapinfo.json, and the app id in /proc/PID/cgroup.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "container/container.h"

/* The container TEXT, a .flatpak-info keyfile, describes: named by its
   [Application] name, with the app-path and runtime-path of [Instance] as
   its /app and /usr when they are deployments in a flatpak installation on
   this host.  INSTANCE is the instance directory's name (NULL: the file
   was read inside the sandbox); CGROUP_APP, when not NULL, the app the
   process's cgroup names, which the keyfile must agree with.  NULL when
   TEXT names no app or another one.  */
struct st_container *st_flatpak_from_info_text (const char *text, const char *instance,
                                                const char *cgroup_app);

/* The "mnt-namespace" and "child-pid" integers of bwrapinfo.json's TEXT,
   each -1 when absent or not an integer.  */
void st_flatpak_parse_bwrapinfo (const char *text, long long *mnt_ns, long long *child_pid);

/* The app id of an app-flatpak-ID-N.scope cgroup in TEXT (/proc/PID/cgroup),
   unescaped (systemd writes \xNN), into OUT.  False when there is none.  */
bool st_flatpak_app_from_cgroup_text (const char *text, char *out, size_t size);
