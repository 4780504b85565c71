/* Whose subordinate uid is it?  A rootless container's files belong, on
 * the host, to up to 65,536 subordinate uids of one user (/etc/subuid,
 * which newuidmap applies): a bound kept per uid would give that user
 * 65,536 of them.  This folds a subordinate uid back to its user.  */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

enum st_subid_kind {
  ST_SUBID_NONE,      /* in no range: *OWNER is the uid itself */
  ST_SUBID_USER,      /* in a range of the user *OWNER */
  ST_SUBID_RANGE,     /* in a range whose user has no uid we know (a name
                         /etc/passwd lacks): *OWNER is the range's first uid */
};

/* Where UID falls in SUBUID (the text of /etc/subuid: "OWNER:FIRST:COUNT"
   lines, OWNER a name or a uid) with user names from PASSWD (the text of
   /etc/passwd).  A uid PASSWD names is its user's own, in no range.  Pure:
   the texts are the caller's (tests give their own); lines it cannot read,
   and lines that start with '#', are skipped.  */
enum st_subid_kind st_subid_owner_in (const char *subuid, const char *passwd, uid_t uid,
                                      uid_t *owner);
/* The same with this host's /etc/subuid and /etc/passwd (each read again
   when it changed; at most 4 MiB: past that, said once, or unreadable, as
   if empty).  Thread-safe.  */
enum st_subid_kind st_subid_owner (uid_t uid, uid_t *owner);
