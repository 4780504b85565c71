/* The connections one user may hold to the system service.
 *
 * systemd's MaxConnectionsPerSource counts per source IP, which a unix
 * socket has none of (systemd 252 documents it for IP only): one user
 * could take every connection the socket allows.  So the helper counts for
 * itself, before it reads anything: each connection of a user who is not
 * root holds an flock on one of ST_SLOTS_PER_UID lock files, DIR/UID.N,
 * in a root-owned 0700 directory; the lock goes with the process, however
 * it ends.  Over the cap, the connection gets one error reply and ends.
 *
 * A user is counted as the account that owns the connecting process
 * (auth.h, st_peer_account), not by the uid the kernel reports: a user
 * with subordinate ids (/etc/subuid, newuidmap) runs processes of 65536
 * uids in a user namespace it owns, and would otherwise get 8 connections
 * for each of them: every connection of the socket, and a lock file per
 * uid in /run.  */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define ST_SLOTS_DIR "/run/eu-stacktrace/slots"
#define ST_SLOTS_PER_UID 8

/* Takes a free slot of ACCOUNT (st_peer_account in auth.h: a uid, or
   "userns-INODE") in DIR (created 0700 when missing; refused unless it is
   a directory that root owns and only root may enter).  Returns the
   descriptor that holds it (keep it open, close-on-exec), or -EUSERS when
   all are taken, or another -errno, with WHY.  */
int st_slot_take (const char *dir, const char *account, unsigned max, char *why,
                  size_t why_size);
