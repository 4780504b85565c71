/* The namespace helper's protocol, shared by the helper and its client in
 * the core (src/core/resolve/ns-client.c).
 *
 * One SOCK_SEQPACKET connection per client.  Each request and each reply is
 * one message holding one small JSON object with a version field; a reply
 * that carries a file descriptor sends it with SCM_RIGHTS in the same
 * message.  A request may carry one descriptor too: an fd of the target's
 * /proc/PID/ns/mnt that the client opened itself, which proves that it may
 * read the process (see auth.h).  Requests are answered in order, one reply
 * each, malformed ones included.
 *
 *   request  {"v":1,"id":7,"op":"open","pid":1234,"path":"/usr/lib/libc.so.6",
 *             "start":"0x7f0000001000","end":"0x7f0000190000","ino":"0x2a",
 *             "build_id":"3f1a...","start_time":12345,"ways":["map_files"],
 *             "ns_fd":true}
 *            {"v":1,"id":8,"op":"debuginfo","pid":1234,"path":"/app/bin/prog",
 *             "build_id":"3f1a...","debuglink":"prog.debug"}
 *            {"v":1,"id":9,"op":"debug-syscall","syscall":"open-write","in":"resolver"}
 *            (test builds only)
 *   reply    {"v":1,"id":7,"ok":true,"way":"map_files","path":"...","build_id":"..."}
 *            {"v":1,"id":8,"ok":false,"errno":2,"message":"..."}
 *            {"v":1,"id":0,"ok":false,"errno":87,"message":"..."}
 *            (id 0: the connection itself is refused, and ends)
 *
 * 64-bit numbers travel as "0x" hex strings (JSON integers are signed).  */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ST_NSH_VERSION 1
/* The largest message either side sends or accepts.  */
#define ST_NSH_MAX_MESSAGE 8192
/* At most this many descriptors travel with one message.  */
#define ST_NSH_MAX_FDS 4
#define ST_NSH_PATH_MAX 4096
#define ST_NSH_NAME_MAX 256
#define ST_NSH_BUILD_ID_MAX 64
/* Where the system service listens (src/ns-helper/eu-stacktrace-ns-helper.socket).  */
#define ST_NSH_SYSTEM_SOCKET "/run/eu-stacktrace/ns-helper.socket"

enum st_nsh_op {
  ST_NSH_OP_OPEN,           /* the file a process maps */
  ST_NSH_OP_DEBUGINFO,      /* its separate debuginfo, in the same root */
  ST_NSH_OP_DEBUG_SYSCALL,  /* test builds only: make a forbidden syscall */
};

/* The ways to open a file, in the order they are tried.  */
enum st_nsh_way {
  ST_NSH_WAY_MAP_FILES,     /* /proc/PID/map_files/START-END */
  ST_NSH_WAY_OPENAT2,       /* openat2(RESOLVE_IN_ROOT) under /proc/PID/root */
  ST_NSH_WAY_SETNS,         /* a worker that entered the mount namespace */
  ST_NSH_WAY_N
};
#define ST_NSH_WAYS_ALL ((1u << ST_NSH_WAY_N) - 1)

struct st_nsh_request {
  unsigned version;
  uint64_t id;
  enum st_nsh_op op;
  pid_t pid;
  bool has_start_time;      /* field 22 of /proc/PID/stat: which process */
  uint64_t start_time;
  char path[ST_NSH_PATH_MAX];       /* as the process sees it */
  bool has_range;
  uint64_t start, end;
  bool has_ino;
  uint64_t ino;
  uint8_t build_id[ST_NSH_BUILD_ID_MAX];
  size_t build_id_size;
  char debuglink[ST_NSH_NAME_MAX];  /* debuginfo: the .gnu_debuglink name */
  unsigned ways;            /* bit set of enum st_nsh_way allowed */
  bool ns_fd;               /* the message carries the target's ns/mnt fd */
  char syscall[32];         /* debug-syscall: which one */
  char in[16];              /* debug-syscall: in which process (sandbox.h);
                               "" is the parser */
};

