/* The connections one user may hold to the system service.
 *
 * systemd's MaxConnectionsPerSource counts per source IP, which a unix
 * socket has none of (systemd 252 documents it for IP only): one user
 * could take every connection the socket allows.  So the helper counts for
 * itself, before it reads anything: each connection of a user who is not
 * root holds an flock on one of ST_SLOTS_PER_UID lock files, DIR/UID.N,
 * in a root-owned 0700 directory; the lock goes with the process, however
 * it ends.  Over the cap, the connection gets one error reply and ends.  */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#define ST_SLOTS_DIR "/run/eu-stacktrace/slots"
#define ST_SLOTS_PER_UID 8

/* Takes a free slot of UID in DIR (created 0700 when missing; refused
   unless it is a directory that root owns and only root may enter).
   Returns the descriptor that holds it (keep it open, close-on-exec), or
   -EUSERS when all are taken, or another -errno, with WHY.  */
int st_slot_take (const char *dir, uid_t uid, unsigned max, char *why, size_t why_size);
