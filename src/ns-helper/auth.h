/* Who may ask for what.
 *
 * The helper adds reachability, never permission.  Its client's
 * credentials come from the kernel (SO_PEERCRED, SO_PEERGROUPS) when the
 * connection is taken, in the privileged process, before anything the
 * client sent is read; nothing the client says changes them.
 *
 * Root may ask for anything.  Anyone else, of a privileged helper, gets
 * one of two levels for a process:
 *
 *   ST_AUTH_MAPPED  the kernel's ptrace read rule, judged on the client's
 *                   credentials: the process's real, effective and saved
 *                   uids and gids are the client's, it is dumpable (a
 *                   process that exec'd a setuid program is not), runs
 *                   in the helper's user namespace and has no permitted
 *                   capability; or the top of its user namespace chain
 *                   (the one whose parent is the helper's) is the
 *                   client's, as the kernel judges, and its /proc/PID is
 *                   not the global root's.  Judged again after a
 *                   map_files open (st_auth_still_mapped).  Unlocks every way, map_files
 *                   included: a mapped file is one the process, which the
 *                   client controls, opened.
 *   ST_AUTH_CLIENT  the client passed a descriptor of the pinned
 *                   process's own mount namespace (/proc/PID/ns/mnt:
 *                   opening it took the ptrace read check, but a process
 *                   in the client's own namespace, root's included, passes
 *                   it with the client's /proc/self/ns/mnt).  Unlocks only
 *                   the ways that open with the client's own credentials
 *                   (openat2, setns, debuginfo): reachability, no more.
 *
 * Every open of a path that a non-root client names is made with the
 * client's uid, gid and groups and no capability (sandbox.h), so the
 * kernel applies the client's permissions to each directory on the way
 * and to the file itself; a hard link or bind mount of a file the client
 * may not read stays unreadable.  A pidfd would prove nothing
 * (pidfd_open checks no permission), so none is accepted as proof.
 *
 * A helper without privileges (spawned by a user) runs with the user's
 * own credentials: the kernel applies them to everything it does.  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ns-helper/pin.h"

/* Supplementary groups kept for a client; more than this is refused.  */
#define ST_PEER_MAX_GROUPS 256

struct st_peer {
  pid_t pid;
  uid_t uid;
  gid_t gid;
  size_t n_groups;
  gid_t groups[ST_PEER_MAX_GROUPS];
};

enum st_auth_level {
  ST_AUTH_NONE,
  ST_AUTH_CLIENT,           /* opens with the client's credentials only */
  ST_AUTH_MAPPED,           /* and map_files */
};

/* The credentials of the process at the other end of SOCK, its groups
   included.  Returns 0 or -errno.  */
int st_peer_get (int sock, struct st_peer *peer);

/* The account the connection on SOCK from PEER is counted against
   (slots.h), into ACCOUNT: PEER's uid when the connecting process runs in
   the helper's user namespace; else the owner of the top of its user
   namespace's chain, whose subordinate ids all its uids are (or, when
   root made that namespace, "userns-INODE": that container).  Returns 0,
   or -ESRCH when the process that connected is gone, another -errno, with
   WHY.  */
int st_peer_account (int sock, const struct st_peer *peer, char *account, size_t size,
                     char *why, size_t why_size);

/* What may PEER have of the pinned process?  NS_FD is the descriptor the
   client passed, or -1; PRIVILEGED says whether the helper is.  Returns
   the level (ST_AUTH_CLIENT or ST_AUTH_MAPPED), or -EPERM with WHY.  */
int st_auth_check (const struct st_peer *peer, bool privileged, const struct st_pin *pin,
                   int ns_fd, char *why, size_t why_size);

/* Does PEER still pass the ptrace rule (ST_AUTH_MAPPED) on the pinned
   process, which must still run?  Asked again after map_files was opened:
   between st_auth_check and the open the process may have exec'd a setuid
   program, whose mappings are then in map_files.  The kernel commits an
   exec's credentials (and non-dumpability) before it maps the new program,
   so a check after the open sees any exec whose mappings the open could
   have got.  */
bool st_auth_still_mapped (const struct st_peer *peer, const struct st_pin *pin);
