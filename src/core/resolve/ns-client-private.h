/* Inside the namespace helper's client: the state that ns-client.c (the
 * cache and the requests) and ns-connection.c (the connection to a helper,
 * spawned or the system service's) share.  Nothing else includes it.  */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "basic/why.h"
#include "ns-helper/protocol.h"

#define HELPER_NAME "eu-stacktrace-ns-helper"
/* A helper that keeps dying is a bug to report, not to retry forever.  */
#define MAX_RESTARTS 3
/* No request takes long (a few opens and reads of ELF headers): a helper
   silent for this long is stuck, on a hung file system for instance.  */
#define REPLY_TIMEOUT_S 5

enum mode {
  MODE_AUTO,
  MODE_SPAWN,
  MODE_SOCKET,
};

struct st_ns_client {
  pthread_mutex_t lock;
  enum mode mode;
  char *socket_path;           /* MODE_SOCKET */
  unsigned ways;               /* EU_STACKTRACE_NS_HELPER_WAYS, or all */
  bool root;
  /* The connection.  */
  int sock;                    /* -1: none yet, or lost */
  pid_t child;                 /* a spawned helper, or -1 */
  char *connected_to;          /* for messages: the socket, or the helper spawned */
  unsigned restarts;           /* connections lost */
  unsigned reconnects;         /* connections the service closed while idle */
  bool disabled;
  struct st_why disabled_why;
  uint64_t next_id;
  struct st_hashmap *cache;    /* key (see cache_key) -> struct answer */
  /* The answers asked for last are kept, ST_NS_CACHE_KEPT of them: each
     distinct path a user's processes map (unshare -Urm, then copies or
     hard links) was one more answer and descriptor, for the whole run.  */
  uint64_t clock;
  size_t cache_sweep_at;       /* above this many answers, forget some */
  uint64_t forgotten;
  /* --stats  */
  uint64_t requests, found, not_found, failed, by_way[ST_NSH_WAY_N];
  uint64_t prefetched, prefetches;   /* files found ahead, in batches */
  uint64_t *rtt_ns;            /* every round trip, for the median and p99 */
  size_t n_rtt, cap_rtt;
  /* The first reply of a connection waits for the helper to start: it is
     counted apart.  */
  bool fresh;
  uint64_t startup_ns;
};

/* One request and its reply.  Returns 0 with REPLY (and *FD when it
   carried one), or -errno with WHY when the connection failed (then
   dropped).  C's lock is held.  */
int st_ns_round_trip (struct st_ns_client *c, struct st_nsh_request *req, int ns_fd,
                      struct st_nsh_reply *reply, int *fd, struct st_why *why);
/* Requests in flight at once in st_ns_round_trips.  The helper refuses a
   descriptor while more than 4 KiB of replies wait unread (opener.c); a
   few small replies stay under that.  */
#define ST_NS_PIPELINE_WINDOW 3
/* REQS[0..N) (ids given here) to a spawned helper, up to
   ST_NS_PIPELINE_WINDOW in flight: each request then overlaps the
   helper's work on the ones before, instead of waiting for a wakeup of
   each of its processes.  It relies on the protocol's order: a
   well-formed request is answered in turn (only the parser's answers to
   malformed ones may overtake).  Returns how many replies were read, in
   order, each in REPLIES[i] with FDS[i] (-1 for none).  A request that
   does not encode ends the sending, not the connection.  A failure of the
   connection drops it, as a failed round trip does, and counts as one,
   with WHY; *LOST is set when it failed with a request in flight: the
   one after the last answered, which the helper was working on.  Every reply's wait is recorded as a round trip; the
   caller counts the requests it keeps.  0 when not connected to a spawned
   helper (a service's connection is asked one request at a time).  C's
   lock is held.  */
size_t st_ns_round_trips (struct st_ns_client *c, struct st_nsh_request *reqs, size_t n,
                          struct st_nsh_reply *replies, int *fds, bool *lost,
                          struct st_why *why);
/* Connects, or spawns the helper, unless it is connected already or was
   given up on: 0, or -errno with WHY, and then the helper is given up on
   for the rest of the run.  EARLY (no request waits for it): only spawns,
   never connects to a service (which hangs up on a connection idle for a
   while, and counts it against the user's slots), and gives up on
   nothing.  C's lock is held.  */
int st_ns_connect (struct st_ns_client *c, bool early, struct st_why *why);
/* Closes the connection; waits for a spawned helper (killed first when
   KILL_CHILD).  */
void st_ns_disconnect (struct st_ns_client *c, bool kill_child);
