/* The privileged side of the helper, and the one fixed operation it
 * understands (bubblewrap's privileged_op shape).
 *
 * The parser (parser.h) reads and decodes what the client sends, holding
 * no capability, and turns each request into one struct st_op, sent over
 * a socketpair with at most one descriptor (the client's proof, auth.h).
 * The opener checks the op field by field as if the client had written
 * it (a parser the client took over could have), then pins the process,
 * judges the client by credentials it took from the kernel before the
 * parser was forked, opens by the ways allowed (open-ways.h), checks the
 * file (check.h) and answers: the reply and the descriptor go to the
 * client itself, on the client's socket, which the opener keeps for that
 * and never reads (its seccomp filter refuses read and recvmsg on it),
 * so that a reply takes one hop less than through the parser; only the
 * test builds' raw ops (a parser taken over) get a struct st_op_result
 * back.  */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ns-helper/auth.h"
#include "ns-helper/broker.h"
#include "ns-helper/pin.h"
#include "ns-helper/pool.h"
#include "ns-helper/protocol.h"

#define ST_OP_MAGIC 0x4e534f31u   /* "NSO1" */

enum st_op_kind {
  ST_OP_OPEN,
  ST_OP_DEBUGINFO,
  ST_OP_TRY,                /* test builds: a forbidden call in process "in" */
  ST_OP_N
};

struct st_op {
  uint32_t magic;
  uint32_t op;              /* enum st_op_kind */
  int32_t pid;
  uint32_t ways;            /* bit set of enum st_nsh_way */
  uint8_t has_start_time, has_range, ns_fd, build_id_size;
  uint64_t start_time, start, end;
  uint8_t build_id[ST_NSH_BUILD_ID_MAX];
  char path[ST_NSH_PATH_MAX];
  char debuglink[ST_NSH_NAME_MAX];
  char syscall[32];
  char in[16];
  uint64_t id;              /* the request's, for the reply */
  uint32_t direct;          /* 1: the opener replies to the client (below) */
};

struct st_op_result {
  uint32_t magic;
  int32_t error;            /* 0, or the errno */
  uint32_t way;             /* enum st_nsh_way, when found */
  uint32_t build_id_size;
  uint8_t build_id[ST_NSH_BUILD_ID_MAX];
  char path[ST_NSH_PATH_MAX];
  char message[512];
};

/* The parser's side: REQ (decoded) as an op.  */
void st_op_from_request (const struct st_nsh_request *req, struct st_op *op);

/* The parser's side: sends OP (with NS_FD unless -1), whose reply the
   opener sends the client itself (OP->direct).  Returns 0 or -errno (the
   opener is gone).  */
int st_op_send (int sock, const struct st_op *op, int ns_fd);

struct st_opener {
  int sock;                 /* to the parser */
  int client;               /* the client's socket, written only; -1: none */
  pid_t parser;
  struct st_peer peer;      /* from the kernel, before the parser was forked */
  bool privileged;
  struct st_pins pins;
  struct st_broker resolver;
  struct st_broker broker;
  struct st_pool pool;      /* the broker's namespace workers */
  int fd_dir;               /* O_PATH of its own /proc/self/fd (check.h) */
};

/* Serves the parser's ops until it hangs up; then exits (with 128 + the
   signal when the parser was killed by one, so that it shows).  */
void st_opener_serve (struct st_opener *o) __attribute__ ((noreturn));