struct st_nsh_reply {
  uint64_t id;
  bool ok;
  enum st_nsh_way way;
  char path[ST_NSH_PATH_MAX];       /* where it was found, inside the root */
  uint8_t build_id[ST_NSH_BUILD_ID_MAX];
  size_t build_id_size;
  int error;                /* errno when !ok */
  char message[512];
};

const char *st_nsh_way_name (enum st_nsh_way way);
const char *st_nsh_op_name (enum st_nsh_op op);
/* The op named NAME, or -1.  */
int st_nsh_op_lookup (const char *name);
/* The way named NAME, or -1.  */
int st_nsh_way_lookup (const char *name);

/* Encoders return the message's length, or -ENOSPC / -ENOMEM.  */
int st_nsh_encode_request (const struct st_nsh_request *req, char *buf, size_t size);
int st_nsh_encode_reply (const struct st_nsh_reply *reply, char *buf, size_t size);

/* Decoders check everything: types, ranges, lengths, unknown keys.  They
   return 0, or -EPROTO for another version, or -EINVAL, with WHY (may be
   NULL) saying what is wrong.  The request's id is filled in as soon as it is known, so that
   even an error reply can name the request.  */
struct st_why;
int st_nsh_decode_request (const char *buf, size_t len, struct st_nsh_request *req,
                           struct st_why *why);
int st_nsh_decode_reply (const char *buf, size_t len, struct st_nsh_reply *reply,
                         struct st_why *why);

/* Sends one message with N_FDS descriptors (at most ST_NSH_MAX_FDS).
   Returns 0 or -errno; never raises SIGPIPE.  */
int st_nsh_send (int sock, const void *buf, size_t len, const int *fds, size_t n_fds);
/* The same with sendmsg FLAGS (MSG_DONTWAIT) besides MSG_NOSIGNAL.  */
int st_nsh_send_flags (int sock, const void *buf, size_t len, const int *fds, size_t n_fds,
                       int flags);
/* REPLY, encoded, with FD unless it is -1 (a reply too long for a message
   goes as an EMSGSIZE error without it), sent with FLAGS.  Returns 0 or
   -errno.  */
int st_nsh_send_reply (int sock, const struct st_nsh_reply *reply, int fd, int flags);

/* Flags of a received message.  */
#define ST_NSH_RECV_TRUNCATED 1u  /* longer than the buffer: rest discarded */
#define ST_NSH_RECV_FDS_DROPPED 2u /* more descriptors than wanted: closed */

/* Receives one message into BUF and at most MAX_FDS descriptors (close-on-
   exec) into FDS.  Returns its length (0 for an empty message or the end of
   the connection: see st_nsh_peer_closed) or -errno.  */
ssize_t st_nsh_recv (int sock, void *buf, size_t size, int *fds, size_t max_fds,
                     size_t *n_fds, unsigned *flags);

/* After a 0-length receive: has the peer gone (true) or sent an empty
   message (false)?  */
bool st_nsh_peer_closed (int sock);

/* How long a side that has just sent a request polls for its reply
   before it sleeps in st_nsh_recv: see st_nsh_spin_readable.  */
#define ST_NSH_SPIN_US 300
/* Polls SOCK, without sleeping, until it has something to read (or has
   hung up) or SPIN_US microseconds have passed.  A reply then finds this
   CPU awake: on a VM, waking an idle virtual CPU costs tens of
   microseconds, more than the helper's whole work for a request
   (bench/bench-ns-helper.sh: the client and every helper process on one
   CPU 20-30 us a round trip, spread over two 100-120 us).  */
void st_nsh_spin_readable (int sock, unsigned spin_us);

/* Hex of a build-id into OUT (2 * n + 1 bytes).  */
void st_nsh_hex (const uint8_t *id, size_t n, char *out);
