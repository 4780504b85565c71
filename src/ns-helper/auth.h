/* Who may ask for what.
 *
 * The helper hands out files that only a process allowed to read the
 * target's memory could reach itself, so its rule is the kernel's ptrace
 * read rule, judged on the client's credentials (SO_PEERCRED) rather than
 * its own: root may ask for anything; anyone else for processes whose
 * real, effective and saved uids and gids are the client's and that are
 * dumpable, or for processes in a user namespace that the client owns (or
 * one nested inside such a namespace).  A client may also prove its right
 * by passing a descriptor of the target's /proc/PID/ns/mnt: opening it took
 * the same ptrace read check.  A pidfd would prove nothing (pidfd_open
 * checks no permission), so none is accepted as proof.  */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "ns-helper/pin.h"

struct st_peer {
  pid_t pid;
  uid_t uid;
  gid_t gid;
};

/* The credentials of the process at the other end of SOCK.  */
int st_peer_get (int sock, struct st_peer *peer);

/* May PEER read the pinned process?  NS_FD is the descriptor the client
   passed, or -1.  Returns 0 or -EPERM with WHY.  */
int st_auth_check (const struct st_peer *peer, const struct st_pin *pin, int ns_fd, char *why,
                   size_t why_size);
